//! The SVG picture around the PNG: axes, ticks, function labels and a colour bar.

use std::fmt::Write;

use crate::axes::{address_ticks, format_secs, time_ticks};
use crate::grid::{ramp, Geometry, Grid};
use crate::points::HotFunction;
use kfdo_bench::report::{base64, escape_html, fmt_count};

/// A symbol as a person reads it on a label: without the suffixes the compiler adds to
/// local and split functions (`.__uniq.N` from -funique-internal-linkage-names, `.llvm.N`,
/// `.part.N`, `.cold`), and demangled without parameters (`_ZL7balanceP8BtCursor` is
/// `balance`). The full symbol stays in the label's tooltip.
fn display_name(sym: &str) -> String {
    let base = sym
        .split('.')
        .next()
        .filter(|b| !b.is_empty())
        .unwrap_or(sym);
    if base.starts_with("_Z") {
        let opts = cpp_demangle::DemangleOptions::new().no_params();
        if let Ok(Ok(name)) =
            cpp_demangle::Symbol::new(base).map(|s| s.demangle_with_options(&opts))
        {
            return name;
        }
    }
    base.to_string()
}

/// Label positions for wanted positions `ys` (sorted, top to bottom): each at least `gap`
/// below the one above it, then, where that ran past `bottom`, `gap` above the one below
/// it, so hot functions packed together at the end of the text do not print on top of
/// each other.
fn spread_labels(ys: &[f64], bottom: f64, gap: f64) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::with_capacity(ys.len());
    let mut last = f64::NEG_INFINITY;
    for &y in ys {
        last = y.max(last + gap);
        out.push(last);
    }
    let mut below = bottom + gap;
    for y in out.iter_mut().rev() {
        *y = y.min(below - gap);
        below = *y;
    }
    out
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        s.chars()
            .take(max - 1)
            .chain(std::iter::once('…'))
            .collect()
    }
}

