//! The fields of a `perf script` line, parsed in place: hex and decimal numbers, pids,
//! whitespace-separated tokens, and the branch entries `FROM/TO/M/X/A/CYCLES/TYPE` (a fast
//! path that decodes the two addresses 16 hex digits at a time, and the general one).

use crate::sample::BranchEntry;

pub(super) fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', r @ ..] = s {
        s = r;
    }
    while let [r @ .., b' ' | b'\t'] = s {
        s = r;
    }
    s
}

/// Hex digits with an optional `0x`, no overflow.
pub(super) fn hex(s: &[u8]) -> Option<u64> {
    let d = s.strip_prefix(b"0x").unwrap_or(s);
    if d.is_empty() || d.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &c in d {
        let x = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = v << 4 | u64::from(x);
    }
    Some(v)
}

pub(super) fn dec(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    s.iter().try_fold(0u64, |v, &c| {
        c.is_ascii_digit().then(|| v * 10 + u64::from(c - b'0'))
    })
}

/// A pid as printed: decimal, or -1 (kernel) as `u32::MAX`.
pub(super) fn pid(s: &[u8]) -> Option<u32> {
    if s == b"-1" {
        return Some(u32::MAX);
    }
    dec(s).and_then(|v| u32::try_from(v).ok())
}

/// Whitespace-separated tokens with their start offsets.
#[derive(Clone)]
pub(super) struct Tokens<'s> {
    s: &'s [u8],
    /// Where the next token search starts (the sample parser skips ahead by hand).
    pub(super) i: usize,
}

pub(super) fn tokens(s: &[u8]) -> Tokens<'_> {
    Tokens { s, i: 0 }
}

impl<'s> Iterator for Tokens<'s> {
    type Item = (usize, &'s [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        let s = self.s;
        let mut i = self.i;
        while i < s.len() && (s[i] == b' ' || s[i] == b'\t') {
            i += 1;
        }
        if i >= s.len() {
            self.i = i;
            return None;
        }
        let start = i;
        while i < s.len() && s[i] != b' ' && s[i] != b'\t' {
            i += 1;
        }
        self.i = i;
        Some((start, &s[start..i]))
    }
}

pub(super) fn branch_type(name: &[u8]) -> u8 {
    use crate::consts::br_type::*;
    match name {
        b"COND" => COND,
        b"UNCOND" => UNCOND,
        b"IND" => IND,
        b"CALL" => CALL,
        b"IND_CALL" => IND_CALL,
        b"RET" => RET,
        b"SYSCALL" => SYSCALL,
        b"SYSRET" => SYSRET,
        b"COND_CALL" => COND_CALL,
        b"COND_RET" => COND_RET,
        b"ERET" => ERET,
        b"IRQ" => IRQ,
        b"SERROR" => SERROR,
        b"NO_TX" => NO_TX,
        b"EXTEND_ABI" => EXTEND_ABI,
        _ => UNKNOWN,
    }
}

/// Hex digit values; 0xff for anything else.
pub(super) static HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// `0x` then hex digits up to the next `/` or the end, from `tok[i..]`: the
/// value and the index just past the `/` (or the end).
#[inline]
pub(super) fn hex_field(tok: &[u8], i: usize) -> Option<(u64, usize)> {
    let d = tok.get(i..)?.strip_prefix(b"0x")?;
    let mut v = 0u64;
    let mut n = 0;
    while n < d.len() {
        let x = HEX[d[n] as usize];
        if x == 0xff {
            if d[n] == b'/' {
                break;
            }
            return None;
        }
        v = v << 4 | u64::from(x);
        n += 1;
    }
    if n == 0 || n > 16 {
        return None;
    }
    Some((v, (i + 2 + n + 1).min(tok.len())))
}

