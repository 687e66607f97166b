//! `kfdo record` as one typed call: what to record (a command, the whole machine, or
//! a kernel booted under emulation), how (a method, or `auto` with its reasons), and
//! where the output goes. The binary parses arguments into a [`RecordRequest`] and
//! prints the [`Recorded`] it gets back; `kfdo optimize` builds the same request.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::emulated::counters::CacheModel;
use crate::emulated::guest_arch;
use crate::emulated::guest_modules::GuestModules;
use crate::emulated::guest_program;
use crate::emulated::recording::{
    RecordConfig, RecordOutcome, Window, DEFAULT_DEPTH, DEFAULT_PERIOD,
};
use crate::emulated::system::{record_system, Filter, SystemConfig, SystemOutcome};
use crate::emulated::user::record_user;
use crate::error::Error;
use crate::hardware::{self, Capabilities, Method, Scope};
use crate::stdio::{ChildSetup, StdStream};

/// What to record.
#[derive(Debug, Clone)]
pub enum Target {
    /// A program and its arguments; `method: None` is `auto`.
    Command {
        argv: Vec<OsString>,
        method: Option<Method>,
    },
    /// The whole machine with hardware perf (`-a`) for `seconds`.
    System {
        seconds: f64,
        scope: SystemScope,
        method: Option<Method>,
    },
    /// A kernel booted under QEMU (its own architecture's system emulator) with the
    /// emulated LBR.
    EmulatedKernel(KernelBoot),
}

/// Which side of the machine a system-wide hardware recording keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemScope {
    All,
    Kernel,
    User,
}

/// A kernel to boot and record.
#[derive(Debug, Clone)]
pub struct KernelBoot {
    pub kernel: PathBuf,
    pub initrd: Option<PathBuf>,
    pub append: Option<String>,
    /// The vmlinux (with symbols) named in the perf.data.
    pub vmlinux: Option<PathBuf>,
    pub filter: Filter,
    /// The system emulator (default: the kernel's architecture's, from PATH).
    pub qemu_system: Option<PathBuf>,
    /// Kernel modules (`.ko`) the guest loads and reports (`kfdo-module:` lines): their
    /// samples are mapped to these files. The guest's console then goes to
    /// `OUTPUT.console.txt`, where the recorder reads those lines.
    pub modules: Vec<PathBuf>,
}

/// A recording to make.
#[derive(Debug, Clone)]
pub struct RecordRequest {
    pub target: Target,
    /// The perf.data to write.
    pub output: PathBuf,
    /// Sample every `period` taken branches.
    pub period: u64,
    /// Branch records per sample (emulated; hardware gives what it has).
    pub depth: u32,
    /// Also write emulated counters as JSON here (emulated methods).
    pub counters: Option<PathBuf>,
    pub cache: CacheModel,
    /// The QEMU user-mode emulator (default: qemu-x86_64 from PATH).
    pub qemu: Option<PathBuf>,
    /// The recorded program's working directory, environment additions and standard
    /// streams (for a kernel: where the guest console goes).
    pub child: ChildSetup,
    /// Ignore Ctrl-C and forward SIGTERM to the program while it runs, as `perf record`
    /// does (command-line use; a library caller handling signals leaves it off).
    pub handle_signals: bool,
    /// The whole run, or only the guest's marked windows (emulated methods).
    pub window: Window,
}

impl RecordRequest {
    pub fn new(target: Target, output: impl Into<PathBuf>) -> RecordRequest {
        RecordRequest {
            target,
            output: output.into(),
            period: DEFAULT_PERIOD,
            depth: DEFAULT_DEPTH,
            counters: None,
            cache: CacheModel::default(),
            qemu: None,
            child: ChildSetup::default(),
            handle_signals: false,
            window: Window::Whole,
        }
    }
}

/// What was recorded, and how.
#[derive(Debug, Clone)]
pub enum Recorded {
    /// A command under QEMU with the emulated LBR.
    Emulated(RecordOutcome),
    /// A command or the machine with `perf record`.
    Hardware {
        method: Method,
        /// The perf command line that ran.
        command: Vec<OsString>,
        /// The recorded command's exit status (perf passes it on).
        exit_code: i32,
    },
    /// A kernel under qemu-system-x86_64 or qemu-system-aarch64.
    Kernel(SystemOutcome),
}

