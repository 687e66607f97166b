//! Judging the twins in native time: every twin boots several times per evaluation
//! workload on the host, interleaved (A B C, B C A, ...), through kfdo-bench's comparison
//! (Welch, bootstrap intervals, warnings when other work shares the machine), into
//! `OUT/bench/uml.db`. A boot measures the UML kernel's host CPU time (user: its own
//! code; system: the host's ptrace work, for context) and the workload's own operations
//! per second and latencies, which inside UML are host time too.

use std::path::{Path, PathBuf};

use kfdo_bench::metric::{Better, Metric};
use kfdo_bench::runner::Arm;

use super::build::UmlKernel;
use super::run::{boot_native, NativeBoot, NativeRun, LPJ};
use crate::kernel::boot_trials::{stem_file, BootFailure, BootTrials, Booted, Booter};
use crate::kernel::ctx::KernelCtx;
use crate::kernel::judge::{boot_arm, compare_boots, workload_metrics, BootComparison};
use crate::steps::cache::Key;

/// Boots per twin and workload when the recipe's `[uml]` does not say.
pub const DEFAULT_UML_BOOTS: usize = 10;

/// The twins' measure FDO can move: the UML kernel process's own user CPU.
pub const USER_CPU: &str = "UML kernel CPU, user (native time)";

/// A native boot's measures.
pub fn native_metrics(b: &NativeBoot) -> Vec<Metric> {
    let mut m = vec![
        Metric::new(USER_CPU, b.user_s * 1e3, "ms", Better::Lower, "native"),
        Metric::new(
            "UML kernel CPU, system: host ptrace (native time)",
            b.sys_s * 1e3,
            "ms",
            Better::Lower,
            "native",
        ),
    ];
    // Per operation only where one workload ran: the boot's time is then its own
    // (plus the boot, the same in every twin).
    if let [w] = b.results.as_slice() {
        if w.ops > 0 {
            m.push(Metric::new(
                &format!("{} UML kernel user CPU per operation (native time)", w.name),
                b.user_s * 1e6 / w.ops as f64,
                "µs",
                Better::Lower,
                "native",
            ));
        }
    }
    m.extend(workload_metrics(&b.results, "native time"));
    m
}

/// The twins' native boots: their host CPU time and the workloads' rates.
struct UmlBooter<'a> {
    ctx: &'a KernelCtx,
    twins: &'a [UmlKernel],
    initrd: &'a PathBuf,
    run: &'a str,
    uml_dir: PathBuf,
}

impl Booter for UmlBooter<'_> {
    fn variant(&self, i: usize) -> &str {
        &self.twins[i].variant
    }

    fn command(&self, i: usize, run: &str) -> String {
        format!("{} kfdo.run={run}", self.twins[i].exe.display())
    }

    fn boot_word(&self) -> &'static str {
        "boot"
    }

    fn boot(&self, i: usize, stem: &Path) -> Result<Booted, BootFailure> {
        let r = &self.ctx.recipe;
        let booted = boot_native(&NativeRun {
            exe: &self.twins[i].exe,
            initrd: self.initrd,
            run: self.run,
            memory_mb: r.kernel.memory_mb,
            timeout_s: r.kernel.boot_timeout_s,
            console: &stem_file(stem, "console"),
            uml_dir: &self.uml_dir,
        })?;
        Ok(Booted {
            wall_s: booted.wall_s,
            user_s: booted.user_s,
            sys_s: booted.sys_s,
            metrics: native_metrics(&booted),
            said: format!(
                "user {:.3} s, system {:.3} s, ",
                booted.user_s, booted.sys_s
            ),
            results: booted.results,
        })
    }
}

impl KernelCtx {
    pub fn uml_boots(&self) -> usize {
        self.opts
            .boots
            .or(self.recipe.uml.as_ref().and_then(|u| u.boots))
            .unwrap_or(DEFAULT_UML_BOOTS)
    }

    /// Boots every twin with every evaluation workload, interleaved, into
    /// `OUT/bench-uml/results.db`.
    pub fn judge_uml(
        &self,
        twins: &[UmlKernel],
        initrd: &(PathBuf, String),
    ) -> anyhow::Result<PathBuf> {
        let r = &self.recipe;
        let dir = self.dir("bench-uml");
        let mut key = Key::new("uml benchmark").add("kfdo", &self.kfdo_version);
        for t in twins {
            key = key.add("variant", &t.variant).add("kernel", &t.hash);
        }
        key = key
            .add("initrd", &initrd.1)
            .add("boots", self.uml_boots().to_string())
            .add("boot line", LPJ);
        for b in &r.benches {
            key = key.add("bench", &b.name).add("run", &b.run);
        }
        self.boots_step("benchmark uml", &dir, key.finish(), |bench, db, log| {
            let arms: Vec<Arm> = twins
                .iter()
                .map(|t| {
                    boot_arm(
                        &t.variant,
                        &t.make_vars,
                        format!("{} kfdo.run={}", t.exe.display(), bench.run),
                    )
                })
                .collect();
            let mut trials = BootTrials {
                booter: UmlBooter {
                    ctx: self,
                    twins,
                    initrd: &initrd.0,
                    run: &bench.run,
                    uml_dir: dir.join("uml-run"),
                },
                bench,
                dir: dir.clone(),
                log,
            };
            let boots = self.uml_boots();
            let c = BootComparison::new(&r.name, Some("uml"), bench, &dir, db, boots, arms);
            compare_boots(log, &c, &mut trials)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::boot::{Latency, WorkloadResult};

    #[test]
    fn a_boot_gives_cpu_per_operation_only_for_a_single_workload() {
        let w = |name: &str, latency| WorkloadResult {
            name: name.into(),
            ops: 2000,
            seconds: 0.5,
            ops_per_s: 4000.0,
            latency,
        };
        let lat = Some(Latency {
            p1_us: 100.0,
            p50_us: 200.0,
            p99_us: 900.0,
            mean_us: 250.0,
        });
        let one = NativeBoot {
            results: vec![w("tcp_rr", lat)],
            user_s: 0.3,
            sys_s: 1.5,
            wall_s: 2.0,
        };
        let m = native_metrics(&one);
        let get = |n: &str| m.iter().find(|x| x.name == n).map(|x| x.value);
        assert_eq!(get("UML kernel CPU, user (native time)"), Some(300.0));
        assert_eq!(
            get("tcp_rr UML kernel user CPU per operation (native time)"),
            Some(150.0)
        );
        assert_eq!(get("tcp_rr latency p99 (native time)"), Some(900.0));
        assert_eq!(get("tcp_rr ops/s (native time)"), Some(4000.0));
        let two = NativeBoot {
            results: vec![w("tcp_rr", None), w("pipe", None)],
            ..one
        };
        assert!(!native_metrics(&two)
            .iter()
            .any(|x| x.name.contains("per operation")));
    }
}
