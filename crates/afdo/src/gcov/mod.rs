//! GCC's AutoFDO profile: the gcov-based file that `gcc -fauto-profile=FILE`
//! reads (GCC's reader is `gcc/auto-profile.cc`, its primitives
//! `gcc/gcov-io.{h,cc}`; the facts below are from the GCC 11.3 and 12.2
//! sources and were checked against the compilers themselves).
//!
//! Layout, every word a little-endian `u32` (x86: GCC reads host order),
//! every counter two words, low then high (a signed `gcov_type` in GCC):
//!
//! ```text
//! magic 0x67636461 ("gcda")   version   0 (stamp, ignored)
//! 0xaa000000 len  n  string * n                       string table
//! 0xac000000 len  n  (head counter, instance) * n     function profiles
//! 0xae000000 len  0                                   module section (must count 0)
//! instance: name index, #positions, #callsites,
//!           (offset, #targets, count counter, (type, name index counter, count counter) * #targets) * #positions,
//!           (offset, instance) * #callsites
//! ```
//!
//! Offsets are `(line - decl line) << 16 | discriminator`. The version is
//! GCC's `AUTO_PROFILE_VERSION` (not the `.gcda` `GCOV_VERSION` derived from
//! the version string): 1 up to GCC 11, 2 from GCC 12, which changed how
//! strings are stored (see [`GcovVersion`]). A mismatch is a hard error in
//! the compiler ("AutoFDO profile version 1 does not match 2").
//!
//! What GCC 11 and 12 do with the numbers shapes what is written
//! ([`gcc_view`]): they look positions up by line offset alone (the reader
//! masks the discriminator off, and a later entry of the same line replaces
//! an earlier one; call sites are matched without one), they cut every name
//! at its first '.' (so `foo.constprop.0` and `foo.part.0` are `foo`), they
//! compute each function's total as the sum of the position counts of it and
//! its inlinees (no total is stored) and store a head count only for
//! top-level functions. The section lengths are not read by GCC; they are
//! written in the release's unit (words for 11, bytes for 12) and not checked
//! on reading.

mod fold;
mod reader;
mod writer;

pub use fold::{gcc_name, gcc_view};
pub use reader::{parse_gcov, read_gcov};
pub use writer::write_gcov;

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
