//! The kernel verdict, in the shape of the seeds' tables: per evaluation workload, one
//! row per measure (kernel-mode emulated counters, the workload's operations per second),
//! one column per variant with its change against the baseline, the 95 % interval and
//! Welch's significance mark; then the hot-text spans, what each variant changed in the
//! configuration, and how long each step took.

use std::fmt::Write;
use std::path::Path;

use kfdo_bench::analysis::{self, BenchmarkAnalysis};
use kfdo_bench::report::metrics::{fmt_change, fmt_value};
use kfdo_bench::stats;
use kfdo_bench::store::Store;

/// How the page's changes read, said once at its top (the tables, the shares of ifdo's
/// change and the native section under it sign a change this way).
pub const SIGNS: &str = "Every change on this page is against the baseline, in percent of \
     the baseline's value: − is less, + is more (fewer events, a shorter time and more \
     operations per second are better); the verdicts say better or worse in words.";

/// A heat map's hot-text span, per variant.
pub struct Span {
    pub variant: String,
    pub bytes: u64,
    pub lines: usize,
    pub samples: u64,
}

pub(crate) fn table(s: &mut String, b: &BenchmarkAnalysis) -> std::fmt::Result {
    let names: Vec<(String, String)> = b.variants[0]
        .metrics
        .iter()
        .map(|m| (m.name.clone(), m.source.clone()))
        .collect();
    write!(s, "| measure | {} |", b.variants[0].name)?;
    for v in &b.variants[1..] {
        write!(s, " {} |", v.name)?;
    }
    writeln!(s)?;
    write!(s, "|:--|--:|")?;
    for _ in &b.variants[1..] {
        write!(s, "--:|")?;
    }
    writeln!(s)?;
    for (name, source) in names {
        let cell = |i: usize| {
            b.variants[i]
                .metrics
                .iter()
                .find(|m| m.name == name && m.source == source)
        };
        write!(
            s,
            "| {name} | {} |",
            cell(0)
                .map(|m| fmt_value(m.summary.mean))
                .unwrap_or_else(|| "–".into())
        )?;
        for i in 1..b.variants.len() {
            write!(
                s,
                " {} |",
                cell(i).map(fmt_change).unwrap_or_else(|| "–".into())
            )?;
        }
        writeln!(s)?;
    }
    Ok(())
}

