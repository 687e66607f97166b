//! System mode: boot a kernel under `qemu-system-x86_64` or `qemu-system-aarch64` (the
//! kernel's own architecture) with the plugin and write kernel samples with a
//! `[kernel.kallsyms]` mapping.

use crate::emulated::capture::Capture;
use crate::emulated::counters::write_counters;
use crate::emulated::counters::{CacheModel, CountersFile};
use crate::emulated::guest_arch;
use crate::emulated::guest_modules::{GuestModules, PlacedModule};
use crate::emulated::maps::{ElfInfo, Map};
use crate::emulated::plugin::CaptureDir;
use crate::emulated::plugin_args::PluginArgs;
use crate::emulated::recording::{
    check_settings, no_window, Window, DEFAULT_DEPTH, DEFAULT_PERIOD,
};
use crate::emulated::stream::{Event, Stream, Tail};
use crate::emulated::stream_format::kernel_text_range;
use crate::error::Error;
use crate::stdio::StdioPlan;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Which branches to keep (by privilege: kernel = upper half of the address space).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    All,
    User,
    Kernel,
}

#[derive(Debug, Clone)]
pub struct SystemConfig {
    pub kernel: PathBuf,
    pub initrd: Option<PathBuf>,
    pub append: Option<String>,
    /// The vmlinux of `kernel` (for its build-id and `_text` / `_stext` addresses).
    pub vmlinux: Option<PathBuf>,
    pub period: u64,
    pub depth: u32,
    pub output: PathBuf,
    pub counters: Option<PathBuf>,
    pub cache: CacheModel,
    pub filter: Filter,
    pub qemu: Option<PathBuf>,
    pub memory_mb: u32,
    pub timeout_s: u64,
    /// Where QEMU's output (the guest's serial console) and errors go; its stdin is
    /// always /dev/null.
    pub stdio: StdioPlan,
    /// The whole boot, or only the windows the guest's workload marks.
    pub window: Window,
    /// Whether the caller wants samples: a boot run for its counters or its console
    /// alone (a period no run reaches) sets it false, and a recording without samples
    /// is then no error.
    pub samples_wanted: bool,
    /// Modules the guest loads, whose samples then go to their `.ko` files.
    pub modules: Option<GuestModules>,
}

