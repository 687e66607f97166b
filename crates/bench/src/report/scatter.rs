//! Counters against time as inline SVG: one small panel per counter, the counter's
//! change on x and the time's change on y (both percent against the baseline), a dot per
//! variant and benchmark with the time's 95 % interval as a bar. Filled dots changed
//! time significantly; hollow ones did not; grey crosses were timed under an emulator and
//! stay out of the least-squares line drawn through the rest.

use std::fmt::Write;

use super::escape::escape_html;
use super::plot::{ticks, PALETTE};
use crate::counters_vs_time::{CounterFit, Point};

const PANEL_W: f64 = 330.0;
const PANEL_H: f64 = 250.0;
const LEFT: f64 = 52.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 26.0;
const BOTTOM: f64 = 40.0;

fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((0.0f64, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let pad = ((hi - lo) * 0.08).max(0.5);
    (lo - pad, hi + pad)
}

/// Colour of a point's group (recipe), in first-seen order of `groups`.
pub fn group_colour(groups: &[String], group: &str) -> &'static str {
    let i = groups.iter().position(|g| g == group).unwrap_or(0);
    PALETTE[(i + 1) % PALETTE.len()]
}

/// The groups of `points`, in first-seen order.
pub fn groups(points: &[Point]) -> Vec<String> {
    let mut g: Vec<String> = Vec::new();
    for p in points {
        if !g.contains(&p.group) {
            g.push(p.group.clone());
        }
    }
    g
}

/// One panel: `fit.counter` against the points' time changes.
pub fn panel_svg(points: &[Point], fit: &CounterFit, groups: &[String]) -> String {
    let pts: Vec<(&Point, f64)> = points
        .iter()
        .filter_map(|p| p.counter(&fit.counter).map(|c| (p, c)))
        .collect();
    let (x_lo, x_hi) = span(pts.iter().map(|(_, c)| *c));
    let (y_lo, y_hi) = span(
        pts.iter()
            .flat_map(|(p, _)| [p.time.lo_pct, p.time.hi_pct, p.time.pct]),
    );
    let (pw, ph) = (PANEL_W - LEFT - RIGHT, PANEL_H - TOP - BOTTOM);
    let x = |v: f64| LEFT + (v - x_lo) / (x_hi - x_lo) * pw;
    let y = |v: f64| TOP + (y_hi - v) / (y_hi - y_lo) * ph;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {PANEL_W} {PANEL_H}" width="{PANEL_W}" height="{PANEL_H}" role="img" aria-label="time change against {}" font-family="sans-serif" font-size="10">"#,
        escape_html(&fit.counter)
    );
    let _ = write!(
        svg,
        r##"<text x="{:.1}" y="14" text-anchor="middle" font-size="11" font-weight="600" fill="#222">{}</text>"##,
        PANEL_W / 2.0,
        escape_html(&fit.counter)
    );
    for t in ticks(x_lo, x_hi, 5) {
        let _ = write!(
            svg,
            r##"<line x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{1:.1}" stroke="{2}"/><text x="{0:.1}" y="{3:.1}" text-anchor="middle" fill="#333">{4}</text>"##,
            x(t),
            TOP + ph,
            if t == 0.0 { "#9aa3ad" } else { "#eceff2" },
            TOP + ph + 13.0,
            fmt_tick(t)
        );
    }
    for t in ticks(y_lo, y_hi, 5) {
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}" stroke="{2}"/><text x="{3:.1}" y="{4:.1}" text-anchor="end" fill="#333">{5}</text>"##,
            y(t),
            LEFT + pw,
            if t == 0.0 { "#9aa3ad" } else { "#eceff2" },
            LEFT - 5.0,
            y(t) + 3.5,
            fmt_tick(t)
        );
    }
    let _ = write!(
        svg,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#333">counter change (%)</text><text transform="translate(12 {:.1}) rotate(-90)" text-anchor="middle" fill="#333">time change (%)</text>"##,
        LEFT + pw / 2.0,
        PANEL_H - 8.0,
        TOP + ph / 2.0
    );
    if let Some(slope) = fit.slope {
        let real: Vec<(f64, f64)> = pts
            .iter()
            .filter(|(p, _)| !p.time.emulated)
            .map(|(p, c)| (*c, p.time.pct))
            .collect();
        let n = real.len() as f64;
        let (mx, my) = (
            real.iter().map(|r| r.0).sum::<f64>() / n,
            real.iter().map(|r| r.1).sum::<f64>() / n,
        );
        let line = |v: f64| my + slope * (v - mx);
        let _ = write!(
            svg,
            r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#444" stroke-dasharray="4 3"><title>least squares: {slope:.3} points of time per point of counter</title></line>"##,
            x(x_lo),
            y(line(x_lo).clamp(y_lo, y_hi)),
            x(x_hi),
            y(line(x_hi).clamp(y_lo, y_hi))
        );
    }
    for (p, c) in &pts {
        let title = escape_html(&format!(
            "{} {} {}: counter {:+.2} %, {} {:+.2} % [{:+.2}, {:+.2}]",
            p.group,
            p.benchmark,
            p.variant,
            c,
            p.time.measure,
            p.time.pct,
            p.time.lo_pct,
            p.time.hi_pct
        ));
        let (cx, cy) = (x(*c), y(p.time.pct));
        if p.time.emulated {
            let _ = write!(
                svg,
                r##"<path class="point emulated" d="M{:.1},{:.1} l7,7 m0,-7 l-7,7" stroke="#8a9199" stroke-width="1.5"><title>{title} (emulated time)</title></path>"##,
                cx - 3.5,
                cy - 3.5
            );
            continue;
        }
        let colour = group_colour(groups, &p.group);
        let _ = write!(
            svg,
            r##"<line x1="{cx:.1}" y1="{:.1}" x2="{cx:.1}" y2="{:.1}" stroke="{colour}" stroke-opacity="0.55"/><circle class="point" cx="{cx:.1}" cy="{cy:.1}" r="4" fill="{}" stroke="{colour}" stroke-width="1.5"><title>{title}</title></circle>"##,
            y(p.time.lo_pct),
            y(p.time.hi_pct),
            if p.time.significant {
                colour
            } else {
                "#ffffff"
            }
        );
    }
    svg.push_str("</svg>");
    svg
}

