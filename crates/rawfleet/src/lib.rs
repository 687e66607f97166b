//! kfdo's unsymbolized branch counts as Parquet, for fleets.
//!
//! A host writes one file per binary and recording (`kfdo profile --raw-out`); files of
//! many hosts merge exactly, streaming, into one (`kfdo merge-raw`, or the fleet's Spark
//! job, which follows the same contract); a merged file converts into any profile kfdo
//! writes (`kfdo profile --from-raw`). One job per module:
//!
//! - [`schema`]: columns, types, footer keys, schema version.
//! - [`input`]: a file to read and the name messages give it (its path, or the
//!   `s3://` URL it was downloaded from).
//! - [`write`]: writing a file whole or not at all, rows sorted.
//! - [`columns`]: checking one record batch against the contract, column by column.
//! - [`runs`]: sorted runs of packed keys and counts, and their merge.
//! - [`read`]: reading one batch at a time, with errors that name the file, the place
//!   and the fix.
//! - [`profile`]: rows to and from kfdo's [`kfdo_aggregate::RawProfile`].
//! - [`merge`]: selection, host caps and class weights in exact integer arithmetic.
//! - [`dump`]: the canonical text form (compared byte for byte with Spark's output).
//! - [`split`]: one recording as a simulated fleet of hosts (tests and benches).
//!
//! # Layers
//!
//! Each module uses only the layers below it; modules in one layer are
//! independent of each other (the `layering` test checks every `crate::` /
//! `super::` path against this list):
//!
//! 1. `error` ([`RawError`]), `input` ([`RawInput`]), `schema` (the columns and file
//!    metadata).
//! 2. `columns`, `profile`, `runs`, `write`: a batch checked, rows to and from a raw
//!    profile, sorted runs, a file written.
//! 3. `read`: a file read, checked batch by batch.
//! 4. `dump`, `merge`, `split`: whole-file operations.
//! 5. `tests` (unit tests across the layers).

pub mod columns;
pub mod dump;
mod error;
pub mod input;
pub mod merge;
pub mod profile;
pub mod read;
pub mod runs;
pub mod schema;
pub mod split;
pub mod write;

pub use error::RawError;
pub use input::RawInput;
pub use schema::{FileInfo, Row, RowKind, SCHEMA_VERSION};

#[cfg(test)]
mod tests;

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
