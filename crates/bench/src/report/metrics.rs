//! The metrics table (what runs measured besides time), in the three report formats:
//! one row per metric, each variant's mean, and after the baseline its change with the
//! 95 % interval, the significance mark and whether the change is better or worse.

use std::fmt::Write;

use super::escape::{escape_html, escape_markdown};
use super::figures::{fmt_count, fmt_pct};
use crate::analysis::{BenchmarkAnalysis, MetricAnalysis};

/// (name, source, unit) of every metric of a benchmark, in first-seen order.
fn rows(b: &BenchmarkAnalysis) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    for v in &b.variants {
        for m in &v.metrics {
            if !out.iter().any(|(n, s, _)| *n == m.name && *s == m.source) {
                out.push((m.name.clone(), m.source.clone(), m.unit.clone()));
            }
        }
    }
    out
}

fn find<'a>(
    b: &'a BenchmarkAnalysis,
    variant: usize,
    name: &str,
    source: &str,
) -> Option<&'a MetricAnalysis> {
    b.variants[variant]
        .metrics
        .iter()
        .find(|m| m.name == name && m.source == source)
}

/// A mean for people: counts with separators, rates with 4 significant digits.
pub fn fmt_value(x: f64) -> String {
    if x.abs() >= 10_000.0 {
        fmt_count(x)
    } else {
        format!("{x:.4}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// "−12.3 % [−14.0, −10.5] ** better": the change against the baseline.
pub fn fmt_change(m: &MetricAnalysis) -> String {
    let Some(c) = &m.vs_baseline else {
        return "–".into();
    };
    let words = match m.verdict() {
        Some(true) => "better",
        Some(false) => "worse",
        None => "no significant difference",
    };
    format!(
        "{} [{}, {}]{}{} {words}",
        fmt_pct(c.change_pct()),
        fmt_pct((c.ratio.lo - 1.0) * 100.0),
        fmt_pct((c.ratio.hi - 1.0) * 100.0),
        if c.mark.is_empty() { "" } else { " " },
        c.mark
    )
}

fn label(name: &str, unit: &str) -> String {
    if unit.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({unit})")
    }
}

/// Plain text, as `kfdo compare` prints its tables.
pub fn text(out: &mut String, b: &BenchmarkAnalysis) {
    let rows = rows(b);
    if rows.is_empty() {
        return;
    }
    for (name, source, unit) in rows {
        let _ = writeln!(out, "  {} [{source}]", label(&name, &unit));
        for (i, v) in b.variants.iter().enumerate() {
            let Some(m) = find(b, i, &name, &source) else {
                continue;
            };
            let _ = write!(
                out,
                "    {:24} {:>16} ± {:<12}",
                v.name,
                fmt_value(m.summary.mean),
                fmt_value(m.summary.stddev)
            );
            if i > 0 {
                let _ = write!(out, "  {}", fmt_change(m));
            }
            out.push('\n');
        }
    }
}

pub fn markdown(out: &mut String, b: &BenchmarkAnalysis) {
    let rows = rows(b);
    if rows.is_empty() {
        return;
    }
    let m = escape_markdown;
    out.push_str("| metric | source |");
    for (i, v) in b.variants.iter().enumerate() {
        let _ = write!(out, " {} |", m(&v.name));
        if i > 0 {
            out.push_str(" vs baseline [95 % CI] |");
        }
    }
    out.push_str("\n|:--|:--|");
    for i in 0..b.variants.len() {
        out.push_str("--:|");
        if i > 0 {
            out.push_str("--:|");
        }
    }
    out.push('\n');
    for (name, source, unit) in rows {
        let _ = write!(out, "| {} | {} |", m(&label(&name, &unit)), m(&source));
        for i in 0..b.variants.len() {
            let x = find(b, i, &name, &source);
            let _ = write!(
                out,
                " {} |",
                x.map(|x| fmt_value(x.summary.mean))
                    .unwrap_or_else(|| "–".into())
            );
            if i > 0 {
                let _ = write!(
                    out,
                    " {} |",
                    m(&x.map(fmt_change).unwrap_or_else(|| "–".into()))
                );
            }
        }
        out.push('\n');
    }
    out.push('\n');
}

pub fn html(out: &mut String, b: &BenchmarkAnalysis) {
    let rows = rows(b);
    if rows.is_empty() {
        return;
    }
    let e = escape_html;
    out.push_str("<h3>Metrics</h3><div class=\"scroll\"><table class=\"counters\"><thead><tr><th class=\"l\">metric</th><th class=\"l\">source</th>");
    for (i, v) in b.variants.iter().enumerate() {
        let _ = write!(out, "<th>{}</th>", e(&v.name));
        if i > 0 {
            out.push_str("<th>vs baseline [95 % CI]</th>");
        }
    }
    out.push_str("</tr></thead><tbody>");
    for (name, source, unit) in rows {
        let _ = write!(
            out,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td>",
            e(&label(&name, &unit)),
            e(&source)
        );
        for i in 0..b.variants.len() {
            let x = find(b, i, &name, &source);
            let _ = write!(
                out,
                "<td>{}</td>",
                x.map(|x| fmt_value(x.summary.mean))
                    .unwrap_or_else(|| "–".into())
            );
            if i > 0 {
                let (class, text) = match x {
                    Some(x) => (
                        match x.verdict() {
                            Some(true) => "better",
                            Some(false) => "worse",
                            None => "same",
                        },
                        fmt_change(x),
                    ),
                    None => ("", "–".into()),
                };
                let _ = write!(out, "<td class=\"{class}\">{}</td>", e(&text));
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}
