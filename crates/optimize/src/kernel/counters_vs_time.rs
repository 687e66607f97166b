//! The kernel's counter model held against time: the emulated counters of the QEMU boots
//! (`OUT/bench`) paired, workload by workload and variant by variant, with the User-Mode
//! Linux twins' own user CPU (`OUT/bench-uml`, native time) and, where KVM ran, the
//! workloads' time per operation (`OUT/bench-kvm`, real time).

use std::path::Path;

use kfdo_bench::analysis::{Analysis, BenchmarkAnalysis};
use kfdo_bench::counters_vs_time::{paired_points, Point, TimeSource};
use kfdo_bench::report::write::load_and_analyze;

use super::uml::judge::USER_CPU;

/// The workload of a time benchmark named `{recipe}-{tag}-{workload}` whose counters
/// benchmark is `{recipe}-{workload}` (the judges' names: `judge::BootComparison::new`),
/// if `time` is `counters`'s.
fn same_workload<'a>(counters: &'a str, time: &str, tag: &str) -> Option<&'a str> {
    counters.match_indices('-').find_map(|(i, _)| {
        let (recipe, workload) = (&counters[..i], &counters[i + 1..]);
        (time == format!("{recipe}-{tag}-{workload}")).then_some(workload)
    })
}

fn pairs<'a>(
    counters: &'a Analysis,
    time: &'a Analysis,
    tag: &str,
) -> Vec<(&'a BenchmarkAnalysis, &'a BenchmarkAnalysis, &'a str)> {
    let mut out = Vec::new();
    for t in &time.benchmarks {
        for c in &counters.benchmarks {
            if let Some(w) = same_workload(&c.name, &t.name, tag) {
                out.push((c, t, w));
            }
        }
    }
    out
}

/// Which time stores the output's latest run judged: a store of an earlier run (the twins
/// judged before a run with `--no-uml`) describes other kernels and must not be paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Judged {
    pub uml: bool,
    pub kvm: bool,
}

/// Where a run says what it judged.
pub fn judged_path(out: &Path) -> std::path::PathBuf {
    out.join("judged.json")
}

impl Judged {
    pub fn write(&self, out: &Path) -> anyhow::Result<()> {
        let path = judged_path(out);
        std::fs::write(&path, serde_json::to_vec_pretty(self)?)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
    }

    /// What the output's latest run judged; an output written before runs said so is
    /// taken at its stores' word.
    pub fn of_output(out: &Path) -> anyhow::Result<Judged> {
        let path = judged_path(out);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                anyhow::anyhow!(
                    "{}: not what kfdo optimize writes ({e}); rerun kfdo optimize on this output",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Judged {
                uml: out.join("bench-uml/results.db").is_file(),
                kvm: out.join("bench-kvm/results.db").is_file(),
            }),
            Err(e) => Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
        }
    }
}

/// The points of a kernel output directory: UML's and KVM's, as far as its latest run
/// judged them (`judged`).
pub fn points(group: &str, out: &Path, judged: Judged) -> anyhow::Result<Vec<Point>> {
    let (_, counters) = load_and_analyze(&out.join("bench/results.db"))?;
    // (judged, tag of the store and its benchmarks, a workload's time metric, whether
    // that is a rate, its words)
    type Metric = dyn Fn(&str) -> String;
    let sources: [(bool, &str, &Metric, bool, &str); 2] = [
        (
            judged.uml,
            "uml",
            &|_| USER_CPU.to_string(),
            false,
            "UML kernel user CPU (native time)",
        ),
        (
            judged.kvm,
            "kvm",
            &|w| format!("{w} ops/s (KVM, real time)"),
            true,
            "time per operation (KVM, real time)",
        ),
    ];
    let mut points = Vec::new();
    for (ran, tag, metric, rate, measure) in sources {
        if !ran {
            continue;
        }
        let (_, time) = load_and_analyze(&out.join(format!("bench-{tag}/results.db")))?;
        for (c, t, w) in pairs(&counters, &time, tag) {
            let name = metric(w);
            let from = if rate {
                TimeSource::Rate(&name)
            } else {
                TimeSource::Metric(&name)
            };
            points.extend(paired_points(group, c, "emulated", t, from, measure));
        }
    }
    Ok(points)
}

