//! The counter model held against time, for people: the points (every variant's time
//! change beside its counters' changes) and the fit of each counter, as Markdown and as an
//! HTML section with one scatter panel per counter.

use std::fmt::Write;

use super::escape::{escape_html as e, escape_markdown as m};
use super::figures::{fmt_p, fmt_pct};
use super::scatter::{groups, panel_svg};
use crate::counters_vs_time::{fits, CounterFit, Point, FLAT_PCT};

/// What the tables mean, said once under them.
pub const READING: &str = "Each row is one variant of one benchmark against its baseline: the \
     measured time's change with its 95 % interval (marked * where significant: Welch's test \
     and the interval agree) beside each emulated counter's change. Per counter: Pearson's r \
     and Spearman's ρ of counter change against time change, the least-squares slope (points \
     of time per point of counter), and how many significant time changes the counter moved \
     with (by at least 0.5 %). A fit means nothing, and its caveat says why, over fewer \
     than 5 points, with no significant time change, or with an r chance gives (p ≥ 0.05). \
     Times taken under an emulator are shown but left out of the fits.";

fn time_cell(p: &Point) -> String {
    format!(
        "{} [{}, {}]{}",
        fmt_pct(p.time.pct),
        fmt_pct(p.time.lo_pct),
        fmt_pct(p.time.hi_pct),
        if p.time.significant { " *" } else { "" }
    )
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}"))
        .unwrap_or_else(|| "–".into())
}

fn agreement(f: &CounterFit) -> String {
    if f.significant == 0 {
        "– (no significant time change)".into()
    } else {
        format!("{} of {}", f.agree, f.significant)
    }
}

/// The two tables as Markdown (no heading: the caller's document gives it).
pub fn markdown(points: &[Point]) -> String {
    let show_group = groups(points).len() > 1;
    let mut s = String::new();
    for (names, points) in families(points) {
        points_markdown(&mut s, &names, &points, show_group);
    }
    fits_markdown(&mut s, points);
    s
}

/// Points that count the same counters (a program's, a kernel's), in first-seen order:
/// each gets a table of its own, so no table is mostly empty cells.
fn families(points: &[Point]) -> Vec<(Vec<String>, Vec<Point>)> {
    let mut out: Vec<(Vec<String>, Vec<Point>)> = Vec::new();
    for p in points {
        let names: Vec<String> = p.counters.iter().map(|(n, _)| n.clone()).collect();
        match out.iter_mut().find(|(n, _)| *n == names) {
            Some((_, list)) => list.push(p.clone()),
            None => out.push((names, vec![p.clone()])),
        }
    }
    out
}

/// A point's row as plain text: (recipe), benchmark, variant, time measure (the
/// left-aligned cells), then the time change, p and each counter's change.
fn point_cells(p: &Point, names: &[String], show_group: bool) -> Vec<String> {
    let mut cells = Vec::new();
    if show_group {
        cells.push(p.group.clone());
    }
    cells.push(p.benchmark.clone());
    cells.push(p.variant.clone());
    cells.push(format!(
        "{}{}",
        p.time.measure,
        if p.time.emulated { " (left out)" } else { "" }
    ));
    cells.push(time_cell(p));
    cells.push(p.time.p.map(fmt_p).unwrap_or_else(|| "–".into()));
    for n in names {
        cells.push(p.counter(n).map(fmt_pct).unwrap_or_else(|| "–".into()));
    }
    cells
}

/// The points table's header cells, in `point_cells`' order.
fn point_header(names: &[String], show_group: bool) -> Vec<String> {
    let mut h: Vec<String> = Vec::new();
    if show_group {
        h.push("recipe".into());
    }
    for c in [
        "benchmark",
        "variant",
        "time measure",
        "time change [95 % CI]",
        "p",
    ] {
        h.push(c.into());
    }
    h.extend(names.iter().cloned());
    h
}

/// A fit's row as plain text.
fn fit_cells(f: &CounterFit) -> Vec<String> {
    vec![
        f.counter.clone(),
        f.n.to_string(),
        opt(f.pearson, 2),
        opt(f.spearman, 2),
        opt(f.slope, 3),
        agreement(f),
        f.caveat.clone().unwrap_or_else(|| "–".into()),
    ]
}

const FIT_HEADER: [&str; 7] = [
    "counter",
    "points",
    "Pearson r",
    "Spearman ρ",
    "slope",
    "moved with a significant time change",
    "caveat",
];

/// A Markdown row; the cells before `text` are names (escaped), the rest kfdo's own
/// numbers and words, written as they are.
fn markdown_row(s: &mut String, cells: &[String], text: usize) {
    for (i, c) in cells.iter().enumerate() {
        if i < text {
            let _ = write!(s, "| {} ", m(c));
        } else {
            let _ = write!(s, "| {c} ");
        }
    }
    s.push_str("|\n");
}

fn points_markdown(s: &mut String, names: &[String], points: &[Point], show_group: bool) {
    let header = point_header(names, show_group);
    let left = header.len() - names.len() - 2;
    let mut named: Vec<String> = header[..header.len() - names.len()].to_vec();
    named.extend(names.iter().map(|n| m(n)));
    markdown_row(s, &named, 0);
    s.push_str(&"|:--".repeat(left));
    s.push_str(&"|--:".repeat(header.len() - left));
    s.push_str("|\n");
    for p in points {
        markdown_row(s, &point_cells(p, names, show_group), left);
    }
    s.push('\n');
}

