//! kfdo-convert: `kfdo profile` and `kfdo show` as typed calls.
//!
//! A conversion checks everything it can before reading (the request, the binary, the
//! format's own options), reads the recordings (perf.data, `perf script` text,
//! unsymbolized text, raw Parquet files) once into one raw profile of the binary
//! (`kfdo-aggregate`: which samples are the binary's, range and branch counts), then
//! hands it to the writer of what was asked for: the unsymbolized text, an AutoFDO
//! sample profile symbolized with DWARF (`kfdo-afdo`), Propeller's profiles, or one
//! host's raw Parquet file ([`Output`]). BOLT's writer reads perf.data on its own terms.
//! A new profile format is a writer in its own file and one more [`OutputFormat`] here.
//!
//! # Layers
//!
//! Each module uses only the layers below it (the `layering` test checks every
//! `crate::` / `super::` path against this list):
//!
//! 1. `request` ([`Input`], [`OutputFormat`], [`Output`], [`ProfileRequest`]), `error`
//!    ([`ProfileError`]) and `show` (`kfdo show`, with [`ShowError`]): the vocabulary.
//! 2. `outcome` ([`ProfileOutcome`] and the BOLT and Propeller summaries), `arch_check`
//!    (recordings against the binary's architecture), `stripped` (a binary without
//!    symbols, refused), `parquet_input` (`--from-raw`, and the IP-only mode its
//!    recorder implies), `show_bb_addr_map`, `built_by` (the compiler that built a
//!    binary, [`Compiler`]): what is built from the vocabulary alone.
//! 3. `read` (the read step: every input of a request read into one raw profile),
//!    `gcov` (which GCC a gcov profile is for, and why).
//! 4. `autofdo` (LLVM text / extbinary, gcov), `unsymbolized` (llvm-profgen's
//!    unsymbolized text), `bolt`, `propeller` and `raw_out` (`--raw-out`'s raw Parquet
//!    file): the writers, independent of each other.
//! 5. `profile`: the checks every writer shares, the read, and one `match` on the
//!    output ([`convert`]).
//!
//! `lib.rs` only re-exports.

mod arch_check;
mod autofdo;
mod bolt;
mod built_by;
mod error;
mod gcov;
mod outcome;
mod parquet_input;
mod profile;
mod propeller;
mod raw_out;
mod read;
mod request;
mod show;
mod show_bb_addr_map;
mod stripped;
mod unsymbolized;

pub use built_by::built_by;
pub use error::ProfileError;
pub use gcov::gcc_major_on_path;
/// The compiler release that built a binary ([`built_by`]).
pub use kfdo_elf::Compiler;
pub use outcome::{
    BoltSummary, GccRelease, GccSource, ModuleOutcome, ProfileOutcome, PropellerSummary,
};
pub use profile::{convert, profile, write_raw_parquet, Converted};
pub use propeller::propeller_paths;
pub use raw_out::RawOutOutcome;
pub use request::{Input, Output, OutputFormat, ProfileRequest, RawOut};
pub use show::{show, ShowError};
pub use show_bb_addr_map::show_bb_addr_map;

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
