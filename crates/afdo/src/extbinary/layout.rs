//! The format's fixed numbers (magic, version, section types and flags) and
//! the ULEB128 encoding every other integer uses.

/// `SPMagic(SPF_Ext_Binary)`: "SPROF42" followed by the format byte 0x04.
pub const MAGIC_EXT_BINARY: u64 = (b'S' as u64) << 56
    | (b'P' as u64) << 48
    | (b'R' as u64) << 40
    | (b'O' as u64) << 32
    | (b'F' as u64) << 24
    | (b'4' as u64) << 16
    | (b'2' as u64) << 8
    | 0x04;
/// `SPMagic(SPF_Binary)` (the older, non-extensible binary format).
pub const MAGIC_BINARY: u64 = (MAGIC_EXT_BINARY & !0xff) | 0xff;
/// `SPVersion()`.
pub const VERSION: u64 = 103;

/// Section types (`SecType`).
pub mod sec {
    pub const PROF_SUMMARY: u64 = 1;
    pub const NAME_TABLE: u64 = 2;
    pub const PROFILE_SYMBOL_LIST: u64 = 3;
    pub const FUNC_OFFSET_TABLE: u64 = 4;
    pub const FUNC_METADATA: u64 = 5;
    pub const CS_NAME_TABLE: u64 = 6;
    pub const LBR_PROFILE: u64 = 0x20;
}

/// Section flags. Common flags are in the low 32 bits, section-specific
/// flags in the high 32 bits (as `addSecFlag` stores them).
pub mod flags {
    pub const COMPRESS: u64 = 1;
    pub const FLAT: u64 = 2;
    pub const NAME_MD5: u64 = 1 << 32;
    pub const NAME_FIXED_LENGTH_MD5: u64 = 2 << 32;
    pub const NAME_UNIQ_SUFFIX: u64 = 4 << 32;
    /// Of the summary section: the profile's discriminators are flow-sensitive.
    pub const SUMMARY_FS_DISCRIMINATOR: u64 = 4 << 32;
}

/// Whether `data` starts with the extbinary magic number (or, for input
/// shorter than it, with a prefix of it: a truncated extbinary file).
pub fn has_magic(data: &[u8]) -> bool {
    let mut m = Vec::with_capacity(10);
    put_uleb(&mut m, MAGIC_EXT_BINARY);
    let n = data.len().min(m.len());
    n > 0 && data[..n] == m[..n]
}

pub(crate) fn put_uleb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}