/// `0xFROM/0xTO[/M|P|-[/X|-[/A|-[/CYCLES[/TYPE[/...]]]]]]`: `None` when `tok`
/// is not a branch record at all (no `0xHEX/` start), else the record or why
/// it is malformed.
///
/// This is the hot loop of reading perf script text (32 tokens a line, two
/// million lines in a large profile): one walk over the bytes, a table for hex
/// digits, flags read in place: faster than split iterators (docs/performance.md).
#[inline]
pub(super) fn parse_branch(tok: &[u8]) -> Option<Result<BranchEntry, String>> {
    let (from, i) = hex_field(tok, 0)?;
    if tok.get(i.wrapping_sub(1)) != Some(&b'/') || i > tok.len() {
        return None;
    }
    let Some((to, mut i)) = hex_field(tok, i) else {
        return Some(Err(format!(
            "branch {:?} has no hex target address (symbolized `brstacksym` output is not read; use -F brstack)",
            String::from_utf8_lossy(tok)
        )));
    };
    let mut fields = [&b""[..]; 5];
    for f in fields.iter_mut() {
        if i >= tok.len() {
            break;
        }
        let end = tok[i..]
            .iter()
            .position(|&c| c == b'/')
            .map_or(tok.len(), |p| i + p);
        *f = &tok[i..end];
        i = end + 1;
    }
    let [m, x, a, c, t] = fields;
    let cycles = if c.is_empty() {
        0
    } else {
        dec(c).map_or(0, |v| v.min(u64::from(u16::MAX)) as u16)
    };
    let ty = if t.is_empty() { 0 } else { branch_type(t) };
    Some(Ok(BranchEntry {
        from,
        to,
        flags: BranchEntry::make_flags(m == b"M", m == b"P", x == b"X", a == b"A", cycles, ty),
    }))
}

/// `0x` then 1 to 16 hex digits then `/`, at `s[i..]`: the value and the index past the `/`.
#[inline(always)]
pub(super) fn hex_slash(s: &[u8], i: usize) -> Option<(u64, usize)> {
    if s.get(i..i + 2)? != b"0x" {
        return None;
    }
    let d = i + 2;
    if let Some(w) = s.get(d..d + 16) {
        return swar_hex_slash(w.try_into().unwrap(), s.get(d + 16).copied())
            .map(|(v, n)| (v, d + n + 1));
    }
    hex_slash_plain(s, d)
}

/// The hex digits at `s[d..]` up to a `/`, one digit at a time: the short-line path, and
/// the reference the 16-digit decoder is tested against. Returns the value and the index
/// after the `/`.
pub(super) fn hex_slash_plain(s: &[u8], d: usize) -> Option<(u64, usize)> {
    let mut j = d;
    let mut v = 0u64;
    while let Some(&c) = s.get(j) {
        let x = HEX[c as usize];
        if x == 0xff {
            break;
        }
        v = v << 4 | u64::from(x);
        j += 1;
    }
    let n = j - d;
    (n > 0 && n <= 16 && s.get(j) == Some(&b'/')).then_some((v, j + 1))
}

