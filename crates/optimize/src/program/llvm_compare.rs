//! `kfdo optimize --compare-llvm N`: the run's LLVM release against another, side by
//! side. The other release's run (baseline and AutoFDO, in `OUT/llvm-N`) is a run of
//! its own; this module reads both runs' stores and writes the summary's section.
//!
//! Counters of a single-threaded benchmark are deterministic (the same binary and input
//! give the same numbers), so the baselines' counters compare exactly across the two
//! runs; a benchmark that starts threads has its counters labelled "not deterministic",
//! and the section says so instead. Times do not: the two
//! runs' benchmarks are not interleaved with each other, so each release's AutoFDO gain
//! is taken against its own baseline, and the gains are compared.

use std::fmt::Write;
use std::path::Path;

use kfdo_bench::analysis::BenchmarkAnalysis;
use kfdo_bench::report::fmt_count;
use kfdo_bench::report::write::load_and_analyze;
use kfdo_toolchain::Llvm;

use super::summary::gains;
use crate::vocabulary::Variant;

/// One release's run: its release and its bench store.
pub struct Run<'a> {
    pub llvm: Llvm,
    pub store: &'a Path,
}

/// The summary's section comparing `this` run with `other` (`other_dir`: where the
/// other run's outputs are, for the reader).
pub fn section(this: &Run, other: &Run, other_dir: &Path) -> anyhow::Result<String> {
    let (_, a_this) = load_and_analyze(this.store)?;
    let (_, a_other) = load_and_analyze(other.store)?;
    let (t, o) = (this.llvm.major, other.llvm.major);
    let mut s = String::new();
    writeln!(s, "## LLVM {t} against LLVM {o}\n")?;
    let threaded = [&a_this, &a_other]
        .iter()
        .flat_map(|a| &a.benchmarks)
        .flat_map(|b| &b.counters)
        .any(|r| r.labels.iter().any(Option::is_some));
    let counters = if threaded {
        "Some counters are of a program that started threads, so they are not deterministic \
         (each run's report gives their spread) and compare only as far as their spreads allow"
    } else {
        "Counters are deterministic (every counted program ran one thread), so the baselines' \
         counters compare exactly"
    };
    writeln!(
        s,
        "The same recipe built with LLVM {o}'s tools (baseline and autofdo; that run's \
         outputs are in {}). {counters}; the two runs' times were not measured side by side, \
         so each release's AutoFDO gain is taken against its own baseline (* significant).\n",
        other_dir.display()
    )?;
    for b in &a_this.benchmarks {
        let Some(ob) = a_other.benchmarks.iter().find(|x| x.name == b.name) else {
            writeln!(s, "- {}: not in the LLVM {o} run\n", b.name)?;
            continue;
        };
        let sides = Sides { b, ob, t, o };
        baselines(&mut s, &sides)?;
        autofdo(&mut s, &sides)?;
        for line in what_changed(&sides) {
            writeln!(s, "- {line}")?;
        }
        writeln!(s)?;
    }
    Ok(s)
}

/// One benchmark in both runs: `b` of this run (release `t`), `ob` of the other (`o`).
struct Sides<'a> {
    b: &'a BenchmarkAnalysis,
    ob: &'a BenchmarkAnalysis,
    t: u32,
    o: u32,
}

/// The value of counter `row` for variant `name` in `b`.
fn counter(b: &BenchmarkAnalysis, row: &str, name: &str) -> Option<f64> {
    let i = b.variants.iter().position(|v| v.name == name)?;
    b.counters
        .iter()
        .find(|r| r.name == row)
        .and_then(|r| r.values.get(i).copied().flatten())
}

fn change_pct(from: Option<f64>, to: Option<f64>) -> Option<f64> {
    match (from, to) {
        (Some(f), Some(t)) if f != 0.0 => Some(100.0 * (t - f) / f),
        _ => None,
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:+.1} %"))
}

fn count(v: Option<f64>) -> String {
    v.map_or("–".into(), fmt_count)
}

fn baselines(s: &mut String, sides: &Sides) -> anyhow::Result<()> {
    let Sides { b, ob, t, o } = *sides;
    let base = Variant::Baseline.name();
    writeln!(s, "### {}: the baselines\n", b.name)?;
    writeln!(s, "| counter | LLVM {o} | LLVM {t} | {t} against {o} |")?;
    writeln!(s, "|---|---:|---:|---:|")?;
    for row in &b.counters {
        let (vo, vt) = (counter(ob, &row.name, base), counter(b, &row.name, base));
        writeln!(
            s,
            "| {} | {} | {} | {} |",
            row.name,
            count(vo),
            count(vt),
            pct(change_pct(vo, vt))
        )?;
    }
    let mean = |x: &BenchmarkAnalysis| {
        x.variants
            .iter()
            .find(|v| v.name == base)
            .and_then(|v| v.wall.as_ref())
            .map(|w| format!("{:.3} s", w.mean))
            .unwrap_or_else(|| "–".into())
    };
    writeln!(
        s,
        "| mean time (separate runs) | {} | {} | not compared |\n",
        mean(ob),
        mean(b)
    )?;
    Ok(())
}