impl Recorded {
    /// The method that recorded it (`auto` resolved).
    pub fn method(&self) -> Method {
        match self {
            Recorded::Emulated(_) | Recorded::Kernel(_) => Method::Emulated,
            Recorded::Hardware { method, .. } => *method,
        }
    }

    /// The exit status to pass on: the recorded program's, or 0 for a kernel.
    pub fn exit_code(&self) -> i32 {
        match self {
            Recorded::Emulated(o) => o.exit_code,
            Recorded::Hardware { exit_code, .. } => *exit_code,
            Recorded::Kernel(_) => 0,
        }
    }
}

/// The method to record a command with: `requested`, checked against this machine, or
/// `auto`'s choice. `say` hears each step of the choice (which method was passed over
/// and why).
pub fn choose_method(
    caps: &Capabilities,
    requested: Option<Method>,
    say: &mut dyn FnMut(&str),
) -> Result<Method, Error> {
    match requested {
        Some(m) => {
            caps.usable(m)
                .map_err(|why| Error::Request(format!("--method {}: {why}", m.name())))?;
            Ok(m)
        }
        None => {
            let (m, steps) = caps.choose_auto();
            for s in steps {
                say(&s);
            }
            Ok(m)
        }
    }
}

/// The method for a program of another architecture than the host's (`arch`, from its
/// ELF header): only emulation runs it, so `auto` is emulation and a hardware method is
/// an error that says so. `own_qemu`: the caller named the emulator.
fn foreign_method(
    arch: kfdo_elf::Arch,
    requested: Option<Method>,
    own_qemu: bool,
    say: &mut dyn FnMut(&str),
) -> Result<Method, Error> {
    let host = guest_arch::host_arch().map_or("this".to_string(), |h| h.to_string());
    if let Some(m) = requested.filter(|&m| m != Method::Emulated) {
        return Err(Error::Request(format!(
            "--method {}: the program is an {arch} program and this host is {host}: hardware perf \
             cannot run it; use --method emulated (or auto), which runs it under {}",
            m.name(),
            guest_arch::qemu_user(arch).display()
        )));
    }
    let qemu = guest_arch::qemu_user(arch);
    if !own_qemu && !guest_arch::on_path(&qemu) {
        return Err(Error::Request(format!(
            "the program is an {arch} program: recording it needs {} (apt-get install \
             qemu-user)",
            qemu.display()
        )));
    }
    if requested.is_none() {
        say(&format!(
            "the program is an {arch} program and the host is {host}: using emulated LBR ({} \
             + vLBR plugin)",
            qemu.display()
        ));
    }
    Ok(Method::Emulated)
}

/// Records what `req` asks for. `say` hears what the user should see before and while it
/// runs (the method chosen and why, the perf command); warnings of the recording itself
/// come back in the result.
pub fn record(req: &RecordRequest, say: &mut dyn FnMut(&str)) -> Result<Recorded, Error> {
    if req.period == 0 {
        return Err(Error::Request("--period must be at least 1".into()));
    }
    match &req.target {
        Target::EmulatedKernel(boot) => record_kernel(req, boot).map(Recorded::Kernel),
        Target::System { .. } if req.window == Window::Markers => Err(Error::Request(
            "--window markers needs the emulated method; --system records this machine \
                 with hardware perf"
                .into(),
        )),
        Target::System {
            seconds,
            scope,
            method,
        } => record_machine(req, *seconds, *scope, *method, say),
        Target::Command { argv, method } => {
            if argv.is_empty() {
                return Err(Error::Request(
                    "no command to record: give it after `--`, e.g. kfdo record -- ./a.out ARGS"
                        .into(),
                ));
            }
            let caps = Capabilities::detect();
            let chosen = match guest_program::foreign_program(&argv[0]) {
                Some(arch) => foreign_method(arch, *method, req.qemu.is_some(), say)?,
                None => choose_method(&caps, *method, say)?,
            };
            match chosen {
                Method::Emulated => record_emulated(req, argv).map(Recorded::Emulated),
                m if req.window == Window::Markers => Err(Error::Request(format!(
                    "--window markers needs the emulated method (the plugin sees the \
                     markers); {} records the whole run: add --method emulated",
                    m.name()
                ))),
                m => {
                    let cmd = hardware::perf_record_command(
                        &caps,
                        m,
                        req.period,
                        &req.output,
                        argv,
                        Scope::Command,
                    )
                    .map_err(Error::Request)?;
                    run_perf(req, m, cmd, say)
                }
            }
        }
    }
}