impl SystemConfig {
    pub fn new(kernel: impl Into<PathBuf>, output: impl Into<PathBuf>) -> SystemConfig {
        SystemConfig {
            kernel: kernel.into(),
            initrd: None,
            append: None,
            vmlinux: None,
            period: DEFAULT_PERIOD,
            depth: DEFAULT_DEPTH,
            output: output.into(),
            counters: None,
            cache: CacheModel::default(),
            filter: Filter::Kernel,
            qemu: None,
            memory_mb: 256,
            timeout_s: 600,
            stdio: StdioPlan::default(),
            window: Window::Whole,
            samples_wanted: true,
            modules: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct SystemOutcome {
    pub samples: u64,
    pub output: PathBuf,
    pub counters: Option<CountersFile>,
    pub warnings: Vec<String>,
    /// Runtime address of `_text` (the `[kernel.kallsyms]_text` mapping), when kernel
    /// branches were recorded.
    pub kernel_text: Option<u64>,
    /// Runtime minus link-time `_text` (the KASLR shift; 0 with `nokaslr`).
    pub kaslr_offset: Option<u64>,
    /// QEMU's exit code (None when a signal ended it).
    pub exit_status: Option<i32>,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// Measurement windows the guest opened (with `Window::Markers`).
    pub windows: Option<usize>,
    /// The modules placed (`SystemConfig::modules`), each with a mapping in the perf.data.
    pub modules: Vec<PlacedModule>,
}

/// x86-64 KASLR moves the kernel by a multiple of CONFIG_PHYSICAL_ALIGN (2 MiB by default).
const KASLR_ALIGN: u64 = 2 << 20;
const KERNEL_HALF: u64 = 0xffff_8000_0000_0000;
/// `_text` of an x86-64 kernel linked at the default address (no KASLR shift).
const DEFAULT_TEXT: u64 = 0xffff_ffff_8100_0000;

/// Boots `cfg.kernel` under `qemu-system-x86_64` (TCG) with the vLBR plugin in system mode
/// and writes a perf.data whose kernel samples come with a `[kernel.kallsyms]_text` MMAP
/// (pid -1, start = pgoff = runtime `_text`), as `perf record -a` writes it, and a
/// `[kernel.kallsyms]` build-id when `cfg.vmlinux` is given.
///
/// The guest's serial console is `cfg.stdio`'s stdout (default: this process's); the run ends when the guest powers
/// off (or reboots: QEMU runs with `-no-reboot`; the command line carries `panic=-1`), or
/// after `cfg.timeout_s` seconds (QEMU is then sent SIGTERM and what was recorded is kept,
/// with a warning).
///
/// KASLR: the runtime `_text` is found from the recorded kernel addresses: the lowest one,
/// rounded down to 2 MiB (x86-64 KASLR shifts by multiples of 2 MiB), relative to the
/// link-time `_text` of `cfg.vmlinux` when given. With a vmlinux, every recorded kernel
/// address must then fall inside `[_text, _end)`, else the run is refused (wrong vmlinux).
pub fn record_system(cfg: &SystemConfig) -> Result<SystemOutcome, Error> {
    let mut setup = set_up(cfg)?;
    let run = run(cfg, &mut setup)?;
    let mut warnings = run.warnings;
    let data = crate::emulated::stream::map_capture(&setup.capture.stream);
    let qemu_failed = || Error::Program {
        program: setup.qemu.display().to_string(),
        what: format!(
            "exited with {} before the guest ran (see its message above)",
            run.status
        ),
    };
    let stream = Stream::parse(&setup.capture.stream, &data).map_err(|_| qemu_failed())?;
    let cap = Capture::collect(&stream);
    check_capture(
        cfg,
        &setup.capture.stream,
        &cap,
        run.timed_out,
        &mut warnings,
    )?;
    let modules = match &cfg.modules {
        Some(g) => crate::emulated::guest_modules::place(g, &mut warnings)?,
        None => Vec::new(),
    };
    let placed = place_kernel(cfg, &setup, &stream, &cap, &modules, &mut warnings)?;
    let written = crate::emulated::perfout::write(
        &cfg.output,
        &crate::emulated::perfout::Input {
            header: &stream.header,
            stream: &stream,
            maps: &placed.maps,
            elves: &placed.elves,
            threads: &[],
            forks: &[],
            exits: &[],
            comm: b"",
            system: true,
            arch: setup.arch,
            counting: cfg.counters.is_some() || !cfg.samples_wanted,
        },
    )?;
    if written.samples == 0 {
        warnings.push(crate::emulated::perfout::no_samples_warning(cfg.period));
    }
    let counters = write_counters(
        cfg.counters.as_deref(),
        format!(
            "kfdo-vlbr emulated counters ({})",
            guest_arch::qemu_system(setup.arch).display()
        ),
        cfg.cache,
        &cap.counters,
    )?;
    Ok(SystemOutcome {
        samples: written.samples,
        output: cfg.output.clone(),
        counters,
        warnings,
        kernel_text: placed.kernel.map(|l| l.text),
        kaslr_offset: placed.kernel.map(|l| l.offset),
        exit_status: run.status.code(),
        elapsed: run.elapsed,
        windows: (cfg.window == Window::Markers).then_some(cap.windows),
        modules,
    })
}

/// What a run needs, checked and prepared before QEMU starts.
struct Setup {
    arch: kfdo_elf::Arch,
    vmlinux: Option<KernelElf>,
    qemu: PathBuf,
    /// QEMU's command line, ready to spawn.
    command: Command,
    /// The plugin and the capture it writes.
    capture: CaptureDir,
}

/// Checks the settings and the files, and prepares the plugin and QEMU's command line.
fn set_up(cfg: &SystemConfig) -> Result<Setup, Error> {
    check_settings(cfg.period, cfg.depth, &cfg.cache)?;
    for (what, p) in [
        ("kernel", Some(&cfg.kernel)),
        ("initrd", cfg.initrd.as_ref()),
    ] {
        if let Some(p) = p {
            if !p.is_file() {
                return Err(Error::Program {
                    program: p.display().to_string(),
                    what: format!("no such {what} file"),
                });
            }
        }
    }
    let vmlinux = match &cfg.vmlinux {
        Some(p) => Some(KernelElf::read(p)?),
        None => None,
    };
    let arch = kernel_arch(&cfg.kernel, vmlinux.as_ref(), cfg.vmlinux.as_deref())?;
    let qemu = cfg
        .qemu
        .clone()
        .unwrap_or_else(|| guest_arch::qemu_system(arch));
    let capture = CaptureDir::new(None)?;

    let mut popt = PluginArgs::new(capture.plugin.path())
        .path("out", &capture.stream)
        .number("period", cfg.period)
        .number("depth", cfg.depth as u64)
        .set(
            "filter",
            match cfg.filter {
                Filter::All => b"all",
                Filter::User => b"user",
                Filter::Kernel => b"kernel",
            },
        )
        .set("window", cfg.window.plugin_value());
    if cfg.counters.is_some() {
        popt = popt.counters(&cfg.cache);
    }
    let append = kernel_command_line(arch, cfg.append.as_deref());

    let mut cmd = Command::new(&qemu);
    cmd.args([
        "-nographic",
        "-no-reboot",
        "-accel",
        "tcg",
        "-smp",
        "1",
        "-net",
        "none",
    ])
    .args(guest_arch::system_machine_args(arch))
    .arg("-m")
    .arg(cfg.memory_mb.to_string())
    .arg("-kernel")
    .arg(&cfg.kernel);
    if let Some(i) = &cfg.initrd {
        cmd.arg("-initrd").arg(i);
    }
    cmd.arg("-append")
        .arg(&append)
        .arg("-plugin")
        .arg(popt.into_os_string());
    cfg.stdio
        .apply(&mut cmd)
        .map_err(|e| Error::io("cannot set up QEMU's standard streams", e))?;
    // The guest console reads nothing: a workload runs from the initramfs on its own.
    cmd.stdin(Stdio::null());
    Ok(Setup {
        arch,
        vmlinux,
        qemu,
        command: cmd,
        capture,
    })
}

/// How QEMU's run ended.
struct Run {
    status: std::process::ExitStatus,
    timed_out: bool,
    elapsed: Duration,
    warnings: Vec<String>,
}

/// Boots the guest and waits for it to power off, or stops it at the timeout.
fn run(cfg: &SystemConfig, setup: &mut Setup) -> Result<Run, Error> {
    let started = Instant::now();
    let mut child = setup.command.spawn().map_err(|source| Error::Qemu {
        qemu: setup.qemu.display().to_string(),
        source,
    })?;
    let mut warnings = Vec::new();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => return Err(Error::io("waiting for QEMU", e)),
        }
        if !timed_out && started.elapsed() > Duration::from_secs(cfg.timeout_s) {
            timed_out = true;
            // SIGTERM: QEMU shuts down cleanly and the plugin writes its tail.
            // Failure means QEMU already exited; the loop's next `try_wait` reaps it.
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
            warnings.push(format!(
                "the guest did not finish within {} s (no power-off or reboot): QEMU was \
                 stopped; the samples recorded until then are kept (have the workload call \
                 reboot(RB_AUTOBOOT) at its end)",
                cfg.timeout_s
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if !status.success() && !timed_out {
        warnings.push(format!("QEMU exited with {status}"));
    }
    Ok(Run {
        status,
        timed_out,
        elapsed: started.elapsed(),
        warnings,
    })
}

/// Refuses a capture that is incomplete or lacks the measurement window asked for.
fn check_capture(
    cfg: &SystemConfig,
    stream_path: &Path,
    cap: &Capture,
    timed_out: bool,
    warnings: &mut Vec<String>,
) -> Result<(), Error> {
    if cap.write_failed || (!cap.ended && !timed_out) {
        return Err(Error::Output {
            path: stream_path.to_path_buf(),
            what: "the capture stream is incomplete: it could not be written (disk full?) or \
                   QEMU died; no perf.data was written"
                .into(),
        });
    }
    if let Tail::Truncated { offset } = cap.tail {
        warnings.push(format!(
            "the capture stream was cut at byte {offset}; the samples before it are kept"
        ));
    }
    if cfg.window == Window::Markers && cap.windows == 0 {
        if timed_out {
            return Err(Error::Program {
                program: cfg.kernel.display().to_string(),
                what: format!(
                    "the guest did not finish within {} s: QEMU was stopped before the \
                     workload opened a measurement window (raise the timeout, or see the \
                     console for a boot that hangs)",
                    cfg.timeout_s
                ),
            });
        }
        return Err(no_window(cfg.kernel.display().to_string()));
    }
    Ok(())
}

/// The mappings of the perf.data: the kernel image where the samples place it, and the
/// placed modules.
struct Placed {
    maps: Vec<Map>,
    elves: HashMap<Vec<u8>, Option<ElfInfo>>,
    kernel: Option<Layout>,
}

/// Places the kernel image from the recorded kernel addresses (its KASLR shift, checked
/// against the vmlinux when given) and maps it and the placed modules.
fn place_kernel(
    cfg: &SystemConfig,
    setup: &Setup,
    stream: &Stream<'_>,
    cap: &Capture,
    modules: &[PlacedModule],
    warnings: &mut Vec<String>,
) -> Result<Placed, Error> {
    let (arch, vmlinux) = (setup.arch, &setup.vmlinux);
    // The kernel's runtime layout, from the recorded kernel addresses and the lowest
    // kernel text the guest executed (the boot's, which a window leaves out).
    // Only the kernel image's range: module code (above it) and the direct map (below)
    // are not part of vmlinux and must not stretch its mapping.
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    let mut outside_image = 0u64;
    let image_range = kernel_text_range(arch == kfdo_elf::Arch::Aarch64);
    let mut see = |a: u64| {
        if image_range.contains(&a) {
            lo = lo.min(a);
            hi = hi.max(a);
        } else if a >= KERNEL_HALF && !modules.iter().any(|m| m.contains(a)) {
            outside_image += 1;
        }
    };
    for e in stream.events() {
        if let Event::Sample(s) = e {
            see(s.ip);
            for (f, t) in s.branches() {
                see(f);
                see(t);
            }
        }
    }
    if outside_image > 0 {
        warnings.push(format!(
            "{outside_image} recorded kernel addresses lie outside the kernel image and the \
             placed modules (code of other modules, most likely): they are kept in the \
             perf.data but attributed to no file"
        ));
    }
    if lo <= hi {
        if let Some(l) = cap.lowest_kernel_text {
            lo = lo.min(l);
        }
    }
    let mut maps = Vec::new();
    let mut elves: HashMap<Vec<u8>, Option<ElfInfo>> = HashMap::new();
    let kmap = if lo <= hi {
        let layout =
            kernel_layout(arch, lo, hi, vmlinux.as_ref()).map_err(|what| Error::Program {
                program: cfg
                    .vmlinux
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                what,
            })?;
        let path = b"[kernel.kallsyms]_text".to_vec();
        elves.insert(
            path.clone(),
            Some(ElfInfo {
                loads: Vec::new(),
                build_id: vmlinux.as_ref().and_then(|k| k.build_id.clone()),
            }),
        );
        maps.push(Map {
            time: stream.header.start_ns,
            pid: -1,
            tid: 0,
            start: layout.text,
            len: layout.len,
            pgoff: layout.text,
            prot: libc::PROT_READ as u32 | libc::PROT_EXEC as u32,
            flags: 0,
            maj: 0,
            min: 0,
            ino: 0,
            path,
        });
        Some(layout)
    } else {
        if cfg.filter != Filter::User {
            warnings.push("no kernel branches were recorded".into());
        }
        None
    };

    for m in modules {
        let map = m.map(stream.header.start_ns);
        elves.insert(
            map.path.clone(),
            Some(ElfInfo {
                loads: Vec::new(),
                build_id: m.build_id.clone(),
            }),
        );
        maps.push(map);
    }

    Ok(Placed {
        maps,
        elves,
        kernel: kmap,
    })
}

/// The kernel command line: the board's serial console (and what else the architecture
/// needs), a panic that ends QEMU, then the user's.
pub fn kernel_command_line(arch: kfdo_elf::Arch, user: Option<&str>) -> String {
    let mut s = format!(
        "{} panic=-1 oops=panic quiet loglevel=4",
        guest_arch::system_console_args(arch)
    );
    if let Some(u) = user {
        s.push(' ');
        s.push_str(u);
    }
    s
}

#[derive(Debug, Clone, Copy)]
struct Layout {
    /// Runtime `_text`.
    text: u64,
    /// Bytes from `_text` covered by the mapping.
    len: u64,
    /// Runtime minus link-time `_text`.
    offset: u64,
}

fn kernel_layout(
    arch: kfdo_elf::Arch,
    lo: u64,
    hi: u64,
    k: Option<&KernelElf>,
) -> Result<Layout, String> {
    let default_text = match arch {
        kfdo_elf::Arch::Aarch64 => kernel_text_range(true).start,
        _ => DEFAULT_TEXT,
    };
    let link_text = k.map_or(default_text, |k| k.text);
    let offset = if lo >= link_text {
        (lo - link_text) / KASLR_ALIGN * KASLR_ALIGN
    } else {
        return Err(format!(
            "a recorded kernel address ({lo:#x}) lies below the kernel's link address \
             ({link_text:#x}): is this the vmlinux of the booted kernel?"
        ));
    };
    let text = link_text + offset;
    let len = match k {
        Some(k) => {
            let len = k.end - k.text;
            if hi >= text + len {
                return Err(format!(
                    "recorded kernel addresses {lo:#x}..{hi:#x} do not fit in this vmlinux's \
                     [_text, _end) = {:#x}..{:#x} at any 2 MiB KASLR offset: is this the \
                     vmlinux of the booted kernel?",
                    k.text, k.end
                ));
            }
            len
        }
        None => (hi + 1 - text + 0xfff) & !0xfff,
    };
    Ok(Layout { text, len, offset })
}

/// The architecture of the kernel to boot, from its headers: the vmlinux's ELF machine
/// when there is one, which the image's boot header must then agree with; else the
/// image's boot header alone. Never from a flag.
fn kernel_arch(
    image: &Path,
    vmlinux: Option<&KernelElf>,
    vmlinux_path: Option<&Path>,
) -> Result<kfdo_elf::Arch, Error> {
    let mut head = Vec::with_capacity(0x400);
    {
        use std::io::Read;
        let f = std::fs::File::open(image).map_err(|e| Error::Program {
            program: image.display().to_string(),
            what: format!("cannot read the kernel image: {e}"),
        })?;
        f.take(0x400)
            .read_to_end(&mut head)
            .map_err(|e| Error::Program {
                program: image.display().to_string(),
                what: format!("cannot read the kernel image: {e}"),
            })?;
    }
    let from_image = guest_arch::kernel_image_arch(&head);
    let arch = match (vmlinux.map(|k| k.arch), from_image) {
        (Some(v), Some(i)) if v != i => {
            return Err(Error::Program {
                program: image.display().to_string(),
                what: format!(
                    "is a {} kernel image, but the vmlinux {} is {}: give the vmlinux of                      this kernel",
                    i,
                    vmlinux_path.map(|p| p.display().to_string()).unwrap_or_default(),
                    v
                ),
            })
        }
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => {
            return Err(Error::Program {
                program: image.display().to_string(),
                what: "is neither an x86 bzImage, an arm64 Image nor an ELF kernel: give the \
                       kernel image the build made (arch/x86/boot/bzImage, \
                       arch/arm64/boot/Image)"
                    .into(),
            })
        }
    };
    if !guest_arch::supported(arch) {
        return Err(Error::Program {
            program: image.display().to_string(),
            what: format!("is a {arch} kernel: kfdo boots x86-64 and arm64 kernels"),
        });
    }
    Ok(arch)
}

/// What the recorder needs of a vmlinux: `_text`, `_end`, the build-id and the
/// architecture.
#[derive(Debug, Clone)]
pub struct KernelElf {
    pub text: u64,
    pub end: u64,
    pub build_id: Option<Vec<u8>>,
    pub arch: kfdo_elf::Arch,
}

impl KernelElf {
    pub fn read(path: &Path) -> Result<KernelElf, Error> {
        let bad = |what: String| Error::Program {
            program: path.display().to_string(),
            what,
        };
        let bin = kfdo_elf::Binary::open(path).map_err(|e| match e {
            kfdo_elf::ElfError::Io { source, .. } => bad(format!("cannot read: {source}")),
            kfdo_elf::ElfError::Malformed { what, .. } => bad(format!(
                "is a malformed or truncated ELF file ({what}): give the vmlinux of the booted kernel"
            )),
            _ => bad("is not a 64-bit little-endian ELF file (give the vmlinux)".into()),
        })?;
        let text = bin
            .symbol_address("_text")
            .ok_or_else(|| bad("has no _text symbol: is it a vmlinux?".into()))?;
        let end = bin
            .symbol_address("_end")
            .ok_or_else(|| bad("has no _end symbol: is it a vmlinux?".into()))?;
        if end <= text {
            return Err(bad(format!(
                "_end ({end:#x}) is not above _text ({text:#x})"
            )));
        }
        Ok(KernelElf {
            text,
            end,
            build_id: bin.build_id().map(<[u8]>::to_vec),
            arch: bin.arch(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kfdo_elf::Arch;

    fn image(dir: &Path, name: &str, at: usize, magic: &[u8]) -> PathBuf {
        let mut bytes = vec![0u8; 0x400];
        bytes[at..at + magic.len()].copy_from_slice(magic);
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn the_kernel_architecture_comes_from_its_headers_and_must_agree() {
        let dir = tempfile::tempdir().unwrap();
        let arm = image(dir.path(), "Image", 0x38, b"ARM\x64");
        let x86 = image(dir.path(), "bzImage", 0x202, b"HdrS");
        let junk = image(dir.path(), "junk", 0, b"junk");
        let elf = |arch| KernelElf {
            text: 0,
            end: 1,
            build_id: None,
            arch,
        };
        assert_eq!(kernel_arch(&arm, None, None).unwrap(), Arch::Aarch64);
        assert_eq!(kernel_arch(&x86, None, None).unwrap(), Arch::X86_64);
        let v = Path::new("x86/vmlinux");
        assert_eq!(
            kernel_arch(&x86, Some(&elf(Arch::X86_64)), Some(v)).unwrap(),
            Arch::X86_64
        );
        let err = kernel_arch(&arm, Some(&elf(Arch::X86_64)), Some(v))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("Image") && err.contains("x86/vmlinux") && err.contains("aarch64"),
            "{err}"
        );
        let err = kernel_arch(&junk, None, None).unwrap_err().to_string();
        assert!(err.contains("junk") && err.contains("bzImage"), "{err}");
        assert!(
            kernel_command_line(Arch::Aarch64, Some("x=1")).starts_with("console=ttyAMA0 nokaslr")
        );
    }

    #[test]
    fn an_arm64_kernel_is_placed_at_its_link_address() {
        let k = KernelElf {
            text: 0xffff_8000_8000_0000,
            end: 0xffff_8000_8043_0000,
            build_id: None,
            arch: Arch::Aarch64,
        };
        let l = kernel_layout(
            Arch::Aarch64,
            k.text + 0x1_0000,
            k.text + 0x20_0000,
            Some(&k),
        )
        .unwrap();
        assert_eq!((l.text, l.offset), (k.text, 0));
        // An address past the image's end: not this vmlinux.
        assert!(kernel_layout(Arch::Aarch64, k.text, k.end + 0x1000, Some(&k)).is_err());
    }
}
