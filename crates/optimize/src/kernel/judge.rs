//! Judging kernels: every variant boots several times per evaluation workload, the
//! variants interleaved (A B C, B C A, ...), through kfdo-bench's comparison (the same
//! store, statistics, warnings and report as for programs). A boot measures the
//! workload's own time and operations per second (emulated time: QEMU runs without KVM
//! here; for the request/response workloads also their round trips' p1, p50, p99 and mean
//! latency) and the kernel-mode emulated counters of the measured window (instructions,
//! taken branches, modelled L1i and iTLB misses), each a metric with its interval and
//! significance against the baseline. The counters are the primary evidence: emulated
//! time is the host's time spent emulating, not the guest machine's.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use kfdo_bench::compare::{CompareEvent, CompareOutcome, CompareRequest};
use kfdo_bench::counters::Choice;
use kfdo_bench::metric::{Better, Metric};
use kfdo_bench::runner::{Arm, Protocol, StopRule, Trials};

use super::boot::{Boot, WorkloadResult};
use super::boot_trials::{stem_file, BootFailure, BootTrials, Booted, Booter};
use super::build::BuiltKernel;
use super::ctx::KernelCtx;
use super::recipe::{KernelBench, DEFAULT_BOOTS};
use crate::steps::cache::Key;
use crate::steps::exec::Log;

/// A kernel to judge and the initramfs it boots.
pub struct Contender {
    pub kernel: BuiltKernel,
    pub initrd: (PathBuf, String),
}

/// The kernel-mode counters of a boot's window, as metrics.
pub fn counter_metrics(c: &kfdo_record::CountersFile) -> Vec<Metric> {
    let k = &c.total.kernel;
    let m = &c.model;
    [
        ("kernel instructions", k.instructions),
        ("kernel taken branches", k.taken_branches),
        ("kernel conditional branches", k.conditional_branches),
        (
            &*format!(
                "kernel L1i misses (model {}K {}-way)",
                m.l1i_size / 1024,
                m.l1i_ways
            ),
            k.l1i_misses,
        ),
        (
            &*format!(
                "kernel iTLB misses (model {}-entry, {}M pages)",
                m.itlb_entries,
                m.itlb_kernel_page / (1024 * 1024)
            ),
            k.itlb_misses,
        ),
    ]
    .iter()
    .map(|(name, v)| Metric::new(name, *v as f64, "", Better::Lower, "emulated"))
    .collect()
}

/// The QEMU boots: the workloads' rates in emulated time and the kernel's emulated
/// counters.
struct QemuBooter<'a> {
    ctx: &'a KernelCtx,
    contenders: &'a [Contender],
    run: &'a str,
}

impl Booter for QemuBooter<'_> {
    fn variant(&self, i: usize) -> &str {
        &self.contenders[i].kernel.variant
    }

    fn command(&self, _: usize, run: &str) -> String {
        format!("boot with kfdo.run={run}")
    }

    fn boot_word(&self) -> &'static str {
        "boot"
    }

    fn boot(&self, i: usize, stem: &Path) -> Result<Booted, BootFailure> {
        let c = &self.contenders[i];
        let counters = stem_file(stem, "counters.json");
        let booted = self.ctx.boot(&Boot {
            kernel: &c.kernel,
            initrd: &c.initrd.0,
            run: self.run,
            console: stem_file(stem, "console"),
            perf_data: None,
            period: 0,
            counters: Some(counters.clone()),
            gcov: false,
        })?;
        let file = booted
            .outcome
            .counters
            .as_ref()
            .ok_or_else(|| BootFailure {
                status: "gave no counters".into(),
                detail: String::new(),
            })?;
        let mut metrics = workload_metrics(&booted.results, "emulated time");
        metrics.extend(counter_metrics(file));
        Ok(Booted {
            wall_s: booted.results.iter().map(|w| w.seconds).sum(),
            user_s: 0.0,
            sys_s: 0.0,
            metrics,
            said: String::new(),
            results: booted.results,
        })
    }
}

impl KernelCtx {
    pub fn boots(&self, b: &KernelBench) -> usize {
        self.opts.boots.or(b.boots).unwrap_or(DEFAULT_BOOTS)
    }

    /// Boots every contender with every evaluation workload, interleaved, into
    /// `OUT/bench/results.db`.
    pub fn judge(&self, contenders: &[Contender]) -> anyhow::Result<PathBuf> {
        let r = &self.recipe;
        let dir = self.dir("bench");
        let key = self.contenders_key("kernel benchmark", contenders, &|b| self.boots(b));
        self.boots_step("benchmark", &dir, key.finish(), |bench, db, log| {
            let arms = contender_arms(contenders, |c| {
                format!(
                    "boot {} with kfdo.run={}",
                    c.kernel.image.display(),
                    bench.run
                )
            });
            let mut trials = BootTrials {
                booter: QemuBooter {
                    ctx: self,
                    contenders,
                    run: &bench.run,
                },
                bench,
                dir: dir.clone(),
                log,
            };
            let boots = self.boots(bench);
            let c = BootComparison::new(&r.name, None, bench, &dir, db, boots, arms);
            compare_boots(log, &c, &mut trials)
        })
    }