fn run_perf(
    req: &RecordRequest,
    method: Method,
    command: Vec<OsString>,
    say: &mut dyn FnMut(&str),
) -> Result<Recorded, Error> {
    say(&format!("running {}", hardware::shell_words(&command)));
    let exit_code =
        hardware::run_perf_checked(&command, method, &req.output, req.period, &req.child)?;
    Ok(Recorded::Hardware {
        method,
        command,
        exit_code,
    })
}

fn record_emulated(req: &RecordRequest, argv: &[OsString]) -> Result<RecordOutcome, Error> {
    let mut cfg = RecordConfig::new(argv[0].clone(), req.output.clone())
        .args(argv[1..].iter().cloned())
        .period(req.period)
        .depth(req.depth);
    cfg.counters = req.counters.clone();
    cfg.cache = req.cache;
    cfg.qemu = req.qemu.clone();
    cfg.handle_signals = req.handle_signals;
    cfg.stdio = req.child.stdio.clone();
    cfg.env.extend(req.child.env.iter().cloned());
    cfg.cwd = req.child.cwd.clone();
    cfg.window = req.window;
    record_user(&cfg)
}

fn record_machine(
    req: &RecordRequest,
    seconds: f64,
    scope: SystemScope,
    method: Option<Method>,
    say: &mut dyn FnMut(&str),
) -> Result<Recorded, Error> {
    if seconds.is_nan() || seconds <= 0.0 {
        return Err(Error::Request("--duration must be positive".into()));
    }
    let caps = Capabilities::detect();
    let method = match method {
        Some(Method::Emulated) => {
            return Err(Error::Request(
                "--system records this machine with hardware perf; for an emulated kernel \
                 profile use --emulated-kernel"
                    .into(),
            ))
        }
        Some(m) => {
            caps.usable(m)
                .map_err(|why| Error::Request(format!("--method {}: {why}", m.name())))?;
            m
        }
        None => {
            let (m, steps) = caps.choose_auto_system();
            for s in steps {
                say(&s);
            }
            m
        }
    };
    let scope = match scope {
        SystemScope::Kernel => Scope::SystemKernel(seconds),
        SystemScope::User => Scope::SystemUser(seconds),
        SystemScope::All => Scope::System(seconds),
    };
    let cmd = hardware::perf_record_command(&caps, method, req.period, &req.output, &[], scope)
        .map_err(Error::Request)?;
    run_perf(req, method, cmd, say)
}

fn record_kernel(req: &RecordRequest, boot: &KernelBoot) -> Result<SystemOutcome, Error> {
    let mut cfg = SystemConfig::new(boot.kernel.clone(), req.output.clone());
    cfg.initrd = boot.initrd.clone();
    cfg.append = boot.append.clone();
    cfg.vmlinux = boot.vmlinux.clone();
    cfg.period = req.period;
    cfg.depth = req.depth;
    cfg.counters = req.counters.clone();
    cfg.cache = req.cache;
    cfg.qemu = boot.qemu_system.clone();
    cfg.filter = boot.filter;
    cfg.stdio = req.child.stdio.clone();
    cfg.window = req.window;
    if !boot.modules.is_empty() {
        let console = req.output.with_extension("console.txt");
        let file = std::fs::File::create(&console).map_err(|e| {
            Error::io(
                format!("cannot create the console file {}", console.display()),
                e,
            )
        })?;
        cfg.stdio.stdout = StdStream::file(file);
        cfg.modules = Some(GuestModules {
            console,
            files: boot.modules.clone(),
        });
    }
    record_system(&cfg)
}
