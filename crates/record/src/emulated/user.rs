//! User mode: run a program under `qemu-x86_64` or `qemu-aarch64` (its ELF header says
//! which) with the plugin, pass its exit status
//! through, and write the perf.data.

use crate::emulated::capture::Capture;
use crate::emulated::counters::{write_counters, USER_SOURCE};
use crate::emulated::guest_arch;
use crate::emulated::guest_program::{resolve_program, Launch};
use crate::emulated::maps::{self, ElfInfo};
use crate::emulated::plugin::CaptureDir;
use crate::emulated::plugin_args::PluginArgs;
use crate::emulated::recording::{check_settings, no_window, RecordConfig, RecordOutcome, Window};
use crate::emulated::stream::{Stream, Tail};
use crate::error::Error;
use nix::sys::signal::{self, SigHandler, Signal};
use nix::unistd::Pid;
use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};

/// Runs `cfg.program` under emulation and writes `cfg.output`.
///
/// The program's stdin, stdout and stderr are this process's; its environment is this
/// process's plus `cfg.env`; its exit status comes back in [`RecordOutcome::exit_code`]
/// (also when it fails or crashes: a failing program is not an error of recording). The
/// perf.data is written to a temporary file beside `cfg.output` and renamed into place:
/// it is complete, or absent.
pub fn record_user(cfg: &RecordConfig) -> Result<RecordOutcome, Error> {
    check_settings(cfg.period, cfg.depth, &cfg.cache)?;
    let launch = resolve_program(&program_path(cfg), &cfg.args)?;
    let qemu = cfg
        .qemu
        .clone()
        .unwrap_or_else(|| guest_arch::qemu_user(launch.arch));

    let capture = CaptureDir::new(cfg.work_dir.as_deref())?;
    let stream_path = &capture.stream;
    let cmd = qemu_command(cfg, &launch, &qemu, &capture)?;
    let (exit_code, signal) = run_qemu(cmd, &qemu, cfg.handle_signals)?;

    let data = crate::emulated::stream::map_capture(stream_path);
    let stream = Stream::parse(stream_path, &data).map_err(|_| Error::Program {
        program: launch.display.clone(),
        what: format!(
            "QEMU ({}) exited with status {exit_code} before running it (see its message above)",
            qemu.display()
        ),
    })?;
    let mut cap = Capture::collect(&stream);
    check_capture(cfg, &launch, stream_path, &cap, exit_code, signal)?;
    let mut warnings = capture_warnings(&cap, signal);

    let mut elves: HashMap<Vec<u8>, Option<ElfInfo>> = HashMap::new();
    let maps = maps::normalize(&cap.raw_maps, cap.first_pc, &launch.exe, &mut elves);
    cap.raw_maps.clear();
    let comm = comm_of(&launch.exe);
    let written = crate::emulated::perfout::write(
        &cfg.output,
        &crate::emulated::perfout::Input {
            header: &stream.header,
            stream: &stream,
            maps: &maps,
            elves: &elves,
            threads: &cap.threads,
            forks: &cap.forks,
            exits: &cap.exits,
            comm: &comm,
            system: false,
            arch: launch.arch,
            counting: cfg.counters.is_some() || !cfg.samples_wanted,
        },
    )?;
    if written.samples == 0 {
        warnings.push(crate::emulated::perfout::no_samples_warning(cfg.period));
    }

    let counters = write_counters(
        cfg.counters.as_deref(),
        USER_SOURCE.into(),
        cfg.cache,
        &cap.counters,
    )?;

    Ok(RecordOutcome {
        exit_code,
        signal,
        samples: written.samples,
        branches: written.samples * cfg.period,
        mmaps: maps.len(),
        processes: cap.pids.len(),
        output: cfg.output.clone(),
        counters,
        warnings,
        windows: (cfg.window == Window::Markers).then_some(cap.windows),
    })
}

/// The program to run: a relative path with a `/` names a file in the directory the
/// program runs in (`cfg.cwd`); a bare name is looked up on PATH later.
fn program_path(cfg: &RecordConfig) -> OsString {
    match &cfg.cwd {
        Some(d)
            if cfg.program.as_bytes().contains(&b'/')
                && !cfg.program.as_bytes().starts_with(b"/") =>
        {
            d.join(&cfg.program).into_os_string()
        }
        _ => cfg.program.clone(),
    }
}

