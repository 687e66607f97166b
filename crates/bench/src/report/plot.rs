//! The distribution plot of one benchmark, as inline SVG: one row per
//! variant with every run as a dot (spread vertically so equal times stay
//! visible), the interquartile box, the median line and the mean diamond.
//! Overlap or separation of the rows is the verdict at a glance, as in the
//! seeds' plots ("the green dots are all below the yellow dots").

use std::fmt::Write;

use super::escape::escape_html;
use super::figures::fmt_time;
use crate::analysis::BenchmarkAnalysis;

/// Colours: the baseline in slate, the others in distinct hues.
pub const PALETTE: [&str; 8] = [
    "#55606e", "#1f77b4", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d",
];

/// "Nice" tick positions covering [lo, hi].
pub fn ticks(lo: f64, hi: f64, want: usize) -> Vec<f64> {
    // NaN fails every comparison: `hi <= lo` alone would let it through.
    if hi.is_nan() || lo.is_nan() || hi <= lo || !lo.is_finite() || !hi.is_finite() {
        return vec![lo];
    }
    let raw = (hi - lo) / want.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

/// A small deterministic jitter in [-1, 1] for run i.
fn jitter(i: usize) -> f64 {
    let x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
    (x as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

pub fn distribution_svg(b: &BenchmarkAnalysis) -> String {
    let row_h = 44.0;
    let (left, right, top) = (190.0, 24.0, 14.0);
    let width = 760.0;
    let plot_w = width - left - right;
    let k = b.variants.len();
    let height = top + row_h * k as f64 + 46.0;

    let all: Vec<f64> = b
        .variants
        .iter()
        .flat_map(|v| v.wall_s.iter().copied())
        .collect();
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="run time distribution of {}" font-family="sans-serif" font-size="11">"#,
        escape_html(&b.name)
    );
    if all.is_empty() {
        svg.push_str(r#"<text x="10" y="30">no finished runs</text></svg>"#);
        return svg;
    }
    let (mut lo, mut hi) = all
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let pad = ((hi - lo) * 0.06).max(hi.abs() * 0.01).max(1e-9);
    lo = (lo - pad).max(0.0);
    hi += pad;
    let x = |v: f64| left + (v - lo) / (hi - lo) * plot_w;
    let axis_y = top + row_h * k as f64;

    // Grid and axis.
    for t in ticks(lo, hi, 6) {
        let tx = x(t);
        let _ = write!(
            svg,
            r##"<line x1="{tx:.1}" y1="{top}" x2="{tx:.1}" y2="{axis_y}" stroke="#e3e6ea"/><text x="{tx:.1}" y="{:.1}" text-anchor="middle" fill="#333">{}</text>"##,
            axis_y + 16.0,
            escape_html(&fmt_time(t))
        );
    }
    let _ = write!(
        svg,
        r##"<line x1="{left}" y1="{axis_y}" x2="{:.1}" y2="{axis_y}" stroke="#333"/><text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#333">wall-clock time per run (lower is better)</text>"##,
        left + plot_w,
        left + plot_w / 2.0,
        axis_y + 36.0
    );

    for (i, v) in b.variants.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let cy = top + row_h * i as f64 + row_h / 2.0;
        let label = shorten(&v.name, 24);
        let _ = write!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#222"><title>{}</title>{}</text>"##,
            left - 10.0,
            cy + 4.0,
            escape_html(&v.name),
            escape_html(&label)
        );
        let Some(s) = &v.wall else { continue };
        // Interquartile box and median.
        let _ = write!(
            svg,
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{color}" fill-opacity="0.12" stroke="{color}" stroke-width="1"/><line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="2.5"/>"##,
            x(s.q1),
            cy - 13.0,
            (x(s.q3) - x(s.q1)).max(1.0),
            26.0,
            x(s.median),
            cy - 15.0,
            x(s.median),
            cy + 15.0
        );
        for (j, &t) in v.wall_s.iter().enumerate() {
            let outlier = v.outliers.contains(&j);
            let _ = write!(
                svg,
                r##"<circle cx="{:.1}" cy="{:.1}" r="3.2" fill="{}" stroke="{color}" fill-opacity="0.75"><title>run {}: {}</title></circle>"##,
                x(t),
                cy + jitter(j + 31 * i) * 9.0,
                if outlier { "#ffffff" } else { color },
                j + 1,
                escape_html(&fmt_time(t))
            );
        }
        // Mean as a diamond.
        let (mx, d) = (x(s.mean), 5.5);
        let _ = write!(
            svg,
            r##"<path d="M{:.1},{:.1} L{:.1},{:.1} L{:.1},{:.1} L{:.1},{:.1} Z" fill="#000" fill-opacity="0.8"><title>mean {}</title></path>"##,
            mx,
            cy - d,
            mx + d,
            cy,
            mx,
            cy + d,
            mx - d,
            cy,
            escape_html(&fmt_time(s.mean))
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ticks() {
        let t = ticks(0.0, 1.0, 5);
        assert_eq!(t.len(), 6);
        assert!((t[3] - 0.6).abs() < 1e-12 && (t[5] - 1.0).abs() < 1e-12);
        let t = ticks(0.093, 0.207, 6);
        assert!(
            t.len() >= 4 && t[0] >= 0.093 && *t.last().unwrap() <= 0.207,
            "{t:?}"
        );
    }
}
