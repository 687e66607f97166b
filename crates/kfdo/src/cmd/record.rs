//! `kfdo record`: a branch-stack profile of a command, with hardware perf where the machine
//! has branch sampling, with emulated LBR (QEMU + the vLBR plugin) where it does not, and
//! IP-only as the last resort. `--method auto` says why at each step.

use crate::output::Global;
use anyhow::bail;
use kfdo_record::hardware::Method;
use kfdo_record::{KernelBoot, RecordRequest, Recorded, StdStream, SystemScope, Target};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Output perf.data.
    #[arg(short, long, default_value = "perf.data")]
    output: PathBuf,
    /// How to record: auto tries hardware branch sampling, then emulation, then IP-only.
    #[arg(long, value_enum, default_value = "auto")]
    method: MethodArg,
    /// Sample every N taken branches (a prime avoids locking onto loop periods).
    #[arg(short = 'c', long, default_value_t = kfdo_record::DEFAULT_PERIOD)]
    period: u64,
    /// Branch records per sample (emulated; hardware gives what it has).
    #[arg(long, default_value_t = kfdo_record::DEFAULT_DEPTH)]
    depth: u32,
    /// Also write emulated counters (instructions, branches, L1i / iTLB misses) as JSON.
    #[arg(long, value_name = "FILE")]
    counters_out: Option<PathBuf>,
    /// The old spelling of --counters-out (`--counters` names a counter source
    /// elsewhere, as in `kfdo compare`).
    #[arg(
        long,
        value_name = "FILE",
        hide = true,
        conflicts_with = "counters_out"
    )]
    counters: Option<PathBuf>,
    /// L1i model for --counters-out: SIZE:WAYS:LINE in bytes.
    #[arg(long, value_name = "SIZE:WAYS:LINE", default_value = "32768:8:64")]
    l1i: String,
    /// iTLB model for --counters-out: ENTRIES:PAGE_SIZE.
    #[arg(long, value_name = "ENTRIES:PAGE", default_value = "64:4096")]
    itlb: String,
    /// The QEMU user-mode emulator to use.
    #[arg(long, value_name = "PATH")]
    qemu: Option<PathBuf>,
    /// Print a JSON summary on stdout; the recorded program's stdout then goes to
    /// stderr, so that stdout carries only the JSON.
    #[arg(long)]
    json: bool,
    /// Record the whole system with hardware perf (-a) for this long.
    #[arg(long)]
    system: bool,
    /// With --system: kernel samples only.
    #[arg(long, conflicts_with = "user_only")]
    kernel_only: bool,
    /// With --system: user samples only.
    #[arg(long)]
    user_only: bool,
    /// With --emulated-kernel: keep kernel and user branches (default: kernel only,
    /// as kernel AutoFDO wants).
    #[arg(long, conflicts_with_all = ["kernel_only", "user_only"])]
    kernel_and_user: bool,
    /// With --emulated-kernel: the system emulator to use (default: the kernel's own,
    /// qemu-system-x86_64 or qemu-system-aarch64, from PATH).
    #[arg(long, value_name = "PATH")]
    qemu_system: Option<PathBuf>,
    /// With --system: seconds to record.
    #[arg(long, value_name = "SECONDS")]
    duration: Option<f64>,
    /// Boot a kernel under QEMU (qemu-system-x86_64 or qemu-system-aarch64, from the
    /// kernel's headers) and record its kernel branches (emulated).
    #[arg(long)]
    emulated_kernel: bool,
    /// With --emulated-kernel: the kernel image (x86: bzImage; arm64: Image).
    #[arg(long, value_name = "BZIMAGE")]
    kernel: Option<PathBuf>,
    /// With --emulated-kernel: the initramfs holding the workload.
    #[arg(long, value_name = "INITRD")]
    initrd: Option<PathBuf>,
    /// With --emulated-kernel: the kernel command line.
    #[arg(long, value_name = "ARGS")]
    append: Option<String>,
    /// With --emulated-kernel: the vmlinux (with symbols) to name in the perf.data.
    #[arg(long, value_name = "VMLINUX")]
    vmlinux: Option<PathBuf>,
    /// With --emulated-kernel: a kernel module (.ko) the guest loads and reports with a
    /// `kfdo-module: NAME 0xTEXT SIZE` console line (as recipes/linux/workload's /init
    /// does); its samples are mapped to the file. The console then goes to
    /// OUTPUT.console.txt. Repeat for several.
    #[arg(long, value_name = "KO")]
    module: Vec<PathBuf>,
    /// What to record: the whole run, or (emulated) only the windows the program marks
    /// with KFDO_WINDOW_START / KFDO_WINDOW_STOP (crates/record/markers/kfdo_markers.h).
    #[arg(long, value_enum, default_value = "whole")]
    window: WindowArg,
    /// The command to record, after `--`.
    #[arg(last = true, value_name = "CMD")]
    command: Vec<OsString>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum WindowArg {
    Whole,
    Markers,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum MethodArg {
    Auto,
    Lbr,
    Brs,
    Lbrv2,
    Spe,
    Brbe,
    Emulated,
    Ip,
}

impl MethodArg {
    fn to_method(self) -> Option<Method> {
        Some(match self {
            MethodArg::Auto => return None,
            MethodArg::Lbr => Method::Lbr,
            MethodArg::Brs => Method::Brs,
            MethodArg::Lbrv2 => Method::LbrV2,
            MethodArg::Spe => Method::Spe,
            MethodArg::Brbe => Method::Brbe,
            MethodArg::Emulated => Method::Emulated,
            MethodArg::Ip => Method::Ip,
        })
    }
}

pub fn run(mut a: Args, g: &Global) -> anyhow::Result<i32> {
    if let Some(old) = a.counters.take() {
        g.deprecated("--counters FILE", "--counters-out FILE");
        a.counters_out = Some(old);
    }
    check_outputs(&a)?;
    let target = if a.emulated_kernel {
        let Some(kernel) = a.kernel.clone() else {
            bail!("--emulated-kernel needs --kernel IMAGE (arch/x86/boot/bzImage, arch/arm64/boot/Image)");
        };
        Target::EmulatedKernel(KernelBoot {
            kernel,
            initrd: a.initrd.clone(),
            append: a.append.clone(),
            vmlinux: a.vmlinux.clone(),
            filter: if a.user_only {
                kfdo_record::Filter::User
            } else if a.kernel_and_user {
                kfdo_record::Filter::All
            } else {
                kfdo_record::Filter::Kernel
            },
            qemu_system: a.qemu_system.clone(),
            modules: a.module.clone(),
        })
    } else if a.system {
        let Some(seconds) = a.duration else {
            bail!("--system needs --duration SECONDS");
        };
        Target::System {
            seconds,
            scope: if a.kernel_only {
                SystemScope::Kernel
            } else if a.user_only {
                SystemScope::User
            } else {
                SystemScope::All
            },
            method: a.method.to_method(),
        }
    } else {
        Target::Command {
            argv: a.command.clone(),
            method: a.method.to_method(),
        }
    };
    let mut req = RecordRequest::new(target, a.output.clone());
    req.period = a.period;
    req.depth = a.depth;
    req.counters = a.counters_out.clone();
    if a.json {
        // Stdout carries the JSON alone: the program's output would corrupt it.
        req.child.stdio.stdout = StdStream::file(stderr_file()?);
    }
    req.cache = cache_model(&a)?;
    req.qemu = a.qemu.clone();
    req.handle_signals = true;
    req.window = match a.window {
        WindowArg::Whole => kfdo_record::Window::Whole,
        WindowArg::Markers => kfdo_record::Window::Markers,
    };
    let recorded = kfdo_record::record(&req, &mut |s| g.info(format!("kfdo record: {s}")))
        .map_err(|e| match &req.target {
            Target::Command { argv, .. }
                if !argv.is_empty() && !matches!(e, kfdo_record::Error::Request(_)) =>
            {
                anyhow::Error::new(e).context(format!(
                    "recording {} under emulation",
                    argv[0].to_string_lossy()
                ))
            }
            Target::EmulatedKernel(_) if !matches!(e, kfdo_record::Error::Request(_)) => {
                anyhow::Error::new(e).context("recording the kernel under emulation")
            }
            _ => anyhow::Error::new(e),
        })?;
    let next = next_step(&a, &recorded);
    match &recorded {
        Recorded::Emulated(out) => print_emulated(&a, out, &next, g)?,
        Recorded::Kernel(out) => print_kernel(&a, out, &next, g)?,
        Recorded::Hardware {
            method,
            command,
            exit_code,
        } => {
            g.info(format!("kfdo record: next: {next}"));
            if a.json {
                crate::json_out::print_summary(&HardwareSummary {
                    method: method.name(),
                    output: &a.output,
                    exit_code: *exit_code,
                    period: a.period,
                    perf_command: command
                        .iter()
                        .map(|w| w.to_string_lossy().into_owned())
                        .collect(),
                    next: &next,
                })?;
            }
        }
    }
    if let Some(why) = command_failure(&recorded) {
        // Loud even with --quiet: a profile of a run that failed part-way may not be the
        // workload at all, and the exit status alone is easy to miss in a script.
        eprintln!(
            "kfdo record: the recorded command {why}; {} holds its run up to then: check \
             the command (a profile of a failed run may not represent the workload); kfdo \
             record exits with the command's status",
            a.output.display()
        );
    }
    Ok(recorded.exit_code())
}

/// How the recorded command failed, when it did.
fn command_failure(recorded: &Recorded) -> Option<String> {
    if let Recorded::Emulated(o) = recorded {
        if let Some(sig) = o.signal {
            return Some(format!("was killed by signal {sig}"));
        }
    }
    match recorded.exit_code() {
        0 => None,
        code => Some(format!("exited with status {code}")),
    }
}

/// The `kfdo profile` line for this recording: the program it ran (the vmlinux and
/// modules for a kernel), `--ip-only` for samples without branch stacks. A whole-system
/// recording of user code names no one program: BIN stands for the one to profile.
fn next_step(a: &Args, recorded: &Recorded) -> String {
    let program = || {
        a.command
            .first()
            .map(|w| kfdo_outfile::program_path(w, None).unwrap_or_else(|| PathBuf::from(w)))
    };
    let placeholder = || PathBuf::from("BIN");
    let vmlinux = || {
        a.vmlinux
            .clone()
            .unwrap_or_else(|| PathBuf::from("vmlinux"))
    };
    let mut flags: Vec<String> = Vec::new();
    let binary = match recorded {
        Recorded::Kernel(_) if a.user_only => placeholder(),
        Recorded::Kernel(_) => {
            flags.push("--kernel".into());
            for m in &a.module {
                flags.push("--module".into());
                flags.push(m.to_string_lossy().into_owned());
            }
            vmlinux()
        }
        Recorded::Emulated(_) => program().unwrap_or_else(placeholder),
        Recorded::Hardware { method, .. } => {
            if *method == Method::Ip {
                flags.push("--ip-only".into());
            }
            if !a.system {
                program().unwrap_or_else(placeholder)
            } else if a.kernel_only {
                flags.push("--kernel".into());
                vmlinux()
            } else {
                placeholder()
            }
        }
    };
    let profile = crate::next::profile_path(&binary, &a.output);
    crate::next::profile_command(&flags, &binary, &a.output, &profile)
}

/// Before anything runs (a workload may take hours): every output (the perf.data, the
/// counters, the guest console) can be written, and none is the program being
/// recorded, one of its arguments that names a file, or a kernel input (`-o prog --
/// ./prog` would replace the program).
fn check_outputs(a: &Args) -> anyhow::Result<()> {
    use kfdo_outfile::Out;
    let console = a.output.with_extension("console.txt");
    let mut outputs = vec![Out::new("-o", &a.output)];
    outputs.extend(
        a.counters_out
            .as_deref()
            .map(|c| Out::new("--counters-out", c)),
    );
    if !a.module.is_empty() {
        outputs.push(Out::new("-o", &console));
    }
    let named = kfdo_outfile::files_named_by(kfdo_outfile::CommandLine::Argv(&a.command), None);
    let inputs: Vec<&Path> = named
        .iter()
        .map(|f| &f.path)
        .chain(&a.kernel)
        .chain(&a.initrd)
        .chain(&a.vmlinux)
        .chain(&a.module)
        .chain(&a.qemu)
        .chain(&a.qemu_system)
        .map(PathBuf::as_path)
        .collect();
    kfdo_outfile::check_outputs(&outputs, &inputs)?;
    Ok(())
}

/// This process's stderr as a file, for the program's stdout under --json.
fn stderr_file() -> anyhow::Result<std::fs::File> {
    use std::os::fd::AsFd;
    let fd = std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| anyhow::anyhow!("cannot duplicate stderr for the program's output: {e}"))?;
    Ok(std::fs::File::from(fd))
}

