//! The HTML report: one static page, no script, no network (a Content
//! Security Policy forbids any fetch); plots inline as SVG, heat maps as
//! SVG wrapping a PNG data URI.

use std::fmt::Write;

use super::escape::escape_html as e;
use super::figures::{
    fmt_count, fmt_p, fmt_pct, fmt_speed, fmt_time, geomean_ratio, geomean_verdict,
};
use super::plot::{distribution_svg, PALETTE};
use crate::analysis::{Analysis, BenchmarkAnalysis};
use crate::counters_vs_time::{any_real_time, program_points, Point};
use crate::store::Heatmap;

const STYLE: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 1360px; padding: 0 1.2em; color: #1d232a; background: #fff; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 2px solid #dde2e7; padding-bottom: 0.2em; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
.sub { color: #5b6570; margin-top: 0; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #d5dbe1; padding: 0.3em 0.6em; text-align: right; vertical-align: top; }
th { background: #f1f4f7; }
td.l, th.l { text-align: left; }
td { white-space: nowrap; }
td.l { white-space: normal; }
table.variants td.l { max-width: 16em; }
table.commands td.l { white-space: normal; }
table.commands { font-size: 0.85em; }
.scroll { overflow-x: auto; }
table.counters { font-size: 0.85em; }
table.counters th { overflow-wrap: anywhere; }
table.counters .ch { display: block; color: #5b6570; font-size: 0.9em; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.92em; word-break: break-all; }
tr.better td.verdict, td.better { background: #d4f5d4; color: #0b5d0b; font-weight: 600; }
tr.worse td.verdict, td.worse { background: #fbd5d5; color: #8a1010; font-weight: 600; }
td.same { color: #5b6570; }
.swatch { display: inline-block; width: 0.8em; height: 0.8em; border-radius: 2px; margin-right: 0.4em; vertical-align: -0.05em; }
.verdict-line { font-size: 1.05em; margin: 0.6em 0; }
.warn { background: #fff6db; border-left: 4px solid #e0a800; padding: 0.4em 0.8em; margin: 0.3em 0; list-style: none; }
ul.warnings { padding-left: 0; }
dl.env { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; font-size: 0.92em; }
dl.env dt { font-weight: 600; color: #3a444e; }
dl.env dd { margin: 0; }
.legend { color: #5b6570; font-size: 0.88em; }
figure { margin: 0.8em 0; }
figcaption { color: #5b6570; font-size: 0.88em; }
svg { max-width: 100%; height: auto; }
"#;

fn class_of(b: &BenchmarkAnalysis, i: usize) -> &'static str {
    match b.variants[i].vs_baseline.as_ref() {
        Some(c) if c.significant && c.ratio.estimate < 1.0 => "better",
        Some(c) if c.significant && c.ratio.estimate > 1.0 => "worse",
        _ => "same",
    }
}

fn verdict_text(b: &BenchmarkAnalysis, i: usize) -> String {
    let v = &b.variants[i];
    match &v.vs_baseline {
        None => "baseline".into(),
        Some(c) if c.significant => format!("{} {}", fmt_speed(c.ratio.estimate), c.mark),
        Some(_) => "no significant difference".into(),
    }
}

fn variants_table(out: &mut String, b: &BenchmarkAnalysis) {
    out.push_str(
        "<table class=\"variants\"><thead><tr><th class=\"l\">variant</th>\
         <th>runs</th><th>mean</th><th>± sd</th><th>median</th><th>CV</th><th>user + sys</th>\
         <th>time vs baseline<br>[95 % CI]</th><th>change</th><th>p (Welch)</th><th class=\"l\">verdict</th></tr></thead><tbody>",
    );
    for (i, v) in b.variants.iter().enumerate() {
        let cls = class_of(b, i);
        let _ = write!(
            out,
            "<tr class=\"{cls}\"><td class=\"l\"><span class=\"swatch\" style=\"background:{}\"></span>{}</td>",
            PALETTE[i % PALETTE.len()],
            e(&v.name),
        );
        match &v.wall {
            Some(s) => {
                let _ = write!(
                    out,
                    "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1} %</td><td>{}</td>",
                    s.n,
                    fmt_time(s.mean),
                    fmt_time(s.stddev),
                    fmt_time(s.median),
                    s.cv_pct,
                    fmt_time(v.user_mean_s + v.sys_mean_s)
                );
            }
            None => out.push_str("<td>0</td><td>–</td><td>–</td><td>–</td><td>–</td><td>–</td>"),
        }
        match &v.vs_baseline {
            Some(c) => {
                let _ = write!(
                    out,
                    "<td>{:.4} [{:.4}, {:.4}]</td><td>{}</td><td>{}{}</td><td class=\"l verdict\">{}</td>",
                    c.ratio.estimate,
                    c.ratio.lo,
                    c.ratio.hi,
                    fmt_pct(c.change_pct()),
                    c.welch.map(|w| fmt_p(w.p)).unwrap_or_else(|| "–".into()),
                    if c.mark.is_empty() { String::new() } else { format!(" {}", c.mark) },
                    e(&verdict_text(b, i))
                );
            }
            None if i == 0 => {
                out.push_str("<td>1</td><td></td><td></td><td class=\"l verdict\">baseline</td>")
            }
            None => out
                .push_str("<td>–</td><td></td><td></td><td class=\"l verdict\">too few runs</td>"),
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table><table class=\"commands\"><tbody>");
    for (i, v) in b.variants.iter().enumerate() {
        let _ = write!(
            out,
            "<tr><td class=\"l\"><span class=\"swatch\" style=\"background:{}\"></span>{}</td><td class=\"l\"><code>{}</code>{}</td></tr>",
            PALETTE[i % PALETTE.len()],
            e(&v.name),
            e(&v.command),
            v.flags
                .as_ref()
                .map(|f| format!("<br>built with <code>{}</code>", e(f)))
                .unwrap_or_default()
        );
    }
    out.push_str("</tbody></table>");
}

fn counters_table(out: &mut String, b: &BenchmarkAnalysis) {
    if b.counters.is_empty() {
        out.push_str("<p class=\"legend\">No counters were recorded (<code>--counters none</code>, or no source available).</p>");
        return;
    }
    // One column per variant, its change against the baseline under the count, so the
    // variants of a `kfdo optimize` run fit a 1400-pixel window; more still scroll.
    out.push_str("<div class=\"scroll\"><table class=\"counters\"><thead><tr><th class=\"l\">event</th><th class=\"l\">source</th>");
    for (i, v) in b.variants.iter().enumerate() {
        let _ = write!(
            out,
            "<th><span class=\"swatch\" style=\"background:{}\"></span>{}{}</th>",
            PALETTE[i % PALETTE.len()],
            e(&v.name),
            if i > 0 {
                "<span class=\"ch\">vs baseline</span>"
            } else {
                ""
            }
        );
    }
    out.push_str("</tr></thead><tbody>");
    for row in &b.counters {
        let _ = write!(
            out,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td>",
            e(&row.name),
            e(&row.source)
        );
        let base = row.values.first().copied().flatten();
        for (i, v) in row.values.iter().enumerate() {
            let _ = write!(
                out,
                "<td>{}",
                v.map(fmt_count).unwrap_or_else(|| "–".into())
            );
            if i > 0 {
                let ch = match (base, v) {
                    (Some(b0), Some(x)) if b0 != 0.0 => fmt_pct((x / b0 - 1.0) * 100.0),
                    _ => "–".into(),
                };
                let _ = write!(out, "<span class=\"ch\">{ch}</span>");
            }
            out.push_str("</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
    for line in super::determinism::notes(b) {
        let _ = write!(out, "<p class=\"legend\">{}</p>", e(&line));
    }
    for s in &b.counter_sources {
        let _ = write!(out, "<p class=\"legend\">{}</p>", e(s));
    }
}

fn environment(out: &mut String, env: &serde_json::Value) {
    let Some(obj) = env.as_object() else {
        return;
    };
    out.push_str("<dl class=\"env\">");
    for (k, v) in obj {
        let text = match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Object(m) if m.is_empty() => "–".into(),
            serde_json::Value::Object(m) => m
                .iter()
                .map(|(a, b)| match b {
                    serde_json::Value::String(s) => format!("{a}: {s}"),
                    other => format!("{a}: {other}"),
                })
                .collect::<Vec<_>>()
                .join("; "),
            serde_json::Value::Null => "unknown".into(),
            other => other.to_string(),
        };
        let _ = write!(
            out,
            "<dt>{}</dt><dd>{}</dd>",
            e(&k.replace('_', " ")),
            e(&text)
        );
    }
    out.push_str("</dl>");
}

fn benchmark_section(out: &mut String, b: &BenchmarkAnalysis, idx: usize) {
    let _ = write!(
        out,
        "<section id=\"bench-{idx}\"><h2>Benchmark: {}</h2>",
        e(&b.name)
    );
    // One sentence per variant, the thing people quote.
    for (i, v) in b.variants.iter().enumerate().skip(1) {
        if let Some(c) = &v.vs_baseline {
            let _ = write!(
                out,
                "<p class=\"verdict-line\"><strong>{}</strong> vs <strong>{}</strong>: time {} ({} … {}), {} — <span class=\"{}\">{}</span></p>",
                e(&v.name),
                e(&b.baseline),
                fmt_pct(c.change_pct()),
                fmt_pct((c.ratio.lo - 1.0) * 100.0),
                fmt_pct((c.ratio.hi - 1.0) * 100.0),
                c.welch.map(|w| format!("p = {}", fmt_p(w.p))).unwrap_or_default(),
                class_of(b, i),
                e(&verdict_text(b, i))
            );
        }
    }
    variants_table(out, b);
    let _ = write!(
        out,
        "<figure>{}<figcaption>Every timed run as a dot (hollow: outlier), the box spans the quartiles, the bar is the median, the diamond the mean.</figcaption></figure>",
        distribution_svg(b)
    );
    out.push_str("<h3>Counters</h3>");
    counters_table(out, b);
    super::metrics::html(out, b);
    if !b.warnings.is_empty() {
        out.push_str("<h3>Warnings</h3><ul class=\"warnings\">");
        for w in &b.warnings {
            let _ = write!(out, "<li class=\"warn\">{}</li>", e(&w.to_string()));
        }
        out.push_str("</ul>");
    }
    out.push_str("<h3>Environment</h3>");
    environment(out, &b.environment);
    let sessions: Vec<String> = b
        .sessions
        .iter()
        .map(|(id, st)| format!("#{id} ({st})"))
        .collect();
    let _ = write!(
        out,
        "<p class=\"legend\">Sessions: {}</p></section>",
        e(&sessions.join(", "))
    );
}

fn heatmap_section(out: &mut String, heatmaps: &[Heatmap]) {
    if heatmaps.is_empty() {
        return;
    }
    out.push_str("<h2>Heat maps</h2><p class=\"legend\">x: time, y: address in the binary's text, colour: samples (log scale). \
                  A tighter hot band means hot code packed closer together.</p>");
    for h in heatmaps {
        let span = h
            .summary
            .get("hot_text_bytes")
            .and_then(|v| v.as_f64())
            .map(|b| format!("hot text span (90 % of samples): {} bytes", fmt_count(b)))
            .unwrap_or_default();
        let samples = h
            .summary
            .get("samples_in_text")
            .and_then(|v| v.as_f64())
            .map(|s| format!("{} samples in text", fmt_count(s)))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<h3>{}</h3><p class=\"legend\"><code>{}</code> — {} — {}</p><figure><img src=\"data:image/svg+xml;base64,{}\" alt=\"heat map of {}\" style=\"max-width:100%\"></figure>",
            e(&h.label),
            e(&h.binary),
            e(&samples),
            e(&span),
            // The stored SVG goes in as an image, never as markup: whatever a
            // store file holds, it cannot add elements or script to the page.
            super::escape::base64(h.svg.as_bytes()),
            e(&h.label)
        );
    }
}

/// The page's head, style and title block.
fn page_start(title: &str, generated: &str) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>",
        e(title)
    );
    let _ = write!(
        out,
        "<h1>{}</h1><p class=\"sub\">{}</p>",
        e(title),
        e(generated)
    );
    out
}

/// A page of the counter model held against time alone (`kfdo counters-vs-time`).
pub fn render_counters_vs_time(points: &[Point], title: &str, generated: &str) -> String {
    let mut out = page_start(title, generated);
    out.push_str(&super::counters_vs_time::html_section(
        points,
        "Counters against time",
    ));
    out.push_str("</body></html>\n");
    out
}

pub fn render(a: &Analysis, heatmaps: &[Heatmap], title: &str, generated: &str) -> String {
    let mut out = page_start(title, generated);

    if !a.benchmarks.is_empty() {
        out.push_str("<h2>Summary</h2><table class=\"summary\"><thead><tr><th class=\"l\">benchmark</th><th class=\"l\">baseline</th><th class=\"l\">variant</th><th>time vs baseline [95 % CI]</th><th>change</th><th class=\"l\">verdict</th></tr></thead><tbody>");
        for (bi, b) in a.benchmarks.iter().enumerate() {
            for (i, v) in b.variants.iter().enumerate().skip(1) {
                let cls = class_of(b, i);
                let (ratio, change) = match &v.vs_baseline {
                    Some(c) => (
                        format!(
                            "{:.4} [{:.4}, {:.4}]",
                            c.ratio.estimate, c.ratio.lo, c.ratio.hi
                        ),
                        fmt_pct(c.change_pct()),
                    ),
                    None => ("–".into(), "–".into()),
                };
                let _ = write!(
                    out,
                    "<tr><td class=\"l\"><a href=\"#bench-{bi}\">{}</a></td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{ratio}</td><td class=\"{cls}\">{change}</td><td class=\"l {cls}\">{}</td></tr>",
                    e(&b.name),
                    e(&b.baseline),
                    e(&v.name),
                    e(&verdict_text(b, i))
                );
            }
        }
        for g in &a.geomeans {
            // Coloured and worded as a benchmark's row: a verdict only when significant.
            let cls = match (g.significant, g.ratio < 1.0) {
                (true, true) => "better",
                (true, false) => "worse",
                _ => "same",
            };
            let _ = write!(
                out,
                "<tr><td class=\"l\"><strong>geometric mean</strong> ({} benchmark{})</td><td class=\"l\"></td><td class=\"l\">{}</td><td>{}</td><td class=\"{cls}\">{}</td><td class=\"l {cls}\">{}</td></tr>",
                g.benchmarks,
                if g.benchmarks == 1 { "" } else { "s" },
                e(&g.variant),
                geomean_ratio(g),
                fmt_pct((g.ratio - 1.0) * 100.0),
                e(&geomean_verdict(g))
            );
        }
        out.push_str("</tbody></table>");
        out.push_str(
            "<p class=\"legend\">Time vs baseline is mean(variant) / mean(baseline) of wall-clock time; the interval is a \
             95 % percentile bootstrap (10,000 resamples). <strong>*</strong> / <strong>**</strong>: Welch's t-test rejects \
             equal means at 5 % / 1 % (mmtests' rule, degrees of freedom rounded down). A result is called significant \
             (green: faster, red: slower) only when the test rejects and the interval excludes 1.</p>",
        );
    } else {
        out.push_str("<p>The store holds no comparisons yet.</p>");
    }

    for (i, b) in a.benchmarks.iter().enumerate() {
        benchmark_section(&mut out, b, i);
    }
    let points = program_points("", a);
    if any_real_time(&points) {
        out.push_str(&super::counters_vs_time::html_section(
            &points,
            "Counters against time",
        ));
    }
    heatmap_section(&mut out, heatmaps);
    out.push_str("</body></html>\n");
    out
}
