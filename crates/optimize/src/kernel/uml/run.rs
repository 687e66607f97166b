//! Booting a twin natively: `linux mem=… initrd=… kfdo.exit=poweroff kfdo.run=…` as a
//! host process, and what it cost on the host. UML runs its kernel in that process and
//! each guest process in a child traced with ptrace, so the kernel's own code is the
//! process's user time (read from `/proc/PID/stat` once it has exited and before it is
//! reaped, which leaves its children out); its system time is mostly the host's ptrace
//! work on each guest system call, which no compiler flag of the guest kernel changes.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Context;

use crate::kernel::boot::WorkloadResult;
use crate::kernel::host_process::{run_timed, workload_results};

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

/// A preset delay-loop calibration (`lpj=`): without it every boot spends a busy loop of
/// fixed wall time calibrating `udelay`, user time of the UML process that no profile
/// changes and that varies with the host's timer. Only `udelay`'s length depends on it,
/// the same in every twin.
pub const LPJ: &str = "lpj=1000000";

/// The command line of a native boot.
pub fn args(b: &NativeRun<'_>) -> Vec<String> {
    vec![
        format!("mem={}M", b.memory_mb),
        format!("initrd={}", b.initrd.display()),
        format!("uml_dir={}", b.uml_dir.display()),
        LPJ.into(),
        "kfdo.exit=poweroff".into(),
        format!("kfdo.run={}", b.run),
    ]
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
    let run = run_timed(&mut cmd, Duration::from_secs(b.timeout_s))?;
    let what = format!(
        "booting {} natively with kfdo.run={}",
        b.exe.display(),
        b.run
    );
    let results = workload_results(&run, b.console, &what, b.timeout_s)?;
    Ok(NativeBoot {
        results,
        user_s: run.user_s,
        sys_s: run.sys_s,
        wall_s: run.wall_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
                "lpj=1000000",
                "kfdo.exit=poweroff",
                "kfdo.run=tcp_rr:100"
            ]
        );
    }
}
