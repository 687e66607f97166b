//! `kfdo profile`: recordings -> a profile of one binary.

use std::path::{Path, PathBuf};
use std::time::Instant;

use kfdo_afdo::builder::{
    build_profile, BuildStats, Discriminators, Functions, Mode, FS_DISCRIMINATOR_SYMBOL,
};
use kfdo_afdo::Format;
use kfdo_aggregate::collect::{
    collect_perf_data, collect_perf_script, CollectOptions, CollectStats, SampleMode,
};
use kfdo_aggregate::target::TargetBinary;
use kfdo_aggregate::{AggregateError, CodeMap, RawProfile};

/// One recording to read.
#[derive(Debug, Clone)]
pub enum Input {
    PerfData(PathBuf),
    /// `perf script -F ip,brstack [--show-mmap-events]` text.
    PerfScript(PathBuf),
    /// A raw aggregate (`kfdo profile --raw`, `llvm-profgen --skip-symbolization`).
    Raw(PathBuf),
    /// A raw Parquet file (`kfdo profile --raw-out`, `kfdo merge-raw`) of this binary.
    Parquet(PathBuf),
}

impl Input {
    pub fn path(&self) -> &Path {
        match self {
            Input::PerfData(p) | Input::PerfScript(p) | Input::Raw(p) | Input::Parquet(p) => p,
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
    /// The unsymbolized raw aggregate (mergeable, readable by llvm-profgen).
    Raw,
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
            OutputFormat::Raw => "raw",
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
    /// 12); None: the one of `gcc --version` on PATH.
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

/// What a conversion read and wrote (`kfdo profile --json`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProfileOutcome {
    pub binary: String,
    pub output: String,
    pub format: &'static str,
    pub inputs: Vec<CollectStats>,
    pub ranges: usize,
    pub branches: usize,
    pub functions: usize,
    pub total_samples: u64,
    pub build: Option<BuildStats>,
    /// A sample profile's locations with a discriminator (0: the binary has none; it
    /// was built without -fdebug-info-for-profiling); `None` for other formats.
    pub locations_with_discriminators: Option<usize>,
    /// Each module of `ProfileRequest::modules`: what it added.
    pub modules: Vec<ModuleOutcome>,
    /// `--format bolt`: the traces and records.
    pub bolt: Option<crate::bolt::BoltSummary>,
    /// `--format propeller`: the CFG and the layout.
    pub propeller: Option<crate::propeller::PropellerSummary>,
    pub seconds: f64,
}

/// A kernel module's part of a kernel profile.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ModuleOutcome {
    pub module: String,
    pub inputs: Vec<CollectStats>,
    pub functions: usize,
    pub total_samples: u64,
}

impl ProfileOutcome {
    /// Samples of all inputs that fell in the binary.
    pub fn samples_in_binary(&self) -> u64 {
        self.inputs.iter().map(|s| s.samples_in_binary).sum()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("{0}")]
    Request(String),
    #[error(transparent)]
    Elf(#[from] kfdo_elf::ElfError),
    #[error(transparent)]
    Aggregate(#[from] AggregateError),
    #[error(transparent)]
    Afdo(#[from] kfdo_afdo::AfdoError),
    #[error(transparent)]
    Output(#[from] kfdo_outfile::OutputError),
    #[error(transparent)]
    Bolt(#[from] kfdo_layout::BoltError),
    #[error(transparent)]
    Raw(#[from] kfdo_rawfleet::RawError),
    #[error(transparent)]
    Propeller(#[from] kfdo_layout::propeller::PropellerError),
}

/// Converts `req.inputs` into `req.output`. `on_input` hears each input as it is read
/// (for progress). The output is written whole or not at all.
pub fn profile(
    req: &ProfileRequest,
    on_input: &mut dyn FnMut(&Path),
) -> Result<ProfileOutcome, ProfileError> {
    let started = Instant::now();
    if req.inputs.is_empty() {
        return Err(ProfileError::Request(
            "no input: give --perf-data, --perf-script or --raw-in".into(),
        ));
    }
    // The architecture of the binary against the recordings', before anything is read.
    let bin = kfdo_elf::Binary::open(&req.binary)?;
    crate::arch_check::check_inputs(&req.inputs, &req.binary, bin.arch())?;
    if req.format == OutputFormat::Bolt {
        return crate::bolt::profile_bolt(req, on_input, started);
    }
    // Before any input is read: which GCC the gcov file is for.
    let gcov = match req.format {
        OutputFormat::Gcov => Some(crate::gcov::gcov_version(req.gcc_version)?),
        _ if req.gcc_version.is_some() => {
            return Err(ProfileError::Request(
                "--gcc-version is for --format gcov only".into(),
            ))
        }
        _ => None,
    };
    if req.kernel && !bin.is_kernel() {
        return Err(ProfileError::Request(format!(
            "{}: --kernel was given but this is not a vmlinux (no _text/_stext at a kernel address); \
             pass the uncompressed vmlinux with debug info, not a bzImage or a module",
            req.binary.display()
        )));
    }
    let raw_out = req.format == OutputFormat::Raw;
    if req.format == OutputFormat::Propeller {
        return crate::propeller::profile_propeller(req, &bin, on_input, started);
    }
    if !req.modules.is_empty() && (raw_out || !req.kernel) {
        return Err(ProfileError::Request(
            "--module needs --kernel and a symbolized format (a raw aggregate holds one binary)"
                .into(),
        ));
    }
    // Fail before reading any input if the result could not be symbolized.
    let sym = if raw_out {
        None
    } else {
        Some(kfdo_elf::Symbolizer::new(&bin)?)
    };
    let code = kfdo_elf::Code::new(&bin)?;
    let target = TargetBinary::new(&bin, req.binary_name.as_deref(), req.kernel);
    let (raw, inputs) = collect(req, &bin, &target, &code, on_input)?;
    if raw.is_empty() {
        return Err(ProfileError::Request(format!(
            "no samples: the inputs hold no range or branch counts for {}",
            req.binary.display()
        )));
    }

    let mut out = kfdo_outfile::AtomicOutput::create(&req.output)?;
    let mut outcome = ProfileOutcome {
        binary: req.binary.display().to_string(),
        output: req.output.display().to_string(),
        format: req.format.name(),
        inputs,
        ranges: raw.ranges.len(),
        branches: raw.branches.len(),
        functions: 0,
        total_samples: 0,
        build: None,
        locations_with_discriminators: None,
        modules: Vec::new(),
        bolt: None,
        propeller: None,
        seconds: 0.0,
    };
    match (req.format, sym) {
        (OutputFormat::Raw, _) => raw
            .write_text(out.file(), bin.preferred_base())
            .map_err(|e| out.error(e))?,
        (format, Some(sym)) => {
            let (mut profile, stats) = symbolize(req, &req.binary, &bin, &raw, &code, &sym)?;
            for m in &req.modules {
                let (p, part) = module_profile(req, m, on_input)?;
                profile.merge(&p);
                outcome.modules.push(part);
            }
            let fmt = match (format, gcov) {
                (OutputFormat::Text, _) => Format::Text,
                (OutputFormat::Gcov, Some(v)) => Format::Gcov(v),
                _ => Format::ExtBinary,
            };
            kfdo_afdo::write_profile(&profile, fmt, std::io::BufWriter::new(out.file()))
                .map_err(|e| out.error(e))?;
            outcome.functions = profile.len();
            outcome.total_samples = profile.total();
            outcome.build = Some(stats);
            outcome.locations_with_discriminators = Some(profile.locations_with_discriminators());
        }
        (_, None) => unreachable!("the symbolizer is opened for every symbolized format"),
    }
    out.commit()?;
    outcome.seconds = started.elapsed().as_secs_f64();
    Ok(outcome)
}

/// Reads every input for the binary `bin`.
pub(crate) fn collect(
    req: &ProfileRequest,
    bin: &kfdo_elf::Binary,
    target: &TargetBinary,
    code: &kfdo_elf::Code,
    on_input: &mut dyn FnMut(&Path),
) -> Result<(RawProfile, Vec<CollectStats>), ProfileError> {
    let codemap = CodeMap::from_code(code);
    let opts = CollectOptions {
        mode: if req.ip_only {
            SampleMode::IpOnly
        } else {
            SampleMode::Lbr
        },
        pids: req.pids.clone(),
    };
    let mut raw = RawProfile::default();
    let mut inputs = Vec::new();
    for input in &req.inputs {
        on_input(input.path());
        match input {
            Input::PerfData(p) => {
                let (r, s) = collect_perf_data(p, target, &codemap, &opts)?;
                raw.merge(r);
                inputs.push(s);
            }
            Input::PerfScript(p) => {
                let (r, s) = collect_perf_script(p, target, &codemap, &opts)?;
                raw.merge(r);
                inputs.push(s);
            }
            Input::Raw(p) => raw.merge(RawProfile::read_text(p, bin.preferred_base())?),
            Input::Parquet(p) => {
                let (r, s) = crate::fleet::read_parquet(req, p, bin)?;
                raw.merge(r);
                inputs.push(s);
            }
        }
    }
    Ok((raw, inputs))
}

/// The sample profile of one binary's raw counts.
fn symbolize(
    req: &ProfileRequest,
    path: &Path,
    bin: &kfdo_elf::Binary,
    raw: &RawProfile,
    code: &kfdo_elf::Code,
    sym: &kfdo_elf::Symbolizer<'_>,
) -> Result<(kfdo_afdo::Profile, BuildStats), ProfileError> {
    let functions = Functions::new(
        sym.function_ranges()
            .iter()
            .map(|f| (f.start, f.end, &*f.name, f.is_func_entry)),
    );
    let mode = if req.ip_only { Mode::IpOnly } else { Mode::Lbr };
    // As llvm-profgen: clang's marker symbol says the discriminators are
    // flow-sensitive (kbuild's CONFIG_AUTOFDO_CLANG builds).
    // GCC's discriminators are plain block numbers: a gcov profile is for GCC.
    let disc = if req.format == OutputFormat::Gcov {
        Discriminators::Gcc
    } else if bin.symbol_address(FS_DISCRIMINATOR_SYMBOL).is_some() {
        Discriminators::FlowSensitive
    } else {
        Discriminators::Encoded
    };
    let (profile, stats) = build_profile(raw, code, sym, &functions, mode, disc);
    if profile.is_empty() {
        return Err(ProfileError::Request(format!(
            "{}: the samples hit {} instructions, none with line info: was it built with -g?",
            path.display(),
            stats.instructions
        )));
    }
    Ok((profile, stats))
}

/// A kernel module's profile, from the same inputs: its samples are those of the
/// recording's mapping of the `.ko` (perf's module MMAP, or kfdo's for an emulated guest).
fn module_profile(
    req: &ProfileRequest,
    path: &Path,
    on_input: &mut dyn FnMut(&Path),
) -> Result<(kfdo_afdo::Profile, ModuleOutcome), ProfileError> {
    let bin = kfdo_elf::Binary::open(path)?;
    if !bin.is_relocatable() {
        return Err(ProfileError::Request(format!(
            "{}: --module takes a kernel module (a relocatable .ko), not this ELF type",
            path.display()
        )));
    }
    let sym = kfdo_elf::Symbolizer::new(&bin)?;
    let code = kfdo_elf::Code::new(&bin)?;
    let target = TargetBinary::new(&bin, None, false);
    let (raw, inputs) = collect(req, &bin, &target, &code, on_input)?;
    if raw.is_empty() {
        return Err(ProfileError::Request(format!(
            "no samples: the inputs hold no range or branch counts for the module {}",
            path.display()
        )));
    }
    let (profile, _) = symbolize(req, path, &bin, &raw, &code, &sym)?;
    let part = ModuleOutcome {
        module: path.display().to_string(),
        inputs,
        functions: profile.len(),
        total_samples: profile.total(),
    };
    Ok((profile, part))
}
