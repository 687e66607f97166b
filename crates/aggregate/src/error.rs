//! Errors of raw-profile building and reading. Every message names the input
//! and says what to do about it.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum AggregateError {
    #[error("{path}:{line}: {what} (unsymbolized counts are `N`, N lines `start-end:count`, `M`, M lines `from->to:count`, addresses in hex relative to the binary's base, as `kfdo profile --unsymbolized` or `llvm-profgen --skip-symbolization` write them)")]
    RawSyntax {
        path: PathBuf,
        line: usize,
        what: String,
    },
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Perf(#[from] kfdo_perf::PerfError),
    #[error("{0}")]
    Input(String),
    /// No mapping in the recording is the binary (by build-id or name); the message
    /// lists what it does map. Readers with their own advice match on it.
    #[error("{message}")]
    NotMapped {
        message: String,
        /// Samples in the recording.
        samples: u64,
        /// Executable files the recording maps (at most 64).
        mapped_files: Vec<String>,
    },
    /// A file of the binary's name was recorded with another build-id.
    #[error("{0}")]
    BuildIdMismatch(String),
}
