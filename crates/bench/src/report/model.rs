//! The counter model held against time, for people: the points (every variant's time
//! change beside its counters' changes) and the fit of each counter, as Markdown and as an
//! HTML section with one scatter panel per counter.

use std::fmt::Write;

use super::escape::{escape_html as e, escape_markdown as m};
use super::figures::{fmt_p, fmt_pct};
use super::scatter::{groups, panel_svg};
use crate::model_check::{fits, CounterFit, Point, FLAT_PCT};

/// What the tables mean, said once under them.
pub const READING: &str = "Each row is one variant of one benchmark against its baseline: the \
     measured time's change with its 95 % interval (marked * where significant: Welch's test \
     and the interval agree) beside each emulated counter's change. Per counter: Pearson's r \
     and Spearman's ρ of counter change against time change, the least-squares slope (points \
     of time per point of counter), and how many significant time changes the counter moved \
     with (by at least 0.5 %). Times taken under an emulator are shown but left out of the \
     fits.";

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

fn points_markdown(s: &mut String, names: &[String], points: &[Point], show_group: bool) {
    if show_group {
        s.push_str("| recipe ");
    }
    s.push_str("| benchmark | variant | time measure | time change [95 % CI] | p |");
    for n in names {
        let _ = write!(s, " {} |", m(n));
    }
    s.push_str(if show_group { "\n|:--|" } else { "\n|" });
    s.push_str(":--|:--|:--|--:|--:|");
    s.push_str(&"--:|".repeat(names.len()));
    s.push('\n');
    for p in points {
        if show_group {
            let _ = write!(s, "| {} ", m(&p.group));
        }
        let _ = write!(
            s,
            "| {} | {} | {}{} | {} | {} |",
            m(&p.benchmark),
            m(&p.variant),
            m(&p.time.measure),
            if p.time.emulated { " (left out)" } else { "" },
            time_cell(p),
            p.time.p.map(fmt_p).unwrap_or_else(|| "–".into())
        );
        for n in names {
            let _ = write!(
                s,
                " {} |",
                p.counter(n).map(fmt_pct).unwrap_or_else(|| "–".into())
            );
        }
        s.push('\n');
    }
    s.push('\n');
}

fn fits_markdown(s: &mut String, points: &[Point]) {
    s.push_str("| counter | points | Pearson r | Spearman ρ | slope | moved with a significant time change |\n");
    s.push_str("|:--|--:|--:|--:|--:|--:|\n");
    for f in fits(points) {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            m(&f.counter),
            f.n,
            opt(f.pearson, 2),
            opt(f.spearman, 2),
            opt(f.slope, 3),
            agreement(&f)
        );
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

fn points_html(s: &mut String, names: &[String], points: &[Point], show_group: bool) {
    let _ = write!(
        s,
        "<div class=\"scroll\"><table class=\"model\"><thead><tr>{}\
         <th class=\"l\">benchmark</th><th class=\"l\">variant</th>\
         <th class=\"l\">time measure</th><th>time change [95 % CI]</th><th>p</th>",
        if show_group {
            "<th class=\"l\">recipe</th>"
        } else {
            ""
        }
    );
    for n in names {
        let _ = write!(s, "<th>{}</th>", e(n));
    }
    s.push_str("</tr></thead><tbody>");
    for p in points {
        let cls = match (p.time.significant, p.time.pct < 0.0) {
            (true, true) => " class=\"better\"",
            (true, false) => " class=\"worse\"",
            _ => "",
        };
        s.push_str("<tr>");
        if show_group {
            let _ = write!(s, "<td class=\"l\">{}</td>", e(&p.group));
        }
        let _ = write!(
            s,
            "<td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}{}</td><td{cls}>{}</td><td>{}</td>",
            e(&p.benchmark),
            e(&p.variant),
            e(&p.time.measure),
            if p.time.emulated { " (left out)" } else { "" },
            e(&time_cell(p)),
            p.time.p.map(fmt_p).unwrap_or_else(|| "–".into())
        );
        for n in names {
            let _ = write!(
                s,
                "<td>{}</td>",
                p.counter(n).map(fmt_pct).unwrap_or_else(|| "–".into())
            );
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></div>");
}

fn fits_and_panels_html(s: &mut String, points: &[Point]) {
    s.push_str("<table class=\"fits\"><thead><tr><th class=\"l\">counter</th><th>points</th><th>Pearson r</th><th>Spearman ρ</th><th>slope</th><th>moved with a significant time change</th></tr></thead><tbody>");
    let all = fits(points);
    for f in &all {
        let _ = write!(
            s,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            e(&f.counter),
            f.n,
            opt(f.pearson, 2),
            opt(f.spearman, 2),
            opt(f.slope, 3),
            e(&agreement(f))
        );
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
    use crate::model_check::TimeChange;

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
