//! kfdo's unsymbolized branch counts as Parquet, for fleets.
//!
//! A host writes one file per binary and recording (`kfdo profile --raw-out`); files of
//! many hosts merge exactly, streaming, into one (`kfdo merge-raw`, or the fleet's Spark
//! job, which follows the same contract); a merged file converts into any profile kfdo
//! writes (`kfdo profile --from-raw`). One job per module:
//!
//! - [`schema`]: columns, types, footer keys, schema version.
//! - [`write`]: writing a file whole or not at all, rows sorted.
//! - [`read`]: reading one batch at a time, with errors that name the file, the place
//!   and the fix.
//! - [`profile`]: rows to and from kfdo's [`kfdo_aggregate::RawProfile`].
//! - [`merge`]: selection, host caps and class weights in exact integer arithmetic.
//! - [`dump`]: the canonical text form (compared byte for byte with Spark's output).
//! - [`split`]: one recording as a simulated fleet of hosts (tests and benches).

pub mod dump;
pub mod merge;
pub mod profile;
pub mod read;
pub mod schema;
pub mod split;
pub mod write;

pub use schema::{FileInfo, Row, RowKind, SCHEMA_VERSION};

use std::path::PathBuf;

/// Why a raw file could not be read or written: names the file, what is wrong, and
/// what to do.
#[derive(Debug, thiserror::Error)]
pub enum RawError {
    /// A bad input file (unreadable, truncated, not kfdo's, a newer schema, malformed):
    /// `kfdo merge-raw --skip-bad` drops such a file instead.
    #[error("{}: {what}", path.display())]
    BadFile { path: PathBuf, what: String },
    /// Anything else about the request (no inputs, mixed build-ids, a bad option).
    #[error("{0}")]
    Request(String),
    #[error(transparent)]
    Output(#[from] kfdo_outfile::OutputError),
    #[error(transparent)]
    Aggregate(#[from] kfdo_aggregate::AggregateError),
}

impl RawError {
    pub fn bad(path: &std::path::Path, what: impl Into<String>) -> RawError {
        RawError::BadFile {
            path: path.to_path_buf(),
            what: what.into(),
        }
    }
}

#[cfg(test)]
mod tests;
