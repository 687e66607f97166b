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
mod layout;
mod reader;
mod writer;

pub use fold::{gcc_name, gcc_view};
pub use layout::{
    has_magic, stored_version, GcovVersion, GCOV_DATA_MAGIC, HIST_TYPE_INDIR_CALL, TAG_FILE_NAMES,
    TAG_FUNCTION, TAG_MODULE_GROUPING, TAG_WORKING_SET,
};
pub use reader::{parse_gcov, read_gcov};
pub use writer::write_gcov;