/// The summary's section: the table and fits, and where the page with the panels is.
pub fn section(points: &[Point], page: &Path) -> String {
    format!(
        "## Counters against native time\n\n\
         The QEMU boots' emulated kernel counters beside the time of the same workload and \
         variant: the User-Mode Linux twins' own user CPU (native time){}. The twins run \
         the generic code natively but not the x86 architecture code the counters include, \
         so a weak fit here weighs the counters and UML's differences together. Panels: {}\n\n{}\n",
        if points.iter().any(|p| p.time.measure.contains("KVM")) {
            " and the workloads' time per operation under KVM (real time)"
        } else {
            ""
        },
        page.display(),
        kfdo_bench::report::counters_vs_time::markdown(points)
    )
}

/// Writes the page with the panels (`OUT/report/counters-vs-time.html`).
pub fn write_page(page: &Path, title: &str, points: &[Point]) -> anyhow::Result<()> {
    let html = kfdo_bench::report::html::render_counters_vs_time(
        points,
        title,
        "The kernel's emulated counters (QEMU boots) against its native and real time.",
    );
    std::fs::write(page, html).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", page.display()))
}

/// Removes an earlier run's page, if there is one.
pub fn remove_page(page: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(page) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(anyhow::anyhow!("cannot remove {}: {e}", page.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_says_what_it_judged_and_older_outputs_go_by_their_stores() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        std::fs::create_dir_all(out.join("bench-uml")).unwrap();
        std::fs::write(out.join("bench-uml/results.db"), b"").unwrap();
        let by_stores = Judged::of_output(out).unwrap();
        assert_eq!((by_stores.uml, by_stores.kvm), (true, false));
        // A later run without the twins: their store stays, but is not this run's.
        Judged {
            uml: false,
            kvm: false,
        }
        .write(out)
        .unwrap();
        assert!(!Judged::of_output(out).unwrap().uml);
        std::fs::write(judged_path(out), b"{").unwrap();
        let e = Judged::of_output(out).unwrap_err().to_string();
        assert!(
            e.contains("judged.json") && e.contains("rerun kfdo optimize"),
            "{e}"
        );
    }

    #[test]
    fn the_judges_names_pair() {
        use crate::kernel::judge::BootComparison;
        use crate::kernel::recipe::KernelBench;
        let bench = KernelBench {
            name: "fork_exec".into(),
            run: "fork_exec:300".into(),
            boots: None,
        };
        let (dir, db) = (Path::new("/o/bench"), Path::new("/o/bench/results.db"));
        let name =
            |tag| BootComparison::new("linux-test", tag, &bench, dir, db, 2, vec![]).benchmark;
        for tag in ["uml", "kvm"] {
            assert_eq!(
                same_workload(&name(None), &name(Some(tag)), tag),
                Some("fork_exec")
            );
        }
        assert_eq!(same_workload(&name(None), &name(Some("kvm")), "uml"), None);
    }

    #[test]
    fn workloads_pair_by_the_judges_names() {
        assert_eq!(
            same_workload("linux-tcp_rr", "linux-uml-tcp_rr", "uml"),
            Some("tcp_rr")
        );
        // Dashes in the recipe's or the workload's name.
        assert_eq!(
            same_workload(
                "kernel-recipe-test-fork-exec",
                "kernel-recipe-test-kvm-fork-exec",
                "kvm"
            ),
            Some("fork-exec")
        );
        assert_eq!(same_workload("linux-pipe", "linux-uml-tcp_rr", "uml"), None);
        assert_eq!(same_workload("linux-pipe", "linux-kvm-pipe", "uml"), None);
    }
}
