//! The file's fixed words: the magic, the section tags, the value-profile type,
//! and the `AUTO_PROFILE_VERSION` that decides how strings are stored.

/// `GCOV_DATA_MAGIC`, "gcda".
pub const GCOV_DATA_MAGIC: u32 = 0x6763_6461;
/// `GCOV_TAG_AFDO_FILE_NAMES`: the string table.
pub const TAG_FILE_NAMES: u32 = 0xaa00_0000;
/// `GCOV_TAG_AFDO_FUNCTION`: the function profiles.
pub const TAG_FUNCTION: u32 = 0xac00_0000;
/// The module section's tag (GCC does not check it; AutoFDO's tools write
/// this one). Only LIPO used modules; GCC asserts their count is 0.
pub const TAG_MODULE_GROUPING: u32 = 0xae00_0000;
/// `GCOV_TAG_AFDO_WORKING_SET`: written by old tools, read by neither GCC 11
/// nor GCC 12 (they stop after the module section).
pub const TAG_WORKING_SET: u32 = 0xaf00_0000;
/// The value-profile type written before each call target. GCC 11/12 read
/// and ignore it (only indirect-call targets are supported); AutoFDO's
/// create_gcov writes GCC's `HIST_TYPE_INDIR_CALL`, which is 3 in GCC 11/12.
pub const HIST_TYPE_INDIR_CALL: u32 = 3;

/// Which `AUTO_PROFILE_VERSION` a file has, named by the GCC release that
/// reads it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum GcovVersion {
    /// Version 1 (GCC 5 to 11): a string is its length in 4-byte words, then
    /// the bytes, NUL-terminated and NUL-padded to whole words.
    Gcc11,
    /// Version 2 (GCC 12): a string is its length in bytes, the NUL included,
    /// then exactly those bytes, unpadded.
    Gcc12,
}

impl GcovVersion {
    /// The version GCC release `major` reads. Only the releases verified
    /// against their compilers are offered.
    pub fn for_gcc(major: u32) -> Result<GcovVersion, String> {
        match major {
            11 => Ok(GcovVersion::Gcc11),
            12 => Ok(GcovVersion::Gcc12),
            _ => Err(format!(
                "GCC {major} is not supported for --format gcov: only GCC 11 (AutoFDO profile \
                 version 1) and GCC 12 (version 2) are, the releases whose readers were checked; \
                 give --gcc-version 11 or 12 and build with that gcc"
            )),
        }
    }

    /// The version for the number stored in a file.
    pub fn from_number(v: u32) -> Option<GcovVersion> {
        match v {
            1 => Some(GcovVersion::Gcc11),
            2 => Some(GcovVersion::Gcc12),
            _ => None,
        }
    }

    /// `AUTO_PROFILE_VERSION` as stored in the file.
    pub fn number(self) -> u32 {
        match self {
            GcovVersion::Gcc11 => 1,
            GcovVersion::Gcc12 => 2,
        }
    }

    /// The GCC major release this version is named after.
    pub fn gcc_major(self) -> u32 {
        match self {
            GcovVersion::Gcc11 => 11,
            GcovVersion::Gcc12 => 12,
        }
    }

    /// Which GCC releases read it, for messages.
    pub fn releases(self) -> &'static str {
        match self {
            GcovVersion::Gcc11 => "GCC 11 (and GCC 5 to 10)",
            GcovVersion::Gcc12 => "GCC 12",
        }
    }
}

/// Whether `data` starts with the gcda magic in little-endian order (what GCC
/// on x86 reads).
pub fn has_magic(data: &[u8]) -> bool {
    data.len() >= 4 && u32::from_le_bytes([data[0], data[1], data[2], data[3]]) == GCOV_DATA_MAGIC
}

/// The version number stored after the magic, if the file is long enough.
pub fn stored_version(data: &[u8]) -> Option<u32> {
    let w = data.get(4..8)?;
    Some(u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}
