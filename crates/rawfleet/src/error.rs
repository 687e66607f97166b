//! [`RawError`]: every way reading, writing or merging raw files can fail.

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
