//! The verdict as plain text, for a terminal or a log: one line per variant (mean,
//! spread, runs, ratio to the baseline with its interval and significance) and the
//! counters side by side.

use std::fmt::Write;

use super::figures::{fmt_counter_cell, fmt_p, fmt_pct, fmt_speed, fmt_time};
use crate::analysis::BenchmarkAnalysis;

/// The verdict of one benchmark, as `kfdo compare` prints it.
pub fn summary(a: &BenchmarkAnalysis) -> String {
    let mut out = String::new();
    let width = a
        .variants
        .iter()
        .map(|v| v.name.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 40);
    let _ = writeln!(out, "benchmark '{}' (baseline '{}')", a.name, a.baseline);
    for v in &a.variants {
        let Some(s) = &v.wall else {
            let _ = writeln!(out, "  {:width$}  no runs", v.name);
            continue;
        };
        let _ = write!(
            out,
            "  {:width$}  {:>10} ± {:<10} median {:>10}  CV {:>5.1} %  {:>3} runs",
            v.name,
            fmt_time(s.mean),
            fmt_time(s.stddev),
            fmt_time(s.median),
            s.cv_pct,
            s.n
        );
        if let Some(c) = &v.vs_baseline {
            let _ = write!(
                out,
                "  time {:.4} [{:.4}, {:.4}] {:>8}  p={}{:<2}  {}",
                c.ratio.estimate,
                c.ratio.lo,
                c.ratio.hi,
                fmt_pct(c.change_pct()),
                c.welch.map(|w| fmt_p(w.p)).unwrap_or_else(|| "–".into()),
                c.mark,
                if c.significant {
                    fmt_speed(c.ratio.estimate)
                } else {
                    "no significant difference".into()
                }
            );
        }
        out.push('\n');
    }
    if !a.counters.is_empty() {
        let _ = write!(out, "  {:28} {:12}", "counter", "source");
        for v in &a.variants {
            let _ = write!(out, " {:>24}", truncate(&v.name, 24));
        }
        out.push('\n');
        for row in &a.counters {
            let _ = write!(out, "  {:28} {:12}", row.name, row.source);
            let base = row.values.first().copied().flatten();
            for (i, val) in row.values.iter().enumerate() {
                let _ = write!(out, " {:>24}", fmt_counter_cell(i, base, *val));
            }
            out.push('\n');
        }
        for line in super::determinism::notes(a) {
            let _ = writeln!(out, "  {line}");
        }
    }
    super::metrics::text(&mut out, a);
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).chain(std::iter::once('…')).collect()
    }
}
