//! kfdo-vlbr: emulated last-branch records ("vLBR") and emulated counters under QEMU.
//!
//! A QEMU TCG plugin (`plugin/vlbr_plugin.rs`, built by `build.rs` and embedded here) sees
//! every taken branch of the guest and keeps the last 32 per vCPU; every PERIOD taken
//! branches it takes a sample, as Intel LBR sampling on `br_inst_retired.near_taken` does.
//! This library runs QEMU with the plugin and turns what it captured into a real perf.data
//! (through `kfdo-perf`'s writer): attr with a branch stack, COMM/FORK events, MMAP2 events
//! for the program and every library it maps, and build-ids in the header.
//!
//! ```no_run
//! use kfdo_vlbr::{record_user, RecordConfig};
//! let cfg = RecordConfig::new("./a.out", "perf.data").args(["100"]).period(10007);
//! let outcome = record_user(&cfg)?;
//! std::process::exit(outcome.exit_code);
//! # Ok::<(), kfdo_vlbr::Error>(())
//! ```

pub mod counters;
pub mod hw;
pub mod maps;
mod outfile;
mod perfout;
pub mod plugin;
pub mod stream;
mod system;
mod user;

pub use counters::{CacheModel, Counters, CountersFile, DomainCounts};
pub use system::{
    kernel_command_line, record_system, Filter, KernelElf, SystemConfig, SystemOutcome,
};
pub use user::record_user;

use std::ffi::OsString;
use std::path::PathBuf;

/// The default sampling period: a prime, so that samples do not lock onto loop periods.
pub const DEFAULT_PERIOD: u64 = 10007;
/// Branch records per sample, as Intel LBR on recent cores.
pub const DEFAULT_DEPTH: u32 = 32;

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
}

impl Error {
    fn io(what: impl std::fmt::Display, e: std::io::Error) -> Error {
        Error::Io(format!("{what}: {e}"))
    }
}

/// What to record, and how.
#[derive(Debug, Clone)]
pub struct RecordConfig {
    /// The program (a path, or a name looked up in PATH) and its arguments.
    pub program: OsString,
    pub args: Vec<OsString>,
    /// Environment variables set for the program, on top of this process's environment.
    pub env: Vec<(OsString, OsString)>,
    /// Sample every `period` taken branches.
    pub period: u64,
    /// Branch records kept per sample.
    pub depth: u32,
    /// The perf.data to write (atomically: complete, or not at all).
    pub output: PathBuf,
    /// Also count instructions, branches and L1i / iTLB misses; write them here as JSON.
    pub counters: Option<PathBuf>,
    pub cache: CacheModel,
    /// The QEMU user-mode emulator (default: `qemu-x86_64` from PATH).
    pub qemu: Option<PathBuf>,
    /// Where the capture stream and the plugin go while recording (default: the system
    /// temporary directory).
    pub work_dir: Option<PathBuf>,
    /// Ignore SIGINT and forward SIGTERM / SIGHUP to the recorded program while it runs,
    /// as `perf record` does, so that Ctrl-C still leaves a complete perf.data. For
    /// command-line use; a library caller that handles signals itself leaves it off.
    pub handle_signals: bool,
}

impl RecordConfig {
    pub fn new(program: impl Into<OsString>, output: impl Into<PathBuf>) -> RecordConfig {
        RecordConfig {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            period: DEFAULT_PERIOD,
            depth: DEFAULT_DEPTH,
            output: output.into(),
            counters: None,
            cache: CacheModel::default(),
            qemu: None,
            work_dir: None,
            handle_signals: false,
        }
    }
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }
    pub fn env(mut self, k: impl Into<OsString>, v: impl Into<OsString>) -> Self {
        self.env.push((k.into(), v.into()));
        self
    }
    pub fn period(mut self, p: u64) -> Self {
        self.period = p;
        self
    }
    pub fn depth(mut self, d: u32) -> Self {
        self.depth = d;
        self
    }
    pub fn counters(mut self, path: impl Into<PathBuf>) -> Self {
        self.counters = Some(path.into());
        self
    }
}

/// What happened.
#[derive(Debug, Clone)]
pub struct RecordOutcome {
    /// The program's exit status as a shell reports it: its exit code, or 128 + signal
    /// number when a signal ended it. Pass it on with `std::process::exit`.
    pub exit_code: i32,
    /// The signal that ended the program, if any (a crash, or Ctrl-C).
    pub signal: Option<i32>,
    /// Samples written.
    pub samples: u64,
    /// Taken branches seen (samples x period, the total the samples stand for).
    pub branches: u64,
    /// MMAP2 events written (executable segments of the program and its libraries).
    pub mmaps: usize,
    /// Processes recorded (the program and any children it forked).
    pub processes: usize,
    /// The perf.data written.
    pub output: PathBuf,
    /// Counters, when asked for.
    pub counters: Option<CountersFile>,
    /// Things the user should know (a lost tail of the stream, a program that exec'd).
    pub warnings: Vec<String>,
}
