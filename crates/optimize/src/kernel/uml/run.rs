//! Booting a twin natively: `linux mem=… initrd=… kfdo.exit=poweroff kfdo.run=…` as a
//! host process, and what it cost on the host. UML runs its kernel in that process and
//! each guest process in a child traced with ptrace, so the kernel's own code is the
//! process's user time (read from `/proc/PID/stat` once it has exited and before it is
//! reaped, which leaves its children out); its system time is mostly the host's ptrace
//! work on each guest system call, which no compiler flag of the guest kernel changes.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use rustix::process::{kill_process_group, waitid, Pid, Signal, WaitId, WaitIdOptions};

use crate::kernel::boot::{parse_console, tail, Console, WorkloadResult};
use crate::steps::interrupt;

/// What a native boot gave.
#[derive(Debug, Clone)]
pub struct NativeBoot {
    pub results: Vec<WorkloadResult>,
    /// Host CPU time of the UML kernel process, in seconds.
    pub user_s: f64,
    pub sys_s: f64,
    pub wall_s: f64,
}

/// A boot to make.
pub struct NativeRun<'a> {
    pub exe: &'a Path,
    pub initrd: &'a Path,
    /// `NAME:ARG[,...]` for the guest's /init.
    pub run: &'a str,
    pub memory_mb: u32,
    pub timeout_s: u64,
    /// Where the console goes.
    pub console: &'a Path,
    /// UML's own run-time directory (`uml_dir=`), instead of `~/.uml`.
    pub uml_dir: &'a Path,
}

/// The command line of a native boot.
pub fn args(b: &NativeRun<'_>) -> Vec<String> {
    vec![
        format!("mem={}M", b.memory_mb),
        format!("initrd={}", b.initrd.display()),
        format!("uml_dir={}", b.uml_dir.display()),
        "kfdo.exit=poweroff".into(),
        format!("kfdo.run={}", b.run),
    ]
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

/// Boots and times one native boot; an error names the executable and quotes its console.
pub fn boot_native(b: &NativeRun<'_>) -> anyhow::Result<NativeBoot> {
    std::fs::create_dir_all(b.uml_dir)?;
    let console = std::fs::File::create(b.console)
        .with_context(|| format!("cannot create {}", b.console.display()))?;
    let mut cmd = Command::new(b.exe);
    cmd.args(args(b))
        .stdin(Stdio::null())
        .stdout(Stdio::from(console.try_clone()?))
        .stderr(Stdio::from(console));
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let t0 = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", b.exe.display()))?;
    let _running = interrupt::Command::started(child.id());
    let pid = Pid::from_child(&child);
    let deadline = t0 + Duration::from_secs(b.timeout_s);
    let mut timed_out = false;
    // Wait for its exit without reaping it, so its /proc entry still holds its times.
    loop {
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOWAIT | WaitIdOptions::NOHANG;
        match waitid(WaitId::Pid(pid), options) {
            Ok(Some(_)) => break,
            Ok(None) => {}
            Err(e) => bail!("waiting for {}: {e}", b.exe.display()),
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
    // Whatever UML left running in its group (a guest process it had not reaped yet).
    let _ = kill_process_group(pid, Signal::KILL);
    let text = std::fs::read_to_string(b.console).unwrap_or_default();
    let what = format!(
        "booting {} natively with kfdo.run={} (console: {})",
        b.exe.display(),
        b.run,
        b.console.display()
    );
    if timed_out {
        bail!(
            "{what}: it did not finish within {} s; the console's last lines:\n{}",
            b.timeout_s,
            tail(&text, 15)
        );
    }
    let results = match parse_console(&text) {
        Console::Done(results) => results,
        Console::Failed(line) => bail!(
            "{what}: the workload failed in the guest: {line}\nthe console's last lines:\n{}",
            tail(&text, 15)
        ),
        Console::Unfinished => bail!(
            "{what}: the guest did not finish its workloads ({status}); the console's last \
             lines:\n{}",
            tail(&text, 15)
        ),
    };
    let (utime, stime) = own_cpu_ticks(&stat)
        .with_context(|| format!("{what}: no CPU times in /proc/{}/stat", child.id()))?;
    let tick = rustix::param::clock_ticks_per_second() as f64;
    Ok(NativeBoot {
        results,
        user_s: utime as f64 / tick,
        sys_s: stime as f64 / tick,
        wall_s,
    })
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
    fn the_command_line_keeps_uml_state_in_the_output() {
        let b = NativeRun {
            exe: Path::new("/o/uml/baseline/linux"),
            initrd: Path::new("/o/initramfs/workload.cpio.gz"),
            run: "tcp_rr:100",
            memory_mb: 256,
            timeout_s: 5,
            console: Path::new("/o/c"),
            uml_dir: Path::new("/o/uml/run"),
        };
        assert_eq!(
            args(&b),
            [
                "mem=256M",
                "initrd=/o/initramfs/workload.cpio.gz",
                "uml_dir=/o/uml/run",
                "kfdo.exit=poweroff",
                "kfdo.run=tcp_rr:100"
            ]
        );
    }
}
