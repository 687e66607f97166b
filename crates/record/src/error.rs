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
    /// The run ended before a single sample was taken; nothing was written.
    #[error(
        "{}: the recording holds no samples: the run was shorter than one sample period \
         (--period {period}); nothing was written. Record with a smaller --period or a \
         longer workload",
        path.display()
    )]
    NoSamples { path: PathBuf, period: u64 },
    /// A system call failed; `what` says what was being done, `source` why it failed.
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// A recording perf wrote that cannot be read back.
    #[error("{}: {source}", path.display())]
    Perf {
        path: PathBuf,
        #[source]
        source: kfdo_perf::PerfError,
    },
    /// A setting out of range; the message is the whole story (nothing failed
    /// underneath it).
    #[error("bad setting: {0}")]
    Config(String),
    /// A request that cannot be carried out as given (a bad option, a method this
    /// machine lacks); the message says what to change, and nothing failed underneath it.
    #[error("{0}")]
    Request(String),
}

impl Error {
    pub(crate) fn io(what: impl std::fmt::Display, e: std::io::Error) -> Error {
        Error::Io {
            what: what.to_string(),
            source: e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn an_io_error_keeps_its_cause() {
        let e = Error::io(
            "cannot write the QEMU plugin to a temporary file",
            std::io::Error::from(std::io::ErrorKind::StorageFull),
        );
        let cause = e.source().expect("the io::Error is the source");
        assert_eq!(
            cause.downcast_ref::<std::io::Error>().map(|c| c.kind()),
            Some(std::io::ErrorKind::StorageFull)
        );
        // The message users see is unchanged: what was done, then why it failed.
        assert_eq!(
            e.to_string(),
            format!("cannot write the QEMU plugin to a temporary file: {cause}")
        );
    }
}