/// The heat map with axes, address ticks (relative to the start of text),
/// time ticks, labels of the hottest functions and a colour bar, as SVG
/// that embeds the PNG. Every name is escaped.
pub fn render_svg(
    g: &Grid,
    geo: &Geometry,
    png: &[u8],
    title: &str,
    functions: &[HotFunction],
    total: u64,
) -> String {
    let (left, top, right, bottom) = (78.0, 30.0, 236.0, 46.0);
    let (w, h) = (geo.width as f64, geo.height as f64);
    let (tw, th) = (left + w + right, top + h + bottom);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {tw} {th}" width="{tw}" height="{th}" font-family="sans-serif" font-size="11" role="img" aria-label="heat map {}">"##,
        escape_html(title)
    );
    let _ = write!(
        s,
        r##"<rect width="{tw}" height="{th}" fill="#fff"/><text x="{left}" y="18" font-size="13" font-weight="bold">{}</text>"##,
        escape_html(&shorten(title, 90))
    );
    let _ = write!(
        s,
        r##"<image x="{left}" y="{top}" width="{w}" height="{h}" preserveAspectRatio="none" style="image-rendering:pixelated" href="data:image/png;base64,{}"/>"##,
        base64(png)
    );
    let _ = write!(
        s,
        r##"<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#333"/>"##
    );
    // Address ticks: offsets from the start of the range, in hex.
    let span = (g.a1 - g.a0).max(1) as f64;
    let addr_ticks = address_ticks(g);
    for t in addr_ticks {
        let y = top + h - t as f64 / span * h;
        let _ = write!(
            s,
            r##"<line x1="{:.1}" y1="{y:.1}" x2="{left}" y2="{y:.1}" stroke="#333"/><text x="{:.1}" y="{:.1}" text-anchor="end">+0x{:x}</text>"##,
            left - 5.0,
            left - 7.0,
            y + 4.0,
            t
        );
    }
    let _ = write!(
        s,
        r##"<text transform="translate(14,{:.1}) rotate(-90)" text-anchor="middle">address in text (from 0x{:x})</text>"##,
        top + h / 2.0,
        g.a0
    );
    // Time ticks, in seconds from the first sample.
    let (secs, time_ticks) = time_ticks(g);
    for t in time_ticks {
        let x = left + t / secs * w;
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#333"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            top + h,
            top + h + 5.0,
            top + h + 17.0,
            format_secs(t)
        );
    }
    let _ = write!(
        s,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle">time (s)</text>"##,
        left + w / 2.0,
        top + h + 36.0
    );
    // Labels of the hottest functions at their address, pushed apart.
    let mut labels: Vec<(f64, &HotFunction)> = functions
        .iter()
        .filter(|f| f.samples > 0 && f.addr + f.size > g.a0 && f.addr < g.a1)
        .take(10)
        .map(|f| {
            let mid = (f.addr.max(g.a0) + (f.addr + f.size).min(g.a1)) as f64 / 2.0;
            (top + h - (mid - g.a0 as f64) / span * h, f)
        })
        .collect();
    labels.sort_by(|a, b| a.0.total_cmp(&b.0));
    let wanted: Vec<f64> = labels.iter().map(|(y, _)| *y).collect();
    let ys = spread_labels(&wanted, top + h + 10.0, 13.0);
    let lx = left + w + 8.0;
    for ((y, f), ly) in labels.into_iter().zip(ys) {
        let pct = if total > 0 {
            100.0 * f.samples as f64 / total as f64
        } else {
            0.0
        };
        let _ = write!(
            s,
            r##"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{ly:.1}" stroke="#777"/><text x="{:.1}" y="{:.1}"><title>{} at 0x{:x}, {} bytes, {} samples</title>{} {:.1} %</text>"##,
            left + w,
            lx + 6.0,
            lx + 9.0,
            ly + 4.0,
            escape_html(&f.name),
            f.addr,
            f.size,
            f.samples,
            escape_html(&shorten(&display_name(&f.name), 26)),
            pct
        );
    }
    // Colour bar.
    let (bx, by, bh) = (left + w + 200.0, top, h.min(200.0));
    for i in 0..50 {
        let v = 1.0 - i as f64 / 49.0;
        let [r, gg, b] = ramp(v);
        let _ = write!(
            s,
            r##"<rect x="{bx}" y="{:.2}" width="12" height="{:.2}" fill="rgb({r},{gg},{b})"/>"##,
            by + bh * i as f64 / 50.0,
            bh / 50.0 + 0.5
        );
    }
    let _ = write!(
        s,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text><text x="{:.1}" y="{:.1}" text-anchor="end">1</text><text x="{:.1}" y="{:.1}" text-anchor="end">samples</text>"##,
        bx - 3.0,
        by + 9.0,
        fmt_count(g.max() as f64),
        bx - 3.0,
        by + bh,
        bx + 12.0,
        by + bh + 14.0
    );
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{geometry, render_png};
    use crate::points::Point;

    #[test]
    fn labels_read_as_function_names() {
        assert_eq!(
            display_name("_ZL7balanceP8BtCursor.__uniq.1234567890"),
            "balance"
        );
        assert_eq!(display_name("sqlite3VdbeExec"), "sqlite3VdbeExec");
        assert_eq!(display_name("compress.llvm.42"), "compress");
        assert_eq!(display_name("_ZN6shapes4areaEv"), "shapes::area");
        // Not a valid mangling: shown as it is, suffix dropped.
        assert_eq!(display_name("_Zjunk.cold"), "_Zjunk");
        assert_eq!(display_name(".hidden"), ".hidden");
    }

    #[test]
    fn labels_near_the_bottom_are_pushed_up_not_stacked() {
        // Four labels wanted within 3 px of the bottom (100): spaced 13 px apart, upwards.
        let ys = spread_labels(&[10.0, 98.0, 99.0, 100.0, 100.0], 100.0, 13.0);
        assert_eq!(ys, [10.0, 61.0, 74.0, 87.0, 100.0]);
        // Room enough: each label where it is wanted.
        assert_eq!(
            spread_labels(&[5.0, 40.0, 90.0], 100.0, 13.0),
            [5.0, 40.0, 90.0]
        );
        // Crowded at the top: pushed down.
        assert_eq!(
            spread_labels(&[0.0, 1.0, 2.0], 100.0, 13.0),
            [0.0, 13.0, 26.0]
        );
    }

    #[test]
    fn grid_buckets_and_png_orientation() {
        // Samples at the top of the range early, at the bottom late.
        let mut pts = Vec::new();
        for i in 0..100u64 {
            pts.push(Point {
                time_ns: i,
                addr: 0x1f00,
            });
            pts.push(Point {
                time_ns: 1000 + i,
                addr: 0x1000,
            });
        }
        pts.push(Point {
            time_ns: 5,
            addr: 0x5000,
        }); // outside: ignored
        let g = Grid::build(&pts, 0x1000, 0x2000, 10, 16);
        assert_eq!(g.counts.iter().sum::<u64>(), 200);
        assert_eq!(g.counts[15 * 10], 100); // highest bucket, first time bucket
        assert_eq!(g.counts[9], 100); // lowest bucket, last time bucket
        assert_eq!(g.bucket_range(15), (0x1f00, 0x2000));
        let geo = geometry(&g);
        let png = render_png(&g, &geo).unwrap();
        let img = image::load_from_memory(&png).unwrap().to_rgb8();
        assert_eq!((img.width(), img.height()), (geo.width, geo.height));
        // Top-left is hot, bottom-left is white, bottom-right is hot.
        assert_ne!(img.get_pixel(0, 0).0, [255, 255, 255]);
        assert_eq!(img.get_pixel(0, geo.height - 1).0, [255, 255, 255]);
        assert_ne!(
            img.get_pixel(geo.width - 1, geo.height - 1).0,
            [255, 255, 255]
        );
        let svg = render_svg(
            &g,
            &geo,
            &png,
            "a<b & \"c\"",
            &[HotFunction {
                name: "f<int>&".into(),
                addr: 0x1f00,
                size: 0x100,
                samples: 100,
            }],
            200,
        );
        assert!(svg.contains("a&lt;b &amp; &quot;c&quot;"));
        assert!(svg.contains("f&lt;int&gt;&amp;"));
        assert!(!svg.contains("f<int>"));
    }
}