/// AutoFDO against its own baseline, in each release.
fn autofdo(s: &mut String, sides: &Sides) -> anyhow::Result<()> {
    let Sides { b, ob, t, o } = *sides;
    let (base, afdo) = (Variant::Baseline.name(), Variant::Autofdo.name());
    writeln!(s, "### {}: AutoFDO against its own baseline\n", b.name)?;
    writeln!(s, "| | LLVM {o} | LLVM {t} | difference |")?;
    writeln!(s, "|---|---:|---:|---:|")?;
    // The page's one sign convention (summary::SIGNS): a change, − is faster; a higher
    // gain bound is a lower change bound.
    let change = |x: &BenchmarkAnalysis| {
        let g = gains(x).variants.into_iter().find(|v| v.name == afdo)?;
        Some((
            -g.gain_pct?,
            -g.gain_hi_pct.unwrap_or(f64::NAN),
            -g.gain_lo_pct.unwrap_or(f64::NAN),
            if g.significant { " *" } else { "" },
        ))
    };
    let cell = |g: &Option<(f64, f64, f64, &str)>| {
        g.as_ref().map_or("–".into(), |(g, lo, hi, mark)| {
            format!("{g:+.1} % [{lo:+.1}, {hi:+.1}]{mark}")
        })
    };
    let (co, ct) = (change(ob), change(b));
    let diff = match (&co, &ct) {
        (Some(a), Some(b)) => format!("{:+.1} points", b.0 - a.0),
        _ => "–".into(),
    };
    writeln!(
        s,
        "| time change [95 % CI] | {} | {} | {diff} |",
        cell(&co),
        cell(&ct)
    )?;
    for row in &b.counters {
        let co = change_pct(counter(ob, &row.name, base), counter(ob, &row.name, afdo));
        let ct = change_pct(counter(b, &row.name, base), counter(b, &row.name, afdo));
        let d = match (co, ct) {
            (Some(a), Some(b)) => format!("{:+.1} points", b - a),
            _ => "–".into(),
        };
        writeln!(s, "| {} | {} | {} | {d} |", row.name, pct(co), pct(ct))?;
    }
    writeln!(s)?;
    Ok(())
}

/// The differences worth a sentence: each counter whose baseline moved by at least 1 %,
/// and AutoFDO's counter changes that differ by at least 2 points.
fn what_changed(sides: &Sides) -> Vec<String> {
    let Sides { b, ob, t, o } = *sides;
    let (base, afdo) = (Variant::Baseline.name(), Variant::Autofdo.name());
    let mut lines = Vec::new();
    for row in &b.counters {
        if let Some(c) = change_pct(counter(ob, &row.name, base), counter(b, &row.name, base)) {
            if c.abs() >= 1.0 {
                lines.push(format!(
                    "LLVM {t}'s baseline has {:.1} % {} {} than LLVM {o}'s.",
                    c.abs(),
                    if c < 0.0 { "fewer" } else { "more" },
                    row.name
                ));
            }
        }
        let co = change_pct(counter(ob, &row.name, base), counter(ob, &row.name, afdo));
        let ct = change_pct(counter(b, &row.name, base), counter(b, &row.name, afdo));
        if let (Some(co), Some(ct)) = (co, ct) {
            if (ct - co).abs() >= 2.0 {
                lines.push(format!(
                    "AutoFDO changes {} by {ct:+.1} % with LLVM {t}, {co:+.1} % with LLVM {o}.",
                    row.name
                ));
            }
        }
    }
    if lines.is_empty() {
        lines.push(format!(
            "No baseline counter moved by 1 % or more, and AutoFDO changes every counter \
             within 2 points of LLVM {o}'s."
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_changes_read_as_the_other_tables_do() {
        assert_eq!(count(Some(16448166735.0)), "16,448,166,735");
        assert_eq!(count(Some(999.0)), "999");
        assert_eq!(count(None), "–");
        assert_eq!(pct(change_pct(Some(200.0), Some(150.0))), "-25.0 %");
        assert_eq!(change_pct(Some(0.0), Some(1.0)), None);
    }
}