/// QEMU's command line: the plugin and its arguments, the program, its environment,
/// directory and standard streams; in the child, the signals this process handles while
/// recording are back to their defaults.
fn qemu_command(
    cfg: &RecordConfig,
    launch: &Launch,
    qemu: &Path,
    capture: &CaptureDir,
) -> Result<Command, Error> {
    let mut popt = PluginArgs::new(capture.plugin.path())
        .path("out", &capture.stream)
        .number("period", cfg.period)
        .number("depth", cfg.depth as u64)
        .path("exe", &launch.exe)
        .set("window", cfg.window.plugin_value());
    if cfg.counters.is_some() {
        popt = popt.counters(&cfg.cache);
    }

    let mut cmd = Command::new(qemu);
    cmd.args(guest_arch::sysroot_args(launch.arch, &cfg.env))
        .arg("-plugin")
        .arg(popt.into_os_string())
        .arg("-0")
        .arg(&launch.argv0)
        .arg(&launch.exe)
        .args(&launch.args);
    for (k, v) in &cfg.env {
        cmd.env(k, v);
    }
    if let Some(d) = &cfg.cwd {
        cmd.current_dir(d);
    }
    cfg.stdio
        .apply(&mut cmd)
        .map_err(|e| Error::io("cannot set up the program's standard streams", e))?;
    // SAFETY: `pre_exec`'s contract: the closure runs in the forked child before exec, so
    // it may only make async-signal-safe calls and must not allocate or take locks.
    // `signal` (sigaction underneath) is async-signal-safe, the closure allocates nothing,
    // and setting SIG_DFL installs no handler of ours in the child.
    unsafe {
        cmd.pre_exec(|| {
            for s in [
                Signal::SIGINT,
                Signal::SIGQUIT,
                Signal::SIGTERM,
                Signal::SIGHUP,
            ] {
                signal::signal(s, SigHandler::SigDfl)?;
            }
            Ok(())
        });
    }
    Ok(cmd)
}

/// Runs QEMU to its end, with this process's signals handled as [`SignalGuard`] says
/// (if `handle_signals`); the program's exit code (128 + the signal if a signal ended
/// it) and that signal.
fn run_qemu(
    mut cmd: Command,
    qemu: &Path,
    handle_signals: bool,
) -> Result<(i32, Option<i32>), Error> {
    let guard = SignalGuard::install(handle_signals);
    let mut child = cmd.spawn().map_err(|source| Error::Qemu {
        qemu: qemu.display().to_string(),
        source,
    })?;
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    let status = child.wait().map_err(|e| Error::io("waiting for QEMU", e))?;
    CHILD.store(0, Ordering::SeqCst);
    drop(guard);
    Ok(match (status.code(), status.signal()) {
        (Some(c), _) => (c, None),
        (None, Some(s)) => (128 + s, Some(s)),
        _ => (1, None),
    })
}

/// The errors a capture can end the recording with: the program never ran, no
/// measurement window opened (`window=markers`), or the stream could not be written.
fn check_capture(
    cfg: &RecordConfig,
    launch: &Launch,
    stream_path: &Path,
    cap: &Capture,
    exit_code: i32,
    signal: Option<i32>,
) -> Result<(), Error> {
    if cap.first_pc.is_none() {
        return Err(Error::Program {
            program: launch.display.clone(),
            what: format!(
                "QEMU exited with status {exit_code} before the program ran (see its message above)"
            ),
        });
    }
    if cfg.window == Window::Markers && cap.windows == 0 {
        return Err(no_window(launch.display.clone()));
    }
    if cap.write_failed || (signal.is_none() && !cap.ended) {
        return Err(Error::Output {
            path: stream_path.to_path_buf(),
            what: format!(
                "the capture stream is incomplete ({}): it could not be written (disk full?); \
                 no perf.data was written. Free space in the temporary directory or set TMPDIR",
                match cap.tail {
                    Tail::Truncated { offset } => format!("cut at byte {offset}"),
                    Tail::Clean => "no end record".into(),
                }
            ),
        });
    }
    Ok(())
}