fn cache_model(a: &Args) -> anyhow::Result<kfdo_record::CacheModel> {
    let nums = |s: &str, what: &str, n: usize| -> anyhow::Result<Vec<u64>> {
        let v: Result<Vec<u64>, _> = s.split(':').map(|x| x.trim().parse::<u64>()).collect();
        match v {
            Ok(v) if v.len() == n => Ok(v),
            _ => bail!("--{what} {s}: expected {n} numbers separated by ':'"),
        }
    };
    let l = nums(&a.l1i, "l1i", 3)?;
    let t = nums(&a.itlb, "itlb", 2)?;
    let m = kfdo_record::CacheModel {
        l1i_size: l[0],
        l1i_ways: l[1] as u32,
        l1i_line: l[2],
        itlb_entries: t[0] as u32,
        itlb_page: t[1],
        ..kfdo_record::CacheModel::default()
    };
    m.validate()
        .map_err(|e| anyhow::anyhow!("cache model: {e}"))?;
    Ok(m)
}

fn print_emulated(
    a: &Args,
    out: &kfdo_record::RecordOutcome,
    next: &str,
    g: &Global,
) -> anyhow::Result<()> {
    for w in &out.warnings {
        g.info(format!("kfdo record: warning: {w}"));
    }
    g.info(format!(
        "kfdo record: {}; {} taken branches at period {}, {} executable mappings, {} process(es) -> {}",
        crate::counts::recorded(out.samples),
        crate::counts::grouped(out.branches),
        a.period,
        out.mmaps,
        out.processes,
        out.output.display()
    ));
    if let Some(n) = out.windows {
        g.info(format!("kfdo record: {n} measurement window(s) recorded"));
    }
    if let Some(c) = &a.counters_out {
        g.info(format!("kfdo record: counters -> {}", c.display()));
    }
    g.info(format!("kfdo record: next: {next}"));
    if a.json {
        crate::json_out::print_summary(&EmulatedSummary {
            next,
            windows: out.windows,
            method: "emulated",
            output: &out.output,
            exit_code: out.exit_code,
            signal: out.signal,
            samples: out.samples,
            period: a.period,
            mmaps: out.mmaps,
            processes: out.processes,
            counters: out.counters.as_ref(),
            warnings: &out.warnings,
        })?;
    }
    Ok(())
}

