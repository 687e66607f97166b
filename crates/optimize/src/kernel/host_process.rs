//! A kernel that runs as a host process (a User-Mode Linux twin, QEMU under KVM), run to
//! its end or its time limit in its own process group, with the CPU time it used itself:
//! read from `/proc/PID/stat` once it has exited and before it is reaped, which leaves
//! the time of its children out.

use std::path::Path;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use rustix::process::{kill_process_group, waitid, Pid, Signal, WaitId, WaitIdOptions};

use super::boot::{parse_console, tail, Console, WorkloadResult};
use crate::steps::interrupt;

/// How a host process's run ended.
#[derive(Debug)]
pub struct HostRun {
    pub status: Option<ExitStatus>,
    /// Stopped (with its process group) at the time limit.
    pub timed_out: bool,
    pub wall_s: f64,
    /// Its own CPU time, in seconds (zero when it was stopped).
    pub user_s: f64,
    pub sys_s: f64,
}

/// `utime` and `stime` (fields 14 and 15) of a `/proc/PID/stat` line, in clock ticks.
pub fn own_cpu_ticks(stat: &str) -> Option<(u64, u64)> {
    // The command name (field 2) may hold spaces and parentheses: fields after it
    // start after its last ')'.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state): utime is field 14, index 11.
    Some((f.get(11)?.parse().ok()?, f.get(12)?.parse().ok()?))
}

/// Runs `cmd` (its standard streams set by the caller) for at most `timeout`.
pub fn run_timed(cmd: &mut Command, timeout: Duration) -> anyhow::Result<HostRun> {
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let program = cmd.get_program().to_string_lossy().into_owned();
    let t0 = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {program}"))?;
    let _running = interrupt::Command::started(child.id());
    let pid = Pid::from_child(&child);
    let deadline = t0 + timeout;
    let mut timed_out = false;
    // Wait for its exit without reaping it, so its /proc entry still holds its times.
    loop {
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOWAIT | WaitIdOptions::NOHANG;
        match waitid(WaitId::Pid(pid), options) {
            Ok(Some(_)) => break,
            Ok(None) => {}
            Err(e) => bail!("waiting for {program}: {e}"),
        }
        if Instant::now() >= deadline {
            timed_out = true;
            let _ = kill_process_group(pid, Signal::KILL);
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let wall_s = t0.elapsed().as_secs_f64();
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap_or_default();
    let status = child.wait()?;
    // Whatever it left running in its group.
    let _ = kill_process_group(pid, Signal::KILL);
    let tick = rustix::param::clock_ticks_per_second() as f64;
    let (user, sys) = if timed_out {
        (0, 0)
    } else {
        own_cpu_ticks(&stat)
            .with_context(|| format!("{program}: no CPU times in /proc/{}/stat", child.id()))?
    };
    Ok(HostRun {
        status: Some(status),
        timed_out,
        wall_s,
        user_s: user as f64 / tick,
        sys_s: sys as f64 / tick,
    })
}

/// The workloads' result lines of a finished run whose console is in `console`; an error
/// says `what` was run, how it ended, and quotes the console's last lines.
pub fn workload_results(
    run: &HostRun,
    console: &Path,
    what: &str,
    timeout_s: u64,
) -> anyhow::Result<Vec<WorkloadResult>> {
    let text = std::fs::read_to_string(console).unwrap_or_default();
    let what = format!("{what} (console: {})", console.display());
    if run.timed_out {
        bail!(
            "{what}: it did not finish within {timeout_s} s; the console's last lines:\n{}",
            tail(&text, 15)
        );
    }
    match parse_console(&text) {
        Console::Done(results) => Ok(results),
        Console::Failed(line) => bail!(
            "{what}: the workload failed in the guest: {line}\nthe console's last lines:\n{}",
            tail(&text, 15)
        ),
        Console::Unfinished => bail!(
            "{what}: the guest did not finish its workloads ({}); the console's last \
             lines:\n{}",
            run.status.map(|s| s.to_string()).unwrap_or_default(),
            tail(&text, 15)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_own_cpu_times_are_read_past_a_name_with_spaces() {
        let stat = "4242 (linux (x) y) Z 1 4242 4242 0 -1 4194560 1 0 0 0 37 151 9 4 20 0 1 0";
        assert_eq!(own_cpu_ticks(stat), Some((37, 151)));
        assert_eq!(own_cpu_ticks("garbage"), None);
    }

    #[test]
    fn a_process_past_its_limit_is_stopped_and_said_so() {
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let r = run_timed(&mut cmd, Duration::from_millis(200)).unwrap();
        assert!(r.timed_out && r.wall_s < 5.0, "{r:?}");
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"]);
        let r = run_timed(&mut cmd, Duration::from_secs(60)).unwrap();
        assert!(!r.timed_out && r.status.is_some_and(|s| s.success()));
        assert!(r.user_s > 0.0, "a busy loop used no user time: {r:?}");
    }
}
