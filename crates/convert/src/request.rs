//! The vocabulary of a conversion's request: what to read ([`Input`]), what to write
//! ([`OutputFormat`], or one host's raw Parquet file: [`Output`], [`RawOut`]) and the
//! whole [`ProfileRequest`].
//!
//! Two file formats hold counts that are not symbolized, each with one name: the
//! *unsymbolized* text (llvm-profgen's `--skip-symbolization` form: `--unsymbolized`,
//! `--unsymbolized-in`) and the *raw* Parquet file of fleets (`--raw-out`, `--from-raw`,
//! `kfdo merge-raw`, `kfdo raw`).

use std::path::{Path, PathBuf};

/// One recording to read.
#[derive(Debug, Clone)]
pub enum Input {
    PerfData(PathBuf),
    /// `perf script -F ip,brstack [--show-mmap-events]` text.
    PerfScript(PathBuf),
    /// Unsymbolized text (`kfdo profile --unsymbolized`, `llvm-profgen --skip-symbolization`).
    Unsymbolized(PathBuf),
    /// A raw Parquet file (`kfdo profile --raw-out`, `kfdo merge-raw`) of this binary.
    Parquet(PathBuf),
}

impl Input {
    pub fn path(&self) -> &Path {
        match self {
            Input::PerfData(p)
            | Input::PerfScript(p)
            | Input::Unsymbolized(p)
            | Input::Parquet(p) => p,
        }
    }
}

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// LLVM AutoFDO sample profile, text.
    Text,
    /// LLVM AutoFDO sample profile, extensible binary (llvm-profgen's default).
    Extbinary,
    /// The unsymbolized counts as text (mergeable, readable by llvm-profgen).
    Unsymbolized,
    /// BOLT's fdata (`llvm-bolt -data=`), the records perf2bolt writes.
    Bolt,
    /// Propeller's cc and ld profiles (`OUTPUT_cc_profile.txt`, `OUTPUT_ld_profile.txt`).
    Propeller,
    /// GCC's AutoFDO profile (`gcc -fauto-profile=`) for `ProfileRequest::gcc_version`.
    Gcov,
}

impl OutputFormat {
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Text => "text",
            OutputFormat::Extbinary => "extbinary",
            // The word `--json` has always printed for it: scripts read it.
            OutputFormat::Unsymbolized => "raw",
            OutputFormat::Bolt => "bolt",
            OutputFormat::Propeller => "propeller",
            OutputFormat::Gcov => "gcov",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ProfileRequest {
    /// The profiled binary (for a kernel: the vmlinux), with DWARF debug info.
    pub binary: PathBuf,
    /// Several inputs merge: counts add.
    pub inputs: Vec<Input>,
    pub output: PathBuf,
    pub format: OutputFormat,
    /// The binary is a vmlinux: count samples in `[kernel.kallsyms]`.
    pub kernel: bool,
    /// Samples without branch stacks (`perf record -e cpu-clock`): each IP counts once.
    pub ip_only: bool,
    /// Only samples of these processes (empty: all).
    pub pids: Vec<u32>,
    /// The file name the binary ran under, when it differs from its own.
    pub binary_name: Option<String>,
    /// With `kernel`: kernel modules (`.ko`, with debug info) whose samples are profiled
    /// too and merged into the one profile that the kernel build (modules included) reads.
    pub modules: Vec<PathBuf>,
    /// `OutputFormat::Gcov`: the GCC major release that will read the profile (11 or
    /// 12); None: the one that built the binary (its DWARF producer), else the one of
    /// `gcc --version` on PATH.
    pub gcc_version: Option<u32>,
}

impl ProfileRequest {
    pub fn new(binary: &Path, inputs: Vec<Input>, output: &Path) -> ProfileRequest {
        ProfileRequest {
            binary: binary.to_path_buf(),
            inputs,
            output: output.to_path_buf(),
            format: OutputFormat::Extbinary,
            kernel: false,
            ip_only: false,
            pids: Vec::new(),
            binary_name: None,
            modules: Vec::new(),
            gcc_version: None,
        }
    }
}

/// What a conversion writes: a profile (`ProfileRequest::format` at
/// `ProfileRequest::output`), or the counts as one host's raw Parquet file.
#[derive(Debug, Clone)]
pub enum Output {
    Profile,
    RawParquet(RawOut),
}

/// Where and as whom to write a host's raw Parquet file.
#[derive(Clone, Debug)]
pub struct RawOut {
    pub path: PathBuf,
    pub host: String,
    pub host_class: String,
}