    /// The key of a benchmark step named `kind` over `contenders` (each kernel and
    /// initramfs by content) and the recipe's workloads, `boots(workload)` boots each.
    pub(crate) fn contenders_key(
        &self,
        kind: &str,
        contenders: &[Contender],
        boots: &dyn Fn(&KernelBench) -> usize,
    ) -> Key {
        let mut key = Key::new(kind).add("kfdo", &self.kfdo_version);
        for c in contenders {
            key = key
                .add("variant", &c.kernel.variant)
                .add("kernel", &c.kernel.hash)
                .add("initrd", &c.initrd.1);
        }
        for b in &self.recipe.benches {
            key = key
                .add("bench", &b.name)
                .add("run", &b.run)
                .add("boots", boots(b).to_string());
        }
        key
    }

    /// A step that boots kernels per evaluation workload into `DIR/results.db` (the
    /// directory made afresh): `each` compares one workload's boots (`compare_boots`).
    pub(crate) fn boots_step(
        &self,
        step: &str,
        dir: &Path,
        key: String,
        mut each: impl FnMut(&KernelBench, &Path, &Log) -> anyhow::Result<()>,
    ) -> anyhow::Result<PathBuf> {
        let db = dir.join("results.db");
        self.step(step, key, std::slice::from_ref(&db), |log| {
            crate::steps::fresh_dir(dir)?;
            for bench in &self.recipe.benches {
                each(bench, &db, log)?;
            }
            Ok(serde_json::json!({}))
        })?;
        Ok(db)
    }
}

/// The workloads' own measures, labelled with the kind of time they were taken in
/// (`emulated time`, `native time`, `KVM, real time`): operations per second, and the
/// round trips' latencies as the seeds' tcp_rr table gives them.
pub(crate) fn workload_metrics(results: &[WorkloadResult], time: &str) -> Vec<Metric> {
    let mut m = Vec::new();
    for w in results {
        m.push(Metric::new(
            &format!("{} ops/s ({time})", w.name),
            w.ops_per_s,
            "ops/s",
            Better::Higher,
            "workload",
        ));
        for (stat, us) in w.latency.iter().flat_map(|l| l.named()) {
            m.push(Metric::new(
                &format!("{} latency {stat} ({time})", w.name),
                us,
                "µs",
                Better::Lower,
                "workload",
            ));
        }
    }
    m
}

/// A benchmark variant for a kernel booted by `command`, built with `make_vars`.
pub(crate) fn boot_arm(name: &str, make_vars: &[(String, String)], command: String) -> Arm {
    Arm {
        flags: Some(
            make_vars
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        ..Arm::new(name, command)
    }
}

/// One evaluation workload's boots: every variant `boots` times, interleaved.
pub(crate) struct BootComparison<'a> {
    pub benchmark: String,
    pub run: &'a str,
    /// One arm per kernel variant, booted by its command.
    pub arms: Vec<Arm>,
    pub boots: usize,
    pub db: &'a Path,
    pub json: PathBuf,
}

impl<'a> BootComparison<'a> {
    /// Workload `bench`'s boots for the judge tagged `tag` (None: the QEMU boots; `uml`,
    /// `kvm`): its benchmark is named `RECIPE-WORKLOAD` or `RECIPE-TAG-WORKLOAD` (the names
    /// `kernel::counters_vs_time` pairs the judges by), its JSON is `DIR/WORKLOAD.json`.
    pub fn new(
        recipe: &str,
        tag: Option<&str>,
        bench: &'a KernelBench,
        dir: &Path,
        db: &'a Path,
        boots: usize,
        arms: Vec<Arm>,
    ) -> BootComparison<'a> {
        BootComparison {
            benchmark: match tag {
                None => format!("{recipe}-{}", bench.name),
                Some(t) => format!("{recipe}-{t}-{}", bench.name),
            },
            run: &bench.run,
            arms,
            boots,
            db,
            json: dir.join(format!("{}.json", bench.name)),
        }
    }
}

/// The benchmark's arms: one per contender, booted by `command(contender)`.
pub(crate) fn contender_arms(
    contenders: &[Contender],
    command: impl Fn(&Contender) -> String,
) -> Vec<Arm> {
    contenders
        .iter()
        .map(|c| boot_arm(&c.kernel.variant, &c.kernel.make_vars, command(c)))
        .collect()
}

/// Runs `c` through kfdo-bench's comparison into its store, saying it in `log`.
pub(crate) fn compare_boots(
    log: &Log,
    c: &BootComparison<'_>,
    trials: &mut dyn Trials,
) -> anyhow::Result<()> {
    let req = CompareRequest {
        arms: c.arms.clone(),
        benchmark: Some(c.benchmark.clone()),
        // Every boot starts cold: no warm-up.
        protocol: Protocol::new(0, StopRule::Fixed(c.boots)),
        counters: Choice::None,
        store: c.db.to_path_buf(),
        json: Some(c.json.clone()),
    };
    log.note(&format!("benchmark '{}': kfdo.run={}", c.benchmark, c.run));
    let never = AtomicBool::new(false);
    let outcome = kfdo_bench::compare::compare_trials(&req, trials, &never, &mut |ev| {
        if let CompareEvent::Started { benchmark, .. } = ev {
            log.say(&format!("benchmark '{benchmark}'"));
        }
    })
    .map_err(|e| log.failed(e))?;
    if let CompareOutcome::Complete { analysis, .. } = outcome {
        log.say(kfdo_bench::report::text::summary(&analysis).trim_end());
    }
    Ok(())
}
