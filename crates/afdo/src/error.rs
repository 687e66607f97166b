//! Typed errors. Every error about an input names the file and where in it
//! (line for text, byte offset for binary), what was expected, and what to do.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum AfdoError {
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Writing to a stream failed.
    #[error("writing the profile: {0}")]
    Write(#[from] std::io::Error),
    /// A malformed line in a text profile (`line` is 1-based).
    #[error("{file}:{line}: {msg}")]
    Text {
        file: String,
        line: usize,
        msg: String,
    },
    /// A malformed binary profile (`offset` is the byte offset in the file).
    #[error("{file}: at byte offset {offset}: {msg}")]
    Binary {
        file: String,
        offset: u64,
        msg: String,
    },
    /// A file that is neither an LLVM text nor an LLVM extbinary profile.
    #[error("{file}: {msg}")]
    UnknownFormat { file: String, msg: String },
    /// A profile that a file format cannot represent.
    #[error("cannot write the profile: {0}")]
    Invalid(String),
}
