//! The one shape of the three kernel judges' trials (QEMU with emulated counters, the
//! User-Mode Linux twins in native time, KVM in real time): arm `i` boots once with the
//! evaluation workload, its failure becomes the benchmark's run error, its workloads'
//! rates are said in the step's log, and its time and metrics become the run's
//! measurement. What differs, how an arm boots and what a boot measures, is a [`Booter`].

use std::path::{Path, PathBuf};

use kfdo_bench::metric::Metric;
use kfdo_bench::runner::{Measurement, RunError, Trials};

use super::boot::WorkloadResult;
use super::recipe::KernelBench;
use crate::steps::exec::Log;

/// One boot's measures.
pub struct Booted {
    pub results: Vec<WorkloadResult>,
    pub wall_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    pub metrics: Vec<Metric>,
    /// What the log line says before the workloads' rates (`user 0.412 s, ...`).
    pub said: String,
}

/// Why a boot gave no measurement: its status in words, and what it printed.
pub struct BootFailure {
    pub status: String,
    pub detail: String,
}

impl From<anyhow::Error> for BootFailure {
    fn from(e: anyhow::Error) -> BootFailure {
        BootFailure {
            status: "failed".into(),
            detail: format!("{e:#}"),
        }
    }
}

/// How one judge boots its arms.
pub trait Booter {
    /// Arm `i`'s variant.
    fn variant(&self, i: usize) -> &str;
    /// Arm `i`'s boot, in words, for a failure (`boot with kfdo.run=tcp_rr:8000`).
    fn command(&self, i: usize, run: &str) -> String;
    /// What a boot is called in the log (`boot`, `KVM boot`).
    fn boot_word(&self) -> &'static str;
    /// Boots arm `i`; `stem` is the path its files start with (`STEM.console` ...).
    fn boot(&self, i: usize, stem: &Path) -> Result<Booted, BootFailure>;
}

/// The trials of one evaluation workload: every arm booted by `booter`, its files in `dir`.
pub struct BootTrials<'a, B> {
    pub booter: B,
    pub bench: &'a KernelBench,
    pub dir: PathBuf,
    pub log: &'a Log,
}

impl<B: Booter> Trials for BootTrials<'_, B> {
    fn run(
        &mut self,
        i: usize,
        phase: &'static str,
        run: usize,
    ) -> Result<Option<Measurement>, RunError> {
        let variant = self.booter.variant(i);
        let stem = self
            .dir
            .join(format!("{}-{variant}-{phase}-{run}", self.bench.name));
        let started_unix = kfdo_bench::store::now_unix();
        let booted = self.booter.boot(i, &stem).map_err(|f| RunError::Failed {
            variant: variant.to_string(),
            phase,
            run,
            command: self.booter.command(i, &self.bench.run),
            status: f.status,
            stderr: f.detail,
        })?;
        self.log.say(&format!(
            "{variant} {phase} {} {run}: {}{}",
            self.booter.boot_word(),
            booted.said,
            booted
                .results
                .iter()
                .map(|w| format!("{} {:.1} ops/s", w.name, w.ops_per_s))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        Ok(Some(Measurement {
            wall_s: booted.wall_s,
            user_s: booted.user_s,
            sys_s: booted.sys_s,
            started_unix,
            metrics: booted.metrics,
        }))
    }
}

/// `STEM.EXT`, whatever dots the stem's variant name holds.
pub fn stem_file(stem: &Path, ext: &str) -> PathBuf {
    let mut s = stem.as_os_str().to_os_string();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kfdo_bench::metric::Better;

    /// Arm 0 boots; arm 1's boot gives no counters.
    struct Fake;

    impl Booter for Fake {
        fn variant(&self, i: usize) -> &str {
            ["baseline", "autofdo"][i]
        }
        fn command(&self, i: usize, run: &str) -> String {
            format!("boot {i} with kfdo.run={run}")
        }
        fn boot_word(&self) -> &'static str {
            "boot"
        }
        fn boot(&self, i: usize, stem: &Path) -> Result<Booted, BootFailure> {
            assert!(stem_file(stem, "console")
                .to_string_lossy()
                .ends_with(&format!("pipe-{}-warmup-2.console", self.variant(i))));
            if i == 1 {
                return Err(BootFailure {
                    status: "gave no counters".into(),
                    detail: "console: ...".into(),
                });
            }
            Ok(Booted {
                results: vec![WorkloadResult {
                    name: "pipe".into(),
                    ops: 1000,
                    seconds: 0.5,
                    ops_per_s: 2000.0,
                    latency: None,
                }],
                wall_s: 0.5,
                user_s: 0.25,
                sys_s: 0.125,
                metrics: vec![Metric::new("m", 1.0, "", Better::Lower, "emulated")],
                said: String::new(),
            })
        }
    }

    #[test]
    fn a_boot_is_a_measurement_and_a_failed_boot_a_run_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::create("benchmark", &dir.path().join("b.log")).unwrap();
        let bench = KernelBench {
            name: "pipe".into(),
            run: "pipe:1000".into(),
            boots: None,
        };
        let mut t = BootTrials {
            booter: Fake,
            bench: &bench,
            dir: dir.path().to_path_buf(),
            log: &log,
        };
        let m = t.run(0, "warmup", 2).unwrap().unwrap();
        assert_eq!((m.wall_s, m.user_s, m.sys_s), (0.5, 0.25, 0.125));
        assert_eq!(m.metrics.len(), 1);
        match t.run(1, "warmup", 2) {
            Err(RunError::Failed {
                variant,
                command,
                status,
                ..
            }) => {
                assert_eq!(variant, "autofdo");
                assert_eq!(command, "boot 1 with kfdo.run=pipe:1000");
                assert_eq!(status, "gave no counters");
            }
            other => panic!("{:?}", other.map(|m| m.map(|m| m.wall_s))),
        }
        let said = std::fs::read_to_string(dir.path().join("b.log")).unwrap();
        assert!(
            said.contains("baseline warmup boot 2: pipe 2000.0 ops/s"),
            "{said}"
        );
    }
}
