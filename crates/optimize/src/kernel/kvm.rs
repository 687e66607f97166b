//! Real time where KVM works: every variant booted again with `-accel kvm -cpu host`, one
//! vCPU pinned to one host CPU (`taskset`), interleaved, judged on the workloads' own
//! operations per second and latencies, which are then the guest's real time. QEMU's
//! plugins run under TCG only, so these boots count nothing; the counters stay the TCG
//! boots'. Whether KVM works is `kfdo_record::kvm::probe`'s answer (a KVM that cannot run
//! a standard guest, such as the paravirtual nested `kvm_pvm`, is reported, not used).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Context;

use super::boot_trials::{stem_file, BootFailure, BootTrials, Booted, Booter};
use super::ctx::KernelCtx;
use super::host_process::{run_timed, workload_results};
use super::judge::{compare_boots, contender_arms, workload_metrics, BootComparison, Contender};

/// One boot under KVM.
pub struct KvmBoot<'a> {
    pub image: &'a Path,
    pub initrd: &'a Path,
    /// The kernel command line (console, kfdo.run=, modules).
    pub append: &'a str,
    pub memory_mb: u32,
    /// The host CPU the vCPU is pinned to.
    pub cpu: usize,
}

/// `taskset -c CPU qemu-system-x86_64 -accel kvm -cpu host ...`.
pub fn command_line(b: &KvmBoot<'_>) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "taskset".into(),
        "-c".into(),
        b.cpu.to_string(),
        "qemu-system-x86_64".into(),
    ];
    v.extend(
        [
            "-nographic",
            "-no-reboot",
            "-accel",
            "kvm",
            "-cpu",
            "host",
            "-smp",
            "1",
            "-net",
            "none",
            "-m",
        ]
        .map(String::from),
    );
    v.push(b.memory_mb.to_string());
    v.push("-kernel".into());
    v.push(b.image.display().to_string());
    v.push("-initrd".into());
    v.push(b.initrd.display().to_string());
    v.push("-append".into());
    v.push(b.append.to_string());
    v
}

/// The host CPU to pin to: the last one (the first ones take the system's own work).
pub fn pinned_cpu() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get() - 1)
        .unwrap_or(0)
}

/// The KVM boots: the workloads' rates in real time.
struct KvmBooter<'a> {
    ctx: &'a KernelCtx,
    contenders: &'a [Contender],
    run: &'a str,
}

impl Booter for KvmBooter<'_> {
    fn variant(&self, i: usize) -> &str {
        &self.contenders[i].kernel.variant
    }

    fn command(&self, _: usize, run: &str) -> String {
        format!("KVM boot with kfdo.run={run}")
    }

    fn boot_word(&self) -> &'static str {
        "KVM boot"
    }

    fn boot(&self, i: usize, stem: &Path) -> Result<Booted, BootFailure> {
        let c = &self.contenders[i];
        let console = stem_file(stem, "console");
        let r = &self.ctx.recipe;
        let append = kfdo_record::kernel_command_line(
            kfdo_elf::Arch::X86_64,
            Some(&format!("kfdo.run={} {}", self.run, self.ctx.insmod_args())),
        );
        let line = command_line(&KvmBoot {
            image: &c.kernel.image,
            initrd: &c.initrd.0,
            append: append.trim(),
            memory_mb: r.kernel.memory_mb,
            cpu: pinned_cpu(),
        });
        let out = std::fs::File::create(&console)
            .with_context(|| format!("cannot create {}", console.display()))?;
        let mut cmd = Command::new(&line[0]);
        cmd.args(&line[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::from(out.try_clone().map_err(anyhow::Error::from)?))
            .stderr(Stdio::from(out));
        let run = run_timed(&mut cmd, Duration::from_secs(r.kernel.boot_timeout_s))?;
        let what = format!(
            "booting the {} kernel under KVM with kfdo.run={}",
            c.kernel.variant, self.run
        );
        let results = workload_results(&run, &console, &what, r.kernel.boot_timeout_s)?;
        Ok(Booted {
            wall_s: run.wall_s,
            user_s: 0.0,
            sys_s: 0.0,
            metrics: workload_metrics(&results, "KVM, real time"),
            said: String::new(),
            results,
        })
    }
}

impl KernelCtx {
    /// Boots every contender under KVM with every evaluation workload, interleaved, into
    /// `OUT/bench-kvm/results.db` (as many boots as under TCG).
    pub fn judge_kvm(&self, contenders: &[Contender], boots: usize) -> anyhow::Result<PathBuf> {
        let r = &self.recipe;
        let dir = self.dir("bench-kvm");
        let key = self.contenders_key("kvm benchmark", contenders, &|_| boots);
        self.boots_step("benchmark kvm", &dir, key.finish(), |bench, db, log| {
            let arms = contender_arms(contenders, |c| {
                format!(
                    "KVM boot {} kfdo.run={}",
                    c.kernel.image.display(),
                    bench.run
                )
            });
            let mut trials = BootTrials {
                booter: KvmBooter {
                    ctx: self,
                    contenders,
                    run: &bench.run,
                },
                bench,
                dir: dir.clone(),
                log,
            };
            let c = BootComparison::new(&r.name, Some("kvm"), bench, &dir, db, boots, arms);
            compare_boots(log, &c, &mut trials)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::boot::{parse_console, Console};

    #[test]
    fn a_kvm_boot_is_pinned_and_asks_for_the_host_cpu() {
        let line = command_line(&KvmBoot {
            image: Path::new("/o/build/autofdo/arch/x86/boot/bzImage"),
            initrd: Path::new("/o/initramfs/autofdo.cpio.gz"),
            append: "console=ttyS0 panic=-1 kfdo.run=tcp_rr:8000",
            memory_mb: 256,
            cpu: 15,
        });
        assert_eq!(
            line.join(" "),
            "taskset -c 15 qemu-system-x86_64 -nographic -no-reboot -accel kvm -cpu host \
             -smp 1 -net none -m 256 -kernel /o/build/autofdo/arch/x86/boot/bzImage \
             -initrd /o/initramfs/autofdo.cpio.gz -append console=ttyS0 panic=-1 \
             kfdo.run=tcp_rr:8000"
        );
        assert!(pinned_cpu() < std::thread::available_parallelism().unwrap().get());
    }

    #[test]
    fn a_kvm_boot_s_console_gives_real_time_rows() {
        let console = "[    0.3] Run /init as init process\n\
                       kfdo-workload: tcp_rr ops=8000 seconds=0.4 ops_per_s=20000.0 p1_us=30.0 p50_us=45.5 p99_us=120.0 mean_us=50.0\n\
                       kfdo-workload: done\n";
        let Console::Done(results) = parse_console(console) else {
            panic!("not parsed");
        };
        let m = workload_metrics(&results, "KVM, real time");
        let names: Vec<&str> = m.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "tcp_rr ops/s (KVM, real time)",
                "tcp_rr latency p1 (KVM, real time)",
                "tcp_rr latency p50 (KVM, real time)",
                "tcp_rr latency p99 (KVM, real time)",
                "tcp_rr latency mean (KVM, real time)"
            ]
        );
        assert_eq!(m[2].value, 45.5);
    }
}
