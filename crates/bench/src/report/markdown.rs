//! The Markdown report, for mailing lists and pull requests: the same
//! tables as the HTML page, no pictures (heat maps are summarized by their
//! hot-text span).

use std::fmt::Write;

use super::escape::escape_markdown as m;
use super::figures::{
    fmt_count, fmt_counter_cell, fmt_p, fmt_pct, fmt_speed, fmt_time, geomean_ratio,
    geomean_verdict,
};
use crate::analysis::{Analysis, BenchmarkAnalysis, VariantAnalysis};
use crate::store::Heatmap;

/// The whole report: a section per benchmark, then the geometric means, the counters
/// against time, the heat maps, and what the columns mean.
pub fn render(a: &Analysis, heatmaps: &[Heatmap], title: &str, generated: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n\n{}\n", m(title), m(generated));
    for b in &a.benchmarks {
        benchmark(&mut out, b);
    }
    geomeans(&mut out, a);
    counters_vs_time(&mut out, a);
    heatmap_table(&mut out, heatmaps);
    out.push_str(
        "Time vs baseline: mean(variant) / mean(baseline), 95 % percentile-bootstrap interval. \
         \\* / \\*\\*: Welch's t-test rejects equal means at 5 % / 1 % (mmtests' rule); significant only when \
         the interval also excludes 1.\n",
    );
    out
}

/// One benchmark's section: the verdicts, the commands, the counters, the other
/// metrics, the warnings and the machine.
fn benchmark(out: &mut String, b: &BenchmarkAnalysis) {
    let _ = writeln!(out, "## Benchmark: {}\n", m(&b.name));
    out.push_str("| variant | runs | mean | ± sd | CV | time vs baseline [95 % CI] | change | p (Welch) | verdict |\n");
    out.push_str("|:--|--:|--:|--:|--:|--:|--:|--:|:--|\n");
    for (i, v) in b.variants.iter().enumerate() {
        verdict_row(out, i, v);
    }
    out.push('\n');
    for v in &b.variants {
        let _ = writeln!(
            out,
            "- {}: `{}`{}",
            m(&v.name),
            v.command.replace('`', "'"),
            v.flags
                .as_ref()
                .map(|f| format!(" (flags: `{}`)", f.replace('`', "'")))
                .unwrap_or_default()
        );
    }
    out.push('\n');
    if !b.counters.is_empty() {
        counters(out, b);
    }
    super::metrics::markdown(out, b);
    if !b.warnings.is_empty() {
        out.push_str("Warnings:\n\n");
        for w in &b.warnings {
            let _ = writeln!(out, "- {}", m(&w.to_string()));
        }
        out.push('\n');
    }
    environment(out, b);
}

/// The verdict table's row of variant `v`, the `i`-th (the first is the baseline).
fn verdict_row(out: &mut String, i: usize, v: &VariantAnalysis) {
    let (n, mean, sd, cv) = match &v.wall {
        Some(s) => (
            s.n.to_string(),
            fmt_time(s.mean),
            fmt_time(s.stddev),
            format!("{:.1} %", s.cv_pct),
        ),
        None => ("0".into(), "–".into(), "–".into(), "–".into()),
    };
    let (ratio, change, p, verdict) = match &v.vs_baseline {
        Some(c) => (
            format!(
                "{:.4} [{:.4}, {:.4}]",
                c.ratio.estimate, c.ratio.lo, c.ratio.hi
            ),
            fmt_pct(c.change_pct()),
            format!(
                "{}{}",
                c.welch.map(|w| fmt_p(w.p)).unwrap_or_else(|| "–".into()),
                if c.mark.is_empty() {
                    String::new()
                } else {
                    format!(" {}", m(c.mark))
                }
            ),
            if c.significant {
                format!("**{}**", fmt_speed(c.ratio.estimate))
            } else {
                "no significant difference".into()
            },
        ),
        None if i == 0 => ("1".into(), String::new(), String::new(), "baseline".into()),
        None => (
            "–".into(),
            String::new(),
            String::new(),
            "too few runs".into(),
        ),
    };
    let _ = writeln!(
        out,
        "| {} | {n} | {mean} | {sd} | {cv} | {ratio} | {change} | {p} | {verdict} |",
        m(&v.name)
    );
}