fn fits_markdown(s: &mut String, points: &[Point]) {
    markdown_row(s, &FIT_HEADER.map(String::from), 0);
    s.push_str("|:--|--:|--:|--:|--:|--:|:--|\n");
    for f in fits(points) {
        markdown_row(s, &fit_cells(&f), 1);
    }
    let _ = writeln!(
        s,
        "\n{}",
        READING.replace("0.5 %", &format!("{FLAT_PCT} %"))
    );
}

/// The tables and the panels as an HTML section under `heading`.
pub fn html_section(points: &[Point], heading: &str) -> String {
    let show_group = groups(points).len() > 1;
    let mut s = String::new();
    let _ = write!(
        s,
        "<section id=\"counters-vs-time\"><h2>{}</h2>",
        e(heading)
    );
    for (names, family) in families(points) {
        points_html(&mut s, &names, &family, show_group);
    }
    fits_and_panels_html(&mut s, points);
    s
}

fn html_row(s: &mut String, cell: &str, cells: &[String], left: usize, classes: &[(usize, &str)]) {
    s.push_str("<tr>");
    for (i, c) in cells.iter().enumerate() {
        let class = classes
            .iter()
            .find(|(at, _)| *at == i)
            .map(|(_, c)| *c)
            .or((i < left).then_some("l"));
        match class {
            Some(k) => {
                let _ = write!(s, "<{cell} class=\"{k}\">{}</{cell}>", e(c));
            }
            None => {
                let _ = write!(s, "<{cell}>{}</{cell}>", e(c));
            }
        }
    }
    s.push_str("</tr>");
}

fn points_html(s: &mut String, names: &[String], points: &[Point], show_group: bool) {
    let header = point_header(names, show_group);
    let left = header.len() - names.len() - 2;
    s.push_str("<div class=\"scroll\"><table class=\"model\"><thead>");
    html_row(s, "th", &header, left, &[]);
    s.push_str("</thead><tbody>");
    for p in points {
        let verdict = match (p.time.significant, p.time.pct < 0.0) {
            (true, true) => vec![(left, "better")],
            (true, false) => vec![(left, "worse")],
            _ => vec![],
        };
        html_row(s, "td", &point_cells(p, names, show_group), left, &verdict);
    }
    s.push_str("</tbody></table></div>");
}

fn fits_and_panels_html(s: &mut String, points: &[Point]) {
    s.push_str("<table class=\"fits\"><thead>");
    html_row(s, "th", &FIT_HEADER.map(String::from), 1, &[(6, "l")]);
    s.push_str("</thead><tbody>");
    let all = fits(points);
    for f in &all {
        html_row(s, "td", &fit_cells(f), 1, &[(6, "l")]);
    }
    let _ = write!(
        s,
        "</tbody></table><p class=\"legend\">{}</p><figure class=\"panels\">",
        e(READING)
    );
    let g = groups(points);
    for f in &all {
        s.push_str(&panel_svg(points, f, &g));
    }
    s.push_str("<figcaption>x: the counter's change, y: the time's change with its 95 % interval (percent against the baseline). Filled: significant time change; hollow: not; grey cross: emulated time. Dashed: least squares over the real-time points. Colours: ");
    for (i, group) in g.iter().enumerate() {
        let _ = write!(
            s,
            "{}<span class=\"swatch\" style=\"background:{}\"></span>{}",
            if i > 0 { ", " } else { "" },
            super::scatter::group_colour(&g, group),
            e(group)
        );
    }
    s.push_str(".</figcaption></figure></section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters_vs_time::TimeChange;

    fn point(variant: &str, t: f64, sig: bool, taken: f64, l1i: Option<f64>) -> Point {
        let mut counters = vec![("taken branches".to_string(), taken)];
        counters.extend(l1i.map(|v| ("L1i misses".to_string(), v)));
        Point {
            group: "lz".into(),
            benchmark: "lz | 1".into(),
            variant: variant.into(),
            time: TimeChange {
                measure: "wall time".into(),
                pct: t,
                lo_pct: t - 2.0,
                hi_pct: t + 2.0,
                p: Some(0.003),
                significant: sig,
                emulated: false,
            },
            counters,
        }
    }

    #[test]
    fn a_row_per_point_and_a_fit_per_counter() {
        let pts = [
            point("autofdo", -6.0, true, -40.0, Some(-12.0)),
            point("ifdo", -9.0, true, -55.0, None),
            point("thinlto", 1.0, false, -3.0, Some(2.0)),
        ];
        let md = markdown(&pts);
        // One recipe: no recipe column.
        let rows: Vec<&str> = md
            .lines()
            .filter(|l| l.starts_with("| lz \\| 1 |"))
            .collect();
        assert_eq!(rows.len(), 3, "{md}");
        assert!(rows[0].contains("−6.0 % [−8.0 %, −4.0 %] *"), "{}", rows[0]);
        // The pipe in the benchmark's name does not split its cell; ifdo has no L1i.
        // ifdo counts no L1i: its own table, after the first family's.
        assert_eq!(md.matches("| benchmark | variant |").count(), 2, "{md}");
        assert!(
            rows[2].contains("| ifdo |") && rows[2].ends_with("| −55.0 % |"),
            "{}",
            rows[2]
        );
        assert!(md.contains("| taken branches | 3 | "), "{md}");
        assert!(
            md.contains("| L1i misses | 2 | – | – | – | 1 of 1 |"),
            "{md}"
        );
        let html = html_section(&pts, "Counters against time");
        assert_eq!(html.matches("<svg").count(), 2, "a panel per counter");
        assert_eq!(html.matches("class=\"better\"").count(), 2);
    }
}