fn fmt_tick(t: f64) -> String {
    if t.abs() >= 10.0 || t == t.round() {
        format!("{t:.0}")
    } else {
        format!("{t:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters_vs_time::{fits, TimeChange};

    fn point(group: &str, variant: &str, t: f64, c: f64, emulated: bool) -> Point {
        Point {
            group: group.into(),
            benchmark: "b".into(),
            variant: variant.into(),
            time: TimeChange {
                measure: "wall time".into(),
                pct: t,
                lo_pct: t - 1.0,
                hi_pct: t + 1.0,
                p: Some(0.01),
                significant: t < 0.0,
                emulated,
            },
            counters: vec![("taken branches".into(), c)],
        }
    }

    #[test]
    fn every_point_is_drawn_and_the_line_only_with_a_fit() {
        let pts = [
            point("sqlite3", "autofdo", -8.0, -30.0, false),
            point("lua5.4", "autofdo", -3.0, -10.0, false),
            point("lua5.4", "ifdo", 1.0, 2.0, false),
            point("sqlite3-aarch64", "autofdo", 20.0, -40.0, true),
        ];
        let g = groups(&pts);
        let f = fits(&pts);
        let svg = panel_svg(&pts, &f[0], &g);
        assert_eq!(svg.matches("class=\"point\"").count(), 3, "{svg}");
        assert_eq!(svg.matches("class=\"point emulated\"").count(), 1);
        assert!(
            svg.contains("stroke-dasharray"),
            "three real points: a line"
        );
        // Different groups, different colours; the hollow dot is the non-significant one.
        assert_ne!(group_colour(&g, "sqlite3"), group_colour(&g, "lua5.4"));
        assert_eq!(svg.matches("fill=\"#ffffff\"").count(), 1);
        let two = &pts[..2];
        let svg = panel_svg(two, &fits(two)[0], &groups(two));
        assert!(!svg.contains("stroke-dasharray"), "two points: no fit line");
    }

    #[test]
    fn labels_are_escaped() {
        let mut p = point("<g>", "a&b", -1.0, -1.0, false);
        p.counters[0].0 = "x<y".into();
        let pts = [p];
        let svg = panel_svg(&pts, &fits(&pts)[0], &groups(&pts));
        assert!(!svg.contains("<g>") && svg.contains("&lt;g&gt;"));
        assert!(svg.contains("x&lt;y") && svg.contains("a&amp;b"));
    }
}
