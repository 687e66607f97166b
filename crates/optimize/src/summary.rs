//! The verdict in a few lines: per benchmark, each variant's change against
//! the baseline with its interval and significance, the counters, and
//! AutoFDO's gain as a share of instrumented PGO's and against
//! llvm-profgen's profile.

use std::fmt::Write;
use std::path::Path;

use kfdo_bench::analysis::{self, BenchmarkAnalysis};
use kfdo_bench::report::{fmt_counter_cell, fmt_p, fmt_pct, fmt_time};
use kfdo_bench::stats;
use kfdo_bench::store::Store;
use serde::Serialize;

/// Gains (time saved, percent of the baseline's mean) per benchmark.
#[derive(Debug, Serialize)]
pub struct Gains {
    pub benchmark: String,
    pub variants: Vec<VariantGain>,
    /// autofdo's gain / ifdo's gain, when ifdo is significantly faster.
    pub autofdo_share_of_ifdo: Option<f64>,
    /// autofdo's gain minus autofdo-llvm-profgen's, in points.
    pub autofdo_minus_llvm_profgen: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct VariantGain {
    pub name: String,
    pub mean_s: f64,
    pub gain_pct: Option<f64>,
    pub gain_lo_pct: Option<f64>,
    pub gain_hi_pct: Option<f64>,
    pub p: Option<f64>,
    pub significant: bool,
}

pub fn gains(b: &BenchmarkAnalysis) -> Gains {
    let variants: Vec<VariantGain> = b
        .variants
        .iter()
        .map(|v| {
            let c = v.vs_baseline.as_ref();
            VariantGain {
                name: v.name.clone(),
                mean_s: v.wall.as_ref().map(|w| w.mean).unwrap_or(f64::NAN),
                gain_pct: c.map(|c| (1.0 - c.ratio.estimate) * 100.0),
                // A higher ratio bound is a lower gain.
                gain_lo_pct: c.map(|c| (1.0 - c.ratio.hi) * 100.0),
                gain_hi_pct: c.map(|c| (1.0 - c.ratio.lo) * 100.0),
                p: c.and_then(|c| c.welch.map(|w| w.p)),
                significant: c.is_some_and(|c| c.significant),
            }
        })
        .collect();
    let gain = |n: &str| {
        variants
            .iter()
            .find(|v| v.name == n)
            .and_then(|v| v.gain_pct.map(|g| (g, v.significant)))
    };
    let autofdo_share_of_ifdo = match (gain("autofdo"), gain("ifdo")) {
        (Some((a, _)), Some((i, true))) if i > 0.0 => Some(a / i),
        _ => None,
    };
    let autofdo_minus_llvm_profgen = match (gain("autofdo"), gain("autofdo-llvm-profgen")) {
        (Some((a, _)), Some((l, _))) => Some(a - l),
        _ => None,
    };
    Gains {
        benchmark: b.name.clone(),
        variants,
        autofdo_share_of_ifdo,
        autofdo_minus_llvm_profgen,
    }
}

/// The summary text (Markdown that reads well on a terminal) and the gains.
pub fn summarize(
    store: &Path,
    recipe: &str,
    notes: &[String],
) -> anyhow::Result<(String, Vec<Gains>)> {
    let contents = Store::open_existing(store)?.load()?;
    let a = analysis::analyze(&contents, stats::BOOTSTRAP_RESAMPLES);
    let mut s = String::new();
    let mut all = Vec::new();
    writeln!(s, "# kfdo optimize: {recipe}\n")?;
    for n in notes {
        writeln!(s, "- {n}")?;
    }
    if !notes.is_empty() {
        writeln!(s)?;
    }
    for b in &a.benchmarks {
        let g = gains(b);
        let runs = b
            .variants
            .iter()
            .filter_map(|v| v.wall.as_ref())
            .map(|w| w.n)
            .min();
        writeln!(
            s,
            "## {} ({} timed runs per variant, interleaved; baseline '{}')\n",
            b.name,
            runs.unwrap_or(0),
            b.baseline
        )?;
        writeln!(
            s,
            "| variant | mean time | time saved [95 % CI] | p (Welch) | verdict |"
        )?;
        writeln!(s, "|---|---:|---:|---:|---|")?;
        for (v, va) in g.variants.iter().zip(&b.variants) {
            let (saved, p, verdict) = match (v.gain_pct, va.vs_baseline.as_ref()) {
                (Some(gp), Some(c)) => (
                    format!(
                        "{} [{}, {}]",
                        fmt_pct(gp),
                        fmt_pct(v.gain_lo_pct.unwrap_or(f64::NAN)),
                        fmt_pct(v.gain_hi_pct.unwrap_or(f64::NAN))
                    ),
                    format!("{}{}", v.p.map(fmt_p).unwrap_or_else(|| "–".into()), c.mark),
                    if !c.significant {
                        "no significant difference".to_string()
                    } else if gp > 0.0 {
                        "faster".to_string()
                    } else {
                        "slower".to_string()
                    },
                ),
                _ => ("(baseline)".into(), String::new(), String::new()),
            };
            writeln!(
                s,
                "| {} | {} | {saved} | {p} | {verdict} |",
                v.name,
                fmt_time(v.mean_s)
            )?;
        }
        if !b.counters.is_empty() {
            writeln!(s, "\nCounters ({}):\n", b.counter_sources.join(", "))?;
            write!(s, "| counter |")?;
            for v in &b.variants {
                write!(s, " {} |", v.name)?;
            }
            writeln!(s)?;
            write!(s, "|---|")?;
            for _ in &b.variants {
                write!(s, "---:|")?;
            }
            writeln!(s)?;
            for row in &b.counters {
                write!(s, "| {} |", row.name)?;
                let base = row.values.first().copied().flatten();
                for (i, val) in row.values.iter().enumerate() {
                    write!(s, " {} |", fmt_counter_cell(i, base, *val))?;
                }
                writeln!(s)?;
            }
        }
        writeln!(s)?;
        let af = g.variants.iter().find(|v| v.name == "autofdo");
        if let (Some(share), Some(af)) = (g.autofdo_share_of_ifdo, af) {
            let ifdo = g.variants.iter().find(|v| v.name == "ifdo");
            writeln!(
                s,
                "- autofdo saves {:.2} % of the time: **{:.0} %** of instrumented PGO's {:.2} % (target: at least 90 %).",
                af.gain_pct.unwrap_or(f64::NAN),
                share * 100.0,
                ifdo.and_then(|i| i.gain_pct).unwrap_or(f64::NAN)
            )?;
        } else if g.variants.iter().any(|v| v.name == "ifdo") {
            writeln!(
                s,
                "- ifdo is not significantly faster than the baseline, so no share of its gain is given."
            )?;
        }
        if let (Some(d), Some(af)) = (g.autofdo_minus_llvm_profgen, af) {
            let lp = g
                .variants
                .iter()
                .find(|v| v.name == "autofdo-llvm-profgen")
                .and_then(|v| v.gain_pct)
                .unwrap_or(f64::NAN);
            writeln!(
                s,
                "- autofdo (kfdo's profile) saves {:.2} %, autofdo-llvm-profgen {lp:.2} %: {:+.2} points (target: at least the same gain).",
                af.gain_pct.unwrap_or(f64::NAN),
                d
            )?;
        }
        writeln!(s)?;
        for w in &b.warnings {
            writeln!(s, "- warning: {w}")?;
        }
        all.push(g);
    }
    Ok((s, all))
}