/// What the outcome warns of in a capture that is kept: a stream cut short, a program
/// ended by a signal, exec'd programs that were not recorded.
fn capture_warnings(cap: &Capture, signal: Option<i32>) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Tail::Truncated { offset } = cap.tail {
        warnings.push(format!(
            "the capture stream was cut at byte {offset} (the program was killed while writing); \
             the samples before it are kept"
        ));
    }
    if let Some(s) = signal {
        warnings.push(format!(
            "the program was ended by signal {s} ({}); the perf.data holds what ran until then \
             (QEMU 7.2 does not let plugins finish on a fatal signal: the last <= 64 KiB of \
             samples are lost)",
            signal_name(s)
        ));
    }
    if cap.execs > 0 {
        warnings.push(format!(
            "{} exec call(s): QEMU runs exec'd programs natively, so they are not recorded",
            cap.execs
        ));
    }
    warnings
}

fn comm_of(exe: &Path) -> Vec<u8> {
    let name = exe
        .file_name()
        .map(|n| n.as_bytes().to_vec())
        .unwrap_or_default();
    name[..name.len().min(15)].to_vec()
}

fn signal_name(s: i32) -> &'static str {
    match s {
        libc::SIGINT => "SIGINT, Ctrl-C",
        libc::SIGTERM => "SIGTERM",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGHUP => "SIGHUP",
        _ => "signal",
    }
}

static CHILD: AtomicI32 = AtomicI32::new(0);

/// The handler of SIGTERM and SIGHUP while recording: passes the signal on to QEMU.
/// Async-signal-safe: an atomic load and `kill(2)`, no allocation, no lock.
extern "C" fn forward(sig: libc::c_int) {
    let pid = CHILD.load(Ordering::SeqCst);
    if let (true, Ok(sig)) = (pid > 0, Signal::try_from(sig)) {
        // Nothing to do on failure: QEMU has already exited.
        let _ = signal::kill(Pid::from_raw(pid), sig);
    }
}

/// While recording: SIGINT and SIGQUIT ignored (the terminal sends them to the program
/// too, which ends; the perf.data is then written), SIGTERM and SIGHUP forwarded.
struct SignalGuard {
    saved: Vec<(Signal, SigHandler)>,
}

impl SignalGuard {
    fn install(on: bool) -> SignalGuard {
        let mut saved = Vec::new();
        if !on {
            return SignalGuard { saved };
        }
        let handlers = [
            (Signal::SIGINT, SigHandler::SigIgn),
            (Signal::SIGQUIT, SigHandler::SigIgn),
            (Signal::SIGTERM, SigHandler::Handler(forward)),
            (Signal::SIGHUP, SigHandler::Handler(forward)),
        ];
        for (s, h) in handlers {
            // SAFETY: `signal`'s contract is that the handler installed be async-signal-safe
            // (`forward` only loads an atomic and calls kill(2)) and that no other thread
            // relies on this signal's disposition meanwhile: recording owns the process's
            // signals while `handle_signals` is on (a library caller that handles signals
            // itself leaves it off), and the guard puts back what it found.
            if let Ok(old) = unsafe { signal::signal(s, h) } {
                saved.push((s, old));
            }
        }
        SignalGuard { saved }
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        for &(s, h) in &self.saved {
            // SAFETY: puts back the disposition `install` found, which was in force before;
            // the same ownership of the process's signals as in `install` holds.
            let _ = unsafe { signal::signal(s, h) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::program_path;
    use crate::emulated::recording::RecordConfig;
    use std::path::PathBuf;

    /// With a working directory, only a relative path with a `/` is taken from it: a
    /// bare name is looked up on PATH, an absolute path stays.
    #[test]
    fn a_relative_program_path_is_in_the_programs_directory() {
        let with_cwd = |program: &str| {
            let mut cfg = RecordConfig::new(program, "perf.data");
            cfg.cwd = Some(PathBuf::from("/work/run"));
            program_path(&cfg)
        };
        assert_eq!(with_cwd("./a.out"), "/work/run/./a.out");
        assert_eq!(with_cwd("bin/a.out"), "/work/run/bin/a.out");
        assert_eq!(with_cwd("a.out"), "a.out");
        assert_eq!(with_cwd("/usr/bin/a.out"), "/usr/bin/a.out");
        assert_eq!(
            program_path(&RecordConfig::new("bin/a.out", "perf.data")),
            "bin/a.out"
        );
    }
}