/// [`hex_slash`] on 16 bytes at once (and the byte after them): the value of the hex digits
/// before the first `/` and their number, when there are 1 to 16 and all are hex digits.
/// Branch addresses are two thirds of a `perf script -F brstack` line; digit by digit
/// (table, compare, shift) they were the largest cost of reading the text.
#[inline(always)]
pub(super) fn swar_hex_slash(w: [u8; 16], after: Option<u8>) -> Option<(u64, usize)> {
    const ONES: u128 = u128::MAX / 255;
    const HIGH: u128 = ONES * 0x80;
    let x = u128::from_le_bytes(w);
    // High bit of each byte: the byte is `/`.
    let slash = {
        let y = x ^ (ONES * b'/' as u128);
        // Exact zero-byte test (no false positives from borrows).
        !(((y & !HIGH) + !HIGH) | y) & HIGH
    };
    let n = if slash != 0 {
        (slash.trailing_zeros() / 8) as usize
    } else if after == Some(b'/') {
        16
    } else {
        return None;
    };
    if n == 0 {
        return None;
    }
    // High bit of each byte: the byte is a hex digit (0-9, a-f, A-F). Bytes below 0x80
    // plus at most 0x50 carry into no other byte.
    let ascii = !x & HIGH;
    let low = x & !HIGH;
    let ge = |c: u8| low + ONES * (0x80 - c as u128);
    let digit = ge(b'0') & !ge(b'9' + 1);
    let folded = low | (ONES * 0x20);
    let gef = |c: u8| folded + ONES * (0x80 - c as u128);
    let alpha = gef(b'a') & !gef(b'f' + 1);
    let hexd = (digit | alpha) & ascii & HIGH;
    let want = if n == 16 {
        HIGH
    } else {
        HIGH & ((1u128 << (8 * n)) - 1)
    };
    if hexd & want != want {
        return None;
    }
    // Nibble values, then the first n packed most significant first.
    let nib = (x & (ONES * 0x0f)) + ((x >> 6) & ONES) * 9;
    let mut v = nib.swap_bytes() >> (8 * (16 - n));
    v = (v | (v >> 4)) & (u128::MAX / 0xffff * 0x00ff);
    v = (v | (v >> 8)) & (u128::MAX / 0xffff_ffff * 0xffff);
    v = (v | (v >> 16)) & (u128::MAX / u128::from(u64::MAX) * 0xffff_ffff);
    v = (v | (v >> 32)) & u128::from(u64::MAX);
    Some((v as u64, n))
}

/// The branch record starting at `s[i]` when it has the usual shape (two addresses with
/// their `/`): the record and the index where its token ends. `None`: let
/// [`parse_branch`] decide on the token (not a record, or malformed). The same result
/// as `parse_branch` on the token, without splitting the line into tokens first: this
/// single walk reads text faster than tokens + `parse_branch` (docs/performance.md).
#[inline]
pub(super) fn fast_branch(
    s: &[u8],
    i: usize,
    addresses_only: bool,
) -> Option<(BranchEntry, usize)> {
    let (from, j) = hex_slash(s, i)?;
    let (to, mut j) = hex_slash(s, j)?;
    if addresses_only {
        // The flags run to the end of the token.
        let end = match s.get(j..j + 16) {
            Some(w) => {
                const ONES: u128 = u128::MAX / 255;
                const HIGH: u128 = ONES * 0x80;
                let x = u128::from_le_bytes(w.try_into().unwrap());
                let zero = |y: u128| !(((y & !HIGH) + !HIGH) | y) & HIGH;
                let ws = zero(x ^ (ONES * b' ' as u128)) | zero(x ^ (ONES * b'\t' as u128));
                (ws != 0).then(|| j + (ws.trailing_zeros() / 8) as usize)
            }
            None => None,
        };
        let end = end.unwrap_or_else(|| {
            j + s[j..]
                .iter()
                .position(|&c| c == b' ' || c == b'\t')
                .unwrap_or(s.len() - j)
        });
        return Some((BranchEntry { from, to, flags: 0 }, end));
    }
    let mut fields = [&b""[..]; 5];
    let mut open = true; // the token goes on after the last `/`
    for f in fields.iter_mut() {
        let start = j;
        while j < s.len() && !matches!(s[j], b'/' | b' ' | b'\t') {
            j += 1;
        }
        *f = &s[start..j];
        if s.get(j) == Some(&b'/') {
            j += 1;
        } else {
            open = false;
            break;
        }
    }
    if open {
        // Fields after the fifth are not read.
        while j < s.len() && !matches!(s[j], b' ' | b'\t') {
            j += 1;
        }
    }
    let [m, x, a, c, t] = fields;
    let cycles = if c.is_empty() {
        0
    } else {
        dec(c).map_or(0, |v| v.min(u64::from(u16::MAX)) as u16)
    };
    let ty = if t.is_empty() { 0 } else { branch_type(t) };
    Some((
        BranchEntry {
            from,
            to,
            flags: BranchEntry::make_flags(m == b"M", m == b"P", x == b"X", a == b"A", cycles, ty),
        },
        j,
    ))
}
