//! Typed errors. Every error about an input names the file, the byte offset (or line) where
//! the problem was found, what was expected there, and what to do about it.

use std::path::PathBuf;

/// Everything that can go wrong reading or writing perf data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PerfError {
    /// The file could not be opened, mapped or read.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// Writing an output failed.
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The first eight bytes are not a perf.data magic we read.
    #[error(
        "{}: offset 0: not a perf.data file: expected the magic \"PERFILE2\" but found {found}; \
         is this a perf.data file? record one with `perf record -o FILE -- COMMAND` \
         (or `perf record -o - ... > FILE` for pipe mode)",
        path.display()
    )]
    BadMagic { path: PathBuf, found: String },

    /// A perf.data file written on a big-endian machine.
    #[error(
        "{}: offset 0: big-endian perf.data (magic \"2ELIFREP\") is not supported; \
         record on a little-endian machine, or convert the data there with `perf script`",
        path.display()
    )]
    BigEndian { path: PathBuf },

    /// The very old "PERFFILE" (version 1) format.
    #[error(
        "{}: offset 0: perf.data version 1 (magic \"PERFFILE\") is not supported; \
         re-record with a perf newer than Linux 2.6.39",
        path.display()
    )]
    OldVersion { path: PathBuf },

    /// The file ends before a structure that the headers promise.
    #[error(
        "{}: offset {offset}: truncated: expected {what} ({need} bytes) but the {within} ends at offset {end}; \
         the file is incomplete (did `perf record` finish, or was the copy cut short?)",
        path.display()
    )]
    Truncated {
        path: PathBuf,
        offset: u64,
        what: &'static str,
        need: u64,
        /// "file" or "record" or "data section": what ended too early.
        within: &'static str,
        end: u64,
    },

    /// A structure is present but its contents are impossible.
    #[error(
        "{}: offset {offset}: malformed {what}: {detail}; the file is corrupt or was not written by perf",
        path.display()
    )]
    Malformed {
        path: PathBuf,
        offset: u64,
        what: &'static str,
        detail: String,
    },

    /// A sample names an event id that no attr declares.
    #[error(
        "{}: offset {offset}: sample has event id {id}, which none of the {nattrs} event attrs declares; \
         the file is corrupt, or was written with attrs missing (try `perf script -i FILE` to check)",
        path.display()
    )]
    UnknownSampleId {
        path: PathBuf,
        offset: u64,
        id: u64,
        nattrs: usize,
    },

    /// A well-formed feature this crate does not read.
    #[error("{}: offset {offset}: {what} is not supported; {hint}", path.display())]
    Unsupported {
        path: PathBuf,
        offset: u64,
        what: &'static str,
        hint: &'static str,
    },

    /// A line of `perf script` output that could not be read.
    #[error(
        "{}:{line}: cannot read `perf script` line: {detail}; expected the output of \
         `perf script -F ip,brstack` (optionally with pid,tid and --show-mmap-events); line: {text:?}",
        path.display()
    )]
    ScriptLine {
        path: PathBuf,
        line: u64,
        detail: String,
        text: String,
    },

    /// The caller asked the writer for something it cannot encode.
    #[error("{}: cannot write perf data: {detail}", path.display())]
    InvalidInput { path: PathBuf, detail: String },
}

impl PerfError {
    /// The byte offset in the file where the problem was found, when there is one.
    pub fn offset(&self) -> Option<u64> {
        match self {
            PerfError::BadMagic { .. }
            | PerfError::BigEndian { .. }
            | PerfError::OldVersion { .. } => Some(0),
            PerfError::Truncated { offset, .. }
            | PerfError::Malformed { offset, .. }
            | PerfError::UnknownSampleId { offset, .. }
            | PerfError::Unsupported { offset, .. } => Some(*offset),
            _ => None,
        }
    }

    /// The line number for errors in `perf script` text.
    pub fn line(&self) -> Option<u64> {
        match self {
            PerfError::ScriptLine { line, .. } => Some(*line),
            _ => None,
        }
    }
}
