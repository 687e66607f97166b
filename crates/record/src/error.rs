//! The crate's error type: each variant names the file or program involved and what to do.

use std::path::PathBuf;

/// Errors of recording. Each names the file or program involved and what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{program}: command not found (checked {how}); give a path or fix PATH")]
    ProgramNotFound { program: String, how: String },
    #[error("{program}: {what}")]
    Program { program: String, what: String },
    #[error(
        "cannot run {qemu}: {source} (install the qemu-user package: apt-get install qemu-user)"
    )]
    Qemu {
        qemu: String,
        source: std::io::Error,
    },
    #[error("{path}: at byte {offset}: {what}")]
    Stream {
        path: PathBuf,
        offset: usize,
        what: String,
    },
    #[error("{path}: {what}")]
    Output { path: PathBuf, what: String },
    #[error("{0}")]
    Io(String),
    #[error("bad setting: {0}")]
    Config(String),
    /// A request that cannot be carried out as given (a bad option, a method this
    /// machine lacks); the message says what to change.
    #[error("{0}")]
    Request(String),
}

impl Error {
    pub(crate) fn io(what: impl std::fmt::Display, e: std::io::Error) -> Error {
        Error::Io(format!("{what}: {e}"))
    }
}
