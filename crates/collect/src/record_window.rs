//! One window's recording: `perf record` of the whole machine (or one cgroup) for the
//! window's length, into the spool's `work/`. perf dies with the collector (parent-death
//! signal), and a stop request ends the window early; a stopped window is not kept.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kfdo_record::hardware::{perf_record_command, Capabilities, Scope as PerfScope};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::config::{CollectConfig, Scope};
use crate::error::CollectError;

/// How a recording ended.
pub enum Recorded {
    /// perf.data written, the window whole.
    Done(PathBuf),
    /// Asked to stop: the window is lost.
    Stopped,
}

/// The `perf record` command of one window.
pub fn command(
    cfg: &CollectConfig,
    caps: &Capabilities,
    length: Duration,
    out: &Path,
) -> Result<Vec<OsString>, CollectError> {
    let secs = (length.as_millis() as f64 / 1000.0).max(0.001);
    let mut cmd = perf_record_command(
        caps,
        cfg.method,
        cfg.period,
        out,
        &[],
        PerfScope::System(secs),
    )
    .map_err(CollectError::Record)?;
    if let Scope::Cgroup(cg) = &cfg.scope {
        // perf applies -G to the events before it, and wants -a, which the system scope
        // gives; put it just before -a.
        let at = cmd
            .iter()
            .position(|a| a == "-a")
            .ok_or_else(|| CollectError::Record("perf's system-wide command has no -a".into()))?;
        cmd.insert(at, OsString::from(format!("--cgroup={cg}")));
    }
    Ok(cmd)
}

/// Records one window into `work/window.data`; perf's own messages go to
/// `work/perf.log`, quoted in the error when it fails.
pub fn record(
    cfg: &CollectConfig,
    caps: &Capabilities,
    length: Duration,
    work: &Path,
    stop: &AtomicBool,
) -> Result<Recorded, CollectError> {
    let out = work.join("window.data");
    let log_path = work.join("perf.log");
    let cmd = command(cfg, caps, length, &out)?;
    let log = std::fs::File::create(&log_path)
        .map_err(|e| CollectError::io(&log_path, "cannot create perf's log", e))?;
    let log2 = log
        .try_clone()
        .map_err(|e| CollectError::io(&log_path, "cannot share perf's log", e))?;
    let mut child = std::process::Command::new(&cmd[0]);
    child
        .args(&cmd[1..])
        .stdin(std::process::Stdio::null())
        .stdout(log)
        .stderr(log2);
    // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe and touches no memory of the
    // parent; it makes perf end when the collector dies, however it dies.
    unsafe {
        child.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(std::io::Error::from)
        });
    }
    let mut child = child.spawn().map_err(|e| {
        CollectError::Record(format!(
            "cannot run {}: {e}; install perf (Debian: linux-perf)",
            cmd[0].to_string_lossy()
        ))
    })?;
    let mut interrupted = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => return Err(CollectError::io(&out, "cannot wait for perf", e)),
        }
        if stop.load(Ordering::Relaxed) && !interrupted {
            interrupted = true;
            let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGINT);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if interrupted {
        let _ = std::fs::remove_file(&out);
        return Ok(Recorded::Stopped);
    }
    if !status.success() || !out.exists() {
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        // perf says what went wrong first, then may print its usage: keep the former.
        let said: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("or:"))
            .take(3)
            .collect();
        let tail = said.join(" / ");
        return Err(CollectError::Record(format!(
            "`{}` failed ({status}): {tail}",
            kfdo_record::hardware::shell_words(&cmd)
        )));
    }
    Ok(Recorded::Done(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kfdo_record::hardware::Method;

    fn caps() -> Capabilities {
        let mut c = Capabilities::from_root(Path::new("/nonexistent"));
        c.perf = Some(PathBuf::from("perf"));
        c
    }

    #[test]
    fn records_the_whole_machine_for_the_window() {
        let mut cfg = CollectConfig::new("/s", "h");
        cfg.method = Method::Ip;
        let cmd = command(
            &cfg,
            &caps(),
            Duration::from_millis(2500),
            Path::new("/w.data"),
        )
        .unwrap();
        let line = kfdo_record::hardware::shell_words(&cmd);
        assert_eq!(
            line,
            "perf record -e cpu-clock -c 1000000 -a -N -o /w.data -- sleep 2.5"
        );
    }

    #[test]
    fn a_cgroup_scope_adds_perfs_cgroup_filter() {
        let mut cfg = CollectConfig::new("/s", "h");
        cfg.scope = Scope::Cgroup("web".into());
        let cmd = command(&cfg, &caps(), Duration::from_secs(1), Path::new("/w.data")).unwrap();
        let line = kfdo_record::hardware::shell_words(&cmd);
        assert!(line.contains("--cgroup=web -a"), "{line}");
    }
}