/// AutoFDO's gain as a share of instrumented PGO's (gcov kernel PGO, `ifdo`), the
/// figure sites quote, on the counters that FDO moves most: given where both variants are
/// significantly better than the baseline (a share of a loss says nothing).
fn shares_of_ifdo(b: &BenchmarkAnalysis) -> Vec<String> {
    let find = |name: &str| b.variants.iter().find(|v| v.name == name);
    let (Some(afdo), Some(ifdo)) = (find("autofdo"), find("ifdo")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for m in &ifdo.metrics {
        if !(m.name == "kernel taken branches" || m.name.starts_with("kernel L1i misses")) {
            continue;
        }
        let Some(a) = afdo.metrics.iter().find(|x| x.name == m.name) else {
            continue;
        };
        let (Some(ci), Some(ca)) = (m.vs_baseline.as_ref(), a.vs_baseline.as_ref()) else {
            continue;
        };
        let (pi, pa) = (ci.change_pct(), ca.change_pct());
        // Signed like the tables' changes (a true minus sign).
        let pct = |v: f64| format!("{v:+.1} %").replace('-', "\u{2212}");
        out.push(if m.verdict() == Some(true) && a.verdict() == Some(true) {
            format!(
                "{}: autofdo's change ({}) is {:.0} % of ifdo's ({})",
                m.name,
                pct(pa),
                100.0 * pa / pi,
                pct(pi)
            )
        } else {
            format!(
                "{}: autofdo {}, ifdo {}: not both significantly better, so no share is given",
                m.name,
                pct(pa),
                pct(pi)
            )
        });
    }
    out
}

/// The UnixBench-style index of each variant: the geometric mean over the evaluation
/// workloads of its operations per second against the baseline's, with its interval,
/// under the heading `heading` (a Markdown heading line).
pub(crate) fn index(
    s: &mut String,
    benchmarks: &[BenchmarkAnalysis],
    heading: &str,
) -> std::fmt::Result {
    let ops_per_s = |m: &analysis::MetricAnalysis| m.unit == "ops/s" && m.source == "workload";
    let indices = analysis::suite_index(benchmarks, ops_per_s, stats::BOOTSTRAP_RESAMPLES);
    let Some(first) = indices.first() else {
        return Ok(());
    };
    writeln!(
        s,
        "{heading}\n\n\
         Geometric mean over {} workload(s) ({}) of each variant's operations per second \
         against the baseline's, [95 % bootstrap interval, every boot resampled]; above 1 \
         is faster.\n",
        first.benchmarks.len(),
        first.benchmarks.join(", ")
    )?;
    writeln!(s, "| variant | index | 95 % interval |")?;
    writeln!(s, "|:--|--:|:--|")?;
    for i in &indices {
        writeln!(
            s,
            "| {} | {:.3} | [{:.3}, {:.3}] |",
            i.variant, i.index.estimate, i.index.lo, i.index.hi
        )?;
    }
    writeln!(s)
}

/// The tables of boots timed for real (the UML twins, KVM): per workload its table under
/// "### NAME (LABEL; baseline ...)" and its warnings.
pub(crate) fn timed_tables(
    s: &mut String,
    benchmarks: &[BenchmarkAnalysis],
    label: &str,
) -> std::fmt::Result {
    for b in benchmarks {
        writeln!(s, "### {} ({label}; baseline '{}')\n", b.name, b.baseline)?;
        table(s, b)?;
        writeln!(s)?;
        for w in &b.warnings {
            writeln!(s, "- warning: {w}")?;
        }
        if !b.warnings.is_empty() {
            writeln!(s)?;
        }
    }
    Ok(())
}

/// The section of the KVM boots (`OUT/bench/kvm.db`).
pub fn kvm_section(db: &Path) -> anyhow::Result<String> {
    let contents = Store::open_existing(db)?.load()?;
    let a = analysis::analyze(&contents, stats::BOOTSTRAP_RESAMPLES);
    let mut s = String::new();
    writeln!(
        s,
        "## Real time under KVM\n\n\
         Every kernel booted again with `-accel kvm -cpu host`, its one vCPU pinned to one \
         host CPU, the kernels interleaved: the workloads' operations per second and \
         latencies are the guest's real time (QEMU's plugins run under TCG only, so these \
         boots count nothing).\n"
    )?;
    timed_tables(&mut s, &a.benchmarks, "KVM, real time")?;
    index(
        &mut s,
        &a.benchmarks,
        "### Index over the workloads (UnixBench-style, KVM real time)",
    )?;
    Ok(s)
}

/// The summary's Markdown.
pub fn render(
    store: &Path,
    title: &str,
    notes: &[String],
    spans: &[Span],
    config_diffs: &[(String, String)],
    timings: &str,
    native: &str,
) -> anyhow::Result<String> {
    let contents = Store::open_existing(store)?.load()?;
    let a = analysis::analyze(&contents, stats::BOOTSTRAP_RESAMPLES);
    let mut s = String::new();
    writeln!(s, "# kfdo optimize: {title}\n")?;
    writeln!(s, "{SIGNS}\n")?;
    for n in notes {
        writeln!(s, "- {n}")?;
    }
    writeln!(s)?;
    for b in &a.benchmarks {
        let boots = b
            .variants
            .iter()
            .filter_map(|v| v.wall.as_ref())
            .map(|w| w.n)
            .min()
            .unwrap_or(0);
        writeln!(
            s,
            "## {} ({boots} boots per variant, interleaved; baseline '{}')\n",
            b.name, b.baseline
        )?;
        writeln!(
            s,
            "Change against the baseline, mean of the boots [95 % bootstrap interval] and \
             Welch's mark (* p < 0.05, ** p < 0.01); counters are kernel mode, inside the \
             workload's window, from kfdo's QEMU plugin (L1i and iTLB from its cache model; \
             the iTLB model maps the kernel's text with 2 MiB pages, as x86-64 and arm64 \
             kernels do, and module code with 4 KiB pages, so its misses are pages of the \
             kernel image's text touched beyond the model's entries, plus module pages; a first \
             level alone, with no second-level TLB, so not the page walks perf counts); \
             operations per second are in emulated time (QEMU without KVM).\n"
        )?;
        table(&mut s, b)?;
        writeln!(s)?;
        for line in shares_of_ifdo(b) {
            writeln!(s, "- {line}")?;
        }
        for w in &b.warnings {
            writeln!(s, "- warning: {w}")?;
        }
        writeln!(s)?;
    }
    index(
        &mut s,
        &a.benchmarks,
        "## Index over the workloads (UnixBench-style, emulated time)",
    )?;
    s.push_str(native);
    if !spans.is_empty() {
        writeln!(
            s,
            "## Hot kernel text (90 % of the samples of the evaluation workload)\n"
        )?;
        writeln!(s, "| variant | hot text span | 64-byte lines | samples |")?;
        writeln!(s, "|:--|--:|--:|--:|")?;
        for sp in spans {
            writeln!(
                s,
                "| {} | {} bytes | {} | {} |",
                sp.variant,
                kfdo_bench::report::fmt_count(sp.bytes as f64),
                sp.lines,
                kfdo_bench::report::fmt_count_int(sp.samples)
            )?;
        }
        writeln!(s)?;
    }
    if !config_diffs.is_empty() {
        writeln!(
            s,
            "## Configuration changes (scripts/diffconfig, recipe's configuration -> variant)\n"
        )?;
        for (v, d) in config_diffs {
            if d.trim().is_empty() {
                // GCC's variants differ in their compiler flags (KCFLAGS) only.
                writeln!(s, "### {v}\n\nno Kconfig change (compiler flags only)\n")?;
            } else {
                writeln!(s, "### {v}\n\n```\n{}\n```\n", d.trim_end())?;
            }
        }
    }
    writeln!(s, "## Time per step\n\n{timings}")?;
    Ok(s)
}

/// The variant with the lowest mean kernel taken-branch count over the benchmarks
/// among those significantly better than the baseline on it (None: no variant is).
pub fn winner(store: &Path) -> anyhow::Result<Option<String>> {
    let contents = Store::open_existing(store)?.load()?;
    let a = analysis::analyze(&contents, stats::BOOTSTRAP_RESAMPLES);
    let mut score: Vec<(String, f64, bool)> = Vec::new();
    for b in &a.benchmarks {
        for v in &b.variants[1..] {
            let Some(m) = v.metrics.iter().find(|m| m.name == "kernel taken branches") else {
                continue;
            };
            let change = m
                .vs_baseline
                .as_ref()
                .map(|c| c.change_pct())
                .unwrap_or(0.0);
            let better = m.verdict() == Some(true);
            match score.iter_mut().find(|(n, _, _)| *n == v.name) {
                Some(e) => {
                    e.1 += change;
                    e.2 &= better;
                }
                None => score.push((v.name.clone(), change, better)),
            }
        }
    }
    Ok(score
        .into_iter()
        .filter(|(_, _, better)| *better)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(n, _, _)| n))
}
