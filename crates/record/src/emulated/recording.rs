//! What an emulated recording of a program is asked to do ([`RecordConfig`]) and what it
//! did ([`RecordOutcome`]), with the defaults and the measurement window they share with
//! system mode.

use crate::emulated::counters::{CacheModel, CountersFile};
use crate::error::Error;
use crate::stdio::StdioPlan;
use std::ffi::OsString;
use std::path::PathBuf;

/// The default sampling period: a prime, so that samples do not lock onto loop periods.
pub const DEFAULT_PERIOD: u64 = 10007;
/// Branch records per sample, as Intel LBR on recent cores.
pub const DEFAULT_DEPTH: u32 = 32;

/// Which part of the run is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Window {
    /// All of it.
    #[default]
    Whole,
    /// Only between the guest's window markers (`KFDO_WINDOW_START` / `KFDO_WINDOW_STOP`
    /// of `crates/record/markers/kfdo_markers.h`): samples and counters cover the measured
    /// phase, not the start-up (or, for a kernel, the boot). Outside a window the guest
    /// runs uninstrumented.
    Markers,
}

impl Window {
    /// The plugin's `window=` value.
    pub(crate) fn plugin_value(self) -> &'static [u8] {
        match self {
            Window::Whole => b"whole",
            Window::Markers => b"markers",
        }
    }
}

/// The error of a run with `Window::Markers` whose guest never opened a window.
pub(crate) fn no_window(program: String) -> Error {
    Error::Program {
        program,
        what: "recorded with --window markers, but the guest never opened a measurement \
               window: mark the measured phase with KFDO_WINDOW_START / KFDO_WINDOW_STOP \
               (crates/record/markers/kfdo_markers.h), or record the whole run"
            .into(),
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
    /// Where the program's stdin, stdout and stderr go (default: this process's).
    pub stdio: StdioPlan,
    /// The program's working directory (default: this process's).
    pub cwd: Option<PathBuf>,
    /// The whole run, or only the guest's marked windows.
    pub window: Window,
    /// Whether the caller wants samples: a run for its counters alone (a period no run
    /// reaches) sets it false, and a recording without samples is then no error.
    pub samples_wanted: bool,
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
            stdio: StdioPlan::default(),
            cwd: None,
            window: Window::Whole,
            samples_wanted: true,
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
    /// Measurement windows the program opened (with `Window::Markers`).
    pub windows: Option<usize>,
}

/// The settings user and system mode share, checked before anything runs.
pub(crate) fn check_settings(period: u64, depth: u32, cache: &CacheModel) -> Result<(), Error> {
    if period == 0 {
        return Err(Error::Config("the period must be at least 1".into()));
    }
    if depth == 0 || depth > 1024 {
        return Err(Error::Config(
            "the branch stack depth must be 1..=1024".into(),
        ));
    }
    cache.validate().map_err(Error::Config)
}