/// The counters table of benchmark `b`, its notes on determinism and its sources.
fn counters(out: &mut String, b: &BenchmarkAnalysis) {
    out.push_str("| event | source |");
    for v in &b.variants {
        let _ = write!(out, " {} |", m(&v.name));
    }
    out.push_str("\n|:--|:--|");
    for _ in &b.variants {
        out.push_str("--:|");
    }
    out.push('\n');
    for row in &b.counters {
        let _ = write!(out, "| {} | {} |", m(&row.name), m(&row.source));
        let base = row.values.first().copied().flatten();
        for (i, v) in row.values.iter().enumerate() {
            let _ = write!(out, " {} |", fmt_counter_cell(i, base, *v));
        }
        out.push('\n');
    }
    out.push('\n');
    for line in super::determinism::notes(b) {
        let _ = writeln!(out, "{}\n", m(&line));
    }
    for s in &b.counter_sources {
        let _ = writeln!(out, "Counters: {}\n", m(s));
    }
}

/// The machine benchmark `b` ran on, on one line.
fn environment(out: &mut String, b: &BenchmarkAnalysis) {
    if let Some(env) = b.environment.as_object() {
        out.push_str("Environment:");
        for key in ["cpu_model", "logical_cpus", "kernel", "os"] {
            if let Some(v) = env.get(key) {
                let text = v
                    .as_str()
                    .map(String::from)
                    .unwrap_or_else(|| v.to_string());
                let _ = write!(out, " {}: {};", key.replace('_', " "), m(&text));
            }
        }
        if let Some(c) = env.get("compilers").and_then(|c| c.as_object()) {
            for (k, v) in c {
                let _ = write!(out, " {}: {};", m(k), m(v.as_str().unwrap_or("")));
            }
        }
        out.push_str("\n\n");
    }
}

/// The geometric means over benchmarks, per variant name.
fn geomeans(out: &mut String, a: &Analysis) {
    if !a.geomeans.is_empty() {
        out.push_str("## Geometric mean over benchmarks\n\n| variant | benchmarks | time vs baseline [95 % CI] | change | verdict |\n|:--|--:|--:|--:|:--|\n");
        for g in &a.geomeans {
            let verdict = geomean_verdict(g);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                m(&g.variant),
                g.benchmarks,
                geomean_ratio(g),
                fmt_pct((g.ratio - 1.0) * 100.0),
                if g.significant {
                    format!("**{verdict}**")
                } else {
                    verdict
                }
            );
        }
        out.push('\n');
    }
}

/// The counters' changes held against the time's, where some time was measured.
fn counters_vs_time(out: &mut String, a: &Analysis) {
    let points = crate::counters_vs_time::program_points("", a);
    if crate::counters_vs_time::any_real_time(&points) {
        out.push_str("## Counters against time\n\n");
        out.push_str(&super::counters_vs_time::markdown(&points));
        out.push('\n');
    }
}

/// The heat maps, summarized by their hot-text span.
fn heatmap_table(out: &mut String, heatmaps: &[Heatmap]) {
    if !heatmaps.is_empty() {
        out.push_str("## Heat maps\n\n| label | binary | samples in text | hot text span (90 %) |\n|:--|:--|--:|--:|\n");
        for h in heatmaps {
            let num = |k: &str| {
                h.summary
                    .get(k)
                    .and_then(|v| v.as_f64())
                    .map(fmt_count)
                    .unwrap_or_else(|| "–".into())
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} bytes |",
                m(&h.label),
                m(&h.binary),
                num("samples_in_text"),
                num("hot_text_bytes")
            );
        }
        out.push('\n');
    }
}
