//! Bounds-checked little-endian reads from file bytes. Every read of file data goes through
//! here, so that no input can index out of bounds or overflow an offset computation.

/// Reads a `u16` at `off`, or `None` past the end.
#[inline(always)]
pub(crate) fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    let s = b.get(off..off.checked_add(2)?)?;
    Some(u16::from_le_bytes([s[0], s[1]]))
}

#[inline(always)]
pub(crate) fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    let s = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes(s.try_into().ok()?))
}

#[inline(always)]
pub(crate) fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    let s = b.get(off..off.checked_add(8)?)?;
    Some(u64::from_le_bytes(s.try_into().ok()?))
}

/// `len` bytes at `off`, or `None` if they are not all there.
#[inline(always)]
pub(crate) fn slice_at(b: &[u8], off: usize, len: usize) -> Option<&[u8]> {
    b.get(off..off.checked_add(len)?)
}

/// A NUL-terminated (or NUL-padded) string field: the bytes before the first NUL.
pub(crate) fn cstr(b: &[u8]) -> &[u8] {
    match memchr::memchr(0, b) {
        Some(n) => &b[..n],
        None => b,
    }
}

/// Best-effort `&str` of a path or name without copying: the whole field when it is UTF-8
/// (the usual case), else its longest UTF-8 prefix. The exact bytes are always kept beside it.
pub(crate) fn str_prefix(b: &[u8]) -> &str {
    match std::str::from_utf8(b) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&b[..e.valid_up_to()]).unwrap_or(""),
    }
}

/// A forward cursor over one record's body. Reads return `None` past the end; callers turn
/// that into a `Truncated` error naming the field and the offset.
#[derive(Clone, Copy)]
pub(crate) struct Cursor<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    #[inline(always)]
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }
    #[inline(always)]
    pub(crate) fn u64(&mut self) -> Option<u64> {
        let v = u64_at(self.buf, self.pos)?;
        self.pos += 8;
        Some(v)
    }
    #[inline(always)]
    pub(crate) fn u32(&mut self) -> Option<u32> {
        let v = u32_at(self.buf, self.pos)?;
        self.pos += 4;
        Some(v)
    }
    #[inline(always)]
    pub(crate) fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = slice_at(self.buf, self.pos, n)?;
        self.pos += n;
        Some(s)
    }
    /// `n` u64 words, with the multiplication checked (n comes from the file).
    #[inline(always)]
    pub(crate) fn words(&mut self, n: u64) -> Option<&'a [u8]> {
        let len = usize::try_from(n).ok()?.checked_mul(8)?;
        self.bytes(len)
    }
    #[inline(always)]
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }
}
