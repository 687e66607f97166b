//! kfdo-record: recording branch-stack profiles of programs and kernels.
//!
//! - [`hardware`]: what this machine's PMU can record (Intel LBR, AMD BRS / LBRv2, Arm
//!   SPE / BRBE), the `perf record` command line for each method, and `--method auto`'s
//!   choice with its reasons.
//! - [`emulated`]: emulated last-branch records ("vLBR") and emulated counters under QEMU,
//!   for machines without branch sampling: a QEMU TCG plugin (`plugin/`, built by
//!   `build.rs` and embedded here) whose capture is turned into a real perf.data.
//!
//! ```no_run
//! use kfdo_record::{record_user, RecordConfig};
//! let cfg = RecordConfig::new("./a.out", "perf.data").args(["100"]).period(10007);
//! let outcome = record_user(&cfg)?;
//! std::process::exit(outcome.exit_code);
//! # Ok::<(), kfdo_record::Error>(())
//! ```

pub mod emulated;
pub mod hardware;
pub mod request;
pub mod stdio;

pub use emulated::counters::{CacheModel, Counters, CountersFile, DomainCounts};
pub use emulated::guest_modules::{GuestModules, PlacedModule};
pub use emulated::system::{
    kernel_command_line, record_system, Filter, KernelElf, SystemConfig, SystemOutcome,
};
pub use emulated::user::record_user;
pub use emulated::{RecordConfig, RecordOutcome, Window, DEFAULT_DEPTH, DEFAULT_PERIOD};
pub use request::{record, KernelBoot, RecordRequest, Recorded, SystemScope, Target};
pub use stdio::{ChildSetup, StdStream, StdioPlan};

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
    fn io(what: impl std::fmt::Display, e: std::io::Error) -> Error {
        Error::Io(format!("{what}: {e}"))
    }
}