fn print_kernel(
    a: &Args,
    out: &kfdo_record::SystemOutcome,
    next: &str,
    g: &Global,
) -> anyhow::Result<()> {
    for w in &out.warnings {
        g.info(format!("kfdo record: warning: {w}"));
    }
    g.info(format!(
        "kfdo record: {} samples recorded ({}) at period {} -> {}",
        crate::counts::grouped(out.samples),
        if a.user_only {
            "user mode"
        } else if a.kernel_and_user {
            "kernel and user mode"
        } else {
            "kernel mode"
        },
        a.period,
        out.output.display()
    ));
    if let Some(n) = out.windows {
        g.info(format!("kfdo record: {n} measurement window(s) recorded"));
    }
    for m in &out.modules {
        g.info(format!(
            "kfdo record: module {} .text at {:#x} -> {}",
            m.name,
            m.text,
            m.file.display()
        ));
    }
    if !a.module.is_empty() {
        g.info(format!(
            "kfdo record: guest console in {}",
            out.output.with_extension("console.txt").display()
        ));
    }
    g.info(format!("kfdo record: next: {next}"));
    if a.json {
        crate::json_out::print_summary(&KernelSummary {
            next,
            windows: out.windows,
            method: "emulated-kernel",
            output: &out.output,
            samples: out.samples,
            period: a.period,
            kernel_text: out.kernel_text.map(|t| format!("{t:#x}")),
            kaslr_offset: out.kaslr_offset.map(|t| format!("{t:#x}")),
            counters: out.counters.as_ref(),
            warnings: &out.warnings,
        })?;
    }
    Ok(())
}

/// `kfdo record --json` of a recording with `perf record`.
#[derive(serde::Serialize)]
struct HardwareSummary<'a> {
    method: &'static str,
    output: &'a Path,
    exit_code: i32,
    period: u64,
    perf_command: Vec<String>,
    next: &'a str,
}

/// `kfdo record --json` of a program recorded under emulation.
#[derive(serde::Serialize)]
struct EmulatedSummary<'a> {
    next: &'a str,
    windows: Option<usize>,
    method: &'static str,
    output: &'a Path,
    exit_code: i32,
    signal: Option<i32>,
    samples: u64,
    period: u64,
    mmaps: usize,
    processes: usize,
    counters: Option<&'a kfdo_record::CountersFile>,
    warnings: &'a [String],
}

/// `kfdo record --json` of a kernel recorded under emulation (addresses in hex).
#[derive(serde::Serialize)]
struct KernelSummary<'a> {
    next: &'a str,
    windows: Option<usize>,
    method: &'static str,
    output: &'a Path,
    samples: u64,
    period: u64,
    kernel_text: Option<String>,
    kaslr_offset: Option<String>,
    counters: Option<&'a kfdo_record::CountersFile>,
    warnings: &'a [String],
}
