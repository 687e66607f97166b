//! [`CollectError`]: why the collector could not start or go on.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// A bad option or combination of options.
    #[error("{0}")]
    Config(String),
    /// The spool directory is held by another collector (its lock is taken).
    #[error("{}: {what}", spool.display())]
    SpoolBusy { spool: PathBuf, what: String },
    /// A file of the spool (its status, a host file) could not be read or written.
    #[error("{}: {what}: {source}", path.display())]
    Io {
        path: PathBuf,
        what: String,
        source: std::io::Error,
    },
    /// The spool's status file is not one this collector wrote.
    #[error("{}: {what}", path.display())]
    BadStatus { path: PathBuf, what: String },
    /// Recording could not start (no perf, no permission): nothing to collect.
    #[error("{0}")]
    Record(String),
    #[error(transparent)]
    Store(#[from] kfdo_objstore::Error),
}

impl CollectError {
    pub fn io(path: &Path, what: impl Into<String>, source: std::io::Error) -> CollectError {
        CollectError::Io {
            path: path.to_path_buf(),
            what: what.into(),
            source,
        }
    }
}
