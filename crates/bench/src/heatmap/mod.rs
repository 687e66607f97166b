//! Time x address heat maps of samples in a binary's text, as in the seeds'
//! figures: x = time, y = address (low addresses at the bottom), colour =
//! samples on a log scale. And the "hot text span": how many bytes of text
//! hold 90 % of the samples, a single number to compare layouts of two builds.
//!
//! This module is pure (points in, pixels out); [`input`] reads perf.data
//! and the ELF file to produce the points.

pub mod input;
pub mod make;

pub use make::{make, HeatmapError, HeatmapOutcome, HeatmapRequest};

use std::fmt::Write;

use crate::report::{base64, escape_html, fmt_count};

/// One sample: when, and where in the binary (link-time virtual address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    pub time_ns: u64,
    pub addr: u64,
}

/// The bytes of text that hold `fraction` of the samples.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HotSpan {
    pub fraction: f64,
    /// Granule: samples are counted per aligned block of this many bytes
    /// (64: an x86 cache line).
    pub line_size: u64,
    /// Number of hottest blocks needed to reach `fraction` of the samples.
    pub lines: usize,
    /// `lines * line_size`: the hot text span.
    pub bytes: u64,
    /// Lowest and one-past-highest address of those blocks: how far apart
    /// the hot code is spread.
    pub extent_lo: u64,
    pub extent_hi: u64,
    pub total_samples: u64,
}

/// The hot text span of weighted addresses: count samples per aligned
/// `line_size` block, take blocks from the hottest down (ties: lower address
/// first) until they hold at least `fraction` of all samples.
pub fn hot_text_span(
    addrs: impl IntoIterator<Item = (u64, u64)>,
    line_size: u64,
    fraction: f64,
) -> HotSpan {
    let line_size = line_size.max(1);
    let mut per_line: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    let mut total = 0u64;
    for (a, w) in addrs {
        *per_line.entry(a / line_size).or_insert(0) += w;
        total += w;
    }
    let mut lines: Vec<(u64, u64)> = per_line.into_iter().collect();
    lines.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let need = (fraction.clamp(0.0, 1.0) * total as f64).ceil() as u64;
    let mut acc = 0u64;
    let mut taken = 0usize;
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for &(line, c) in &lines {
        if acc >= need {
            break;
        }
        acc += c;
        taken += 1;
        lo = lo.min(line * line_size);
        hi = hi.max((line + 1) * line_size);
    }
    if taken == 0 {
        lo = 0;
    }
    HotSpan {
        fraction,
        line_size,
        lines: taken,
        bytes: taken as u64 * line_size,
        extent_lo: lo,
        extent_hi: hi,
        total_samples: total,
    }
}

/// Samples counted in time x address buckets.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub time_buckets: usize,
    pub addr_buckets: usize,
    /// Time range [t0, t1] in ns.
    pub t0: u64,
    pub t1: u64,
    /// Address range [a0, a1).
    pub a0: u64,
    pub a1: u64,
    /// `counts[y * time_buckets + x]`, y = address bucket (0: lowest).
    pub counts: Vec<u64>,
}

impl Grid {
    pub fn build(
        points: &[Point],
        a0: u64,
        a1: u64,
        time_buckets: usize,
        addr_buckets: usize,
    ) -> Grid {
        let (tb, ab) = (time_buckets.max(1), addr_buckets.max(1));
        let inside = points.iter().filter(|p| p.addr >= a0 && p.addr < a1);
        let (t0, t1) = inside.clone().fold((u64::MAX, 0u64), |(lo, hi), p| {
            (lo.min(p.time_ns), hi.max(p.time_ns))
        });
        let (t0, t1) = if t0 > t1 { (0, 0) } else { (t0, t1) };
        let mut counts = vec![0u64; tb * ab];
        let tspan = (t1 - t0).max(1) as u128;
        let aspan = (a1 - a0).max(1) as u128;
        for p in inside {
            let x = (((p.time_ns - t0) as u128 * tb as u128) / (tspan + 1)) as usize;
            let y = (((p.addr - a0) as u128 * ab as u128) / aspan) as usize;
            counts[y.min(ab - 1) * tb + x.min(tb - 1)] += 1;
        }
        Grid {
            time_buckets: tb,
            addr_buckets: ab,
            t0,
            t1,
            a0,
            a1,
            counts,
        }
    }

    pub fn max(&self) -> u64 {
        self.counts.iter().copied().max().unwrap_or(0)
    }

    /// Address range [lo, hi) of address bucket y.
    pub fn bucket_range(&self, y: usize) -> (u64, u64) {
        let span = (self.a1 - self.a0) as u128;
        let lo = self.a0 + (span * y as u128 / self.addr_buckets as u128) as u64;
        let hi = self.a0 + (span * (y as u128 + 1) / self.addr_buckets as u128) as u64;
        (lo, hi)
    }
}

/// Colour of a cell: white for no samples, then light yellow -> orange ->
/// red -> dark red -> black as log(count) / log(max) goes from 0 to 1.
pub fn colour(count: u64, max: u64) -> [u8; 3] {
    if count == 0 || max == 0 {
        return [255, 255, 255];
    }
    let v = if max <= 1 {
        1.0
    } else {
        ((count as f64).ln() + 1.0) / ((max as f64).ln() + 1.0)
    };
    ramp(v)
}

/// The colour ramp, v in [0, 1].
pub fn ramp(v: f64) -> [u8; 3] {
    const STOPS: [(f64, [f64; 3]); 5] = [
        (0.0, [255.0, 237.0, 160.0]),
        (0.3, [254.0, 178.0, 76.0]),
        (0.55, [240.0, 59.0, 32.0]),
        (0.8, [140.0, 10.0, 20.0]),
        (1.0, [20.0, 0.0, 0.0]),
    ];
    let v = v.clamp(0.0, 1.0);
    for w in STOPS.windows(2) {
        let ((p0, c0), (p1, c1)) = (w[0], w[1]);
        if v <= p1 {
            let f = (v - p0) / (p1 - p0);
            return [0, 1, 2].map(|i| (c0[i] + f * (c1[i] - c0[i])).round() as u8);
        }
    }
    [20, 0, 0]
}

/// Pixel geometry of a rendered heat map (kept in the summary, so that a
/// pixel can be mapped back to an address).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Geometry {
    pub width: u32,
    pub height: u32,
    pub cell_w: u32,
    pub cell_h: u32,
}

/// Cell sizes that make the picture roughly 900 x 540 pixels.
pub fn geometry(g: &Grid) -> Geometry {
    let cell_w = (900 / g.time_buckets as u32).max(1);
    let cell_h = (540 / g.addr_buckets as u32).max(1);
    Geometry {
        width: cell_w * g.time_buckets as u32,
        height: cell_h * g.addr_buckets as u32,
        cell_w,
        cell_h,
    }
}

/// The heat map as PNG bytes. Row 0 of the image is the highest address bucket.
pub fn render_png(g: &Grid, geo: &Geometry) -> Result<Vec<u8>, image::ImageError> {
    let max = g.max();
    let mut img = image::RgbImage::new(geo.width, geo.height);
    for y in 0..g.addr_buckets {
        for x in 0..g.time_buckets {
            let c = image::Rgb(colour(g.counts[y * g.time_buckets + x], max));
            let py0 = (g.addr_buckets - 1 - y) as u32 * geo.cell_h;
            let px0 = x as u32 * geo.cell_w;
            for py in py0..py0 + geo.cell_h {
                for px in px0..px0 + geo.cell_w {
                    img.put_pixel(px, py, c);
                }
            }
        }
    }
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png)?;
    Ok(out.into_inner())
}

/// A function and its samples, for labels.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HotFunction {
    pub name: String,
    pub addr: u64,
    pub size: u64,
    pub samples: u64,
}

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
    // Power-of-two steps read well in hex.
    let step = ((g.a1 - g.a0).max(1) / 6).max(1).next_power_of_two() as f64;
    let mut addr_ticks = Vec::new();
    let mut t = 0.0;
    while t <= span {
        addr_ticks.push(t);
        t += step;
    }
    for t in addr_ticks {
        let y = top + h - t / span * h;
        let _ = write!(
            s,
            r##"<line x1="{:.1}" y1="{y:.1}" x2="{left}" y2="{y:.1}" stroke="#333"/><text x="{:.1}" y="{:.1}" text-anchor="end">+0x{:x}</text>"##,
            left - 5.0,
            left - 7.0,
            y + 4.0,
            t as u64
        );
    }
    let _ = write!(
        s,
        r##"<text transform="translate(14,{:.1}) rotate(-90)" text-anchor="middle">address in text (from 0x{:x})</text>"##,
        top + h / 2.0,
        g.a0
    );
    // Time ticks, in seconds from the first sample.
    let secs = (g.t1 - g.t0) as f64 / 1e9;
    if secs > 0.0 {
        for t in crate::report::plot::ticks(0.0, secs, 8) {
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

fn format_secs(t: f64) -> String {
    if t == 0.0 {
        "0".into()
    } else if t >= 10.0 {
        format!("{t:.0}")
    } else if t >= 1.0 {
        format!("{t:.1}")
    } else {
        format!("{t:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn hot_span_synthetic() {
        // 900 samples in one 64-byte line, 50 + 50 spread over two far lines:
        // 90 % is reached by the hot line alone.
        let mut v = [(0x1000u64, 900u64), (0x8000, 50), (0x9000, 50)];
        let s = hot_text_span(v.iter().copied(), 64, 0.9);
        assert_eq!((s.lines, s.bytes, s.total_samples), (1, 64, 1000));
        assert_eq!((s.extent_lo, s.extent_hi), (0x1000, 0x1040));
        // 89.9 % in the hot line: one more line is needed, the lower one on a tie.
        v[0].1 = 899;
        let s = hot_text_span(v.iter().copied(), 64, 0.9);
        assert_eq!((s.lines, s.bytes), (2, 128));
        assert_eq!((s.extent_lo, s.extent_hi), (0x1000, 0x8040));
        // Uniform over 100 lines: 90 lines.
        let u: Vec<(u64, u64)> = (0..100u64).map(|i| (0x4000 + i * 64 + 3, 10)).collect();
        let s = hot_text_span(u.iter().copied(), 64, 0.9);
        assert_eq!((s.lines, s.bytes), (90, 5760));
        // Two addresses in one line count together.
        let s = hot_text_span([(0x40, 5), (0x7f, 5), (0x80, 1)], 64, 0.9);
        assert_eq!((s.lines, s.bytes), (1, 64));
        // A tighter layout of the same samples has a smaller span.
        let tight: Vec<(u64, u64)> = (0..100u64).map(|i| (0x4000 + i * 16, 10)).collect();
        assert!(hot_text_span(tight.iter().copied(), 64, 0.9).bytes < 5760);
        // Empty input.
        let s = hot_text_span(std::iter::empty(), 64, 0.9);
        assert_eq!((s.lines, s.bytes, s.total_samples), (0, 0, 0));
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

    #[test]
    fn colour_ramp_is_monotone_in_darkness() {
        let lum = |c: [u8; 3]| c[0] as u32 * 3 + c[1] as u32 * 6 + c[2] as u32;
        let mut last = u32::MAX;
        for n in [1u64, 2, 5, 20, 100, 1000] {
            let l = lum(colour(n, 1000));
            assert!(l < last, "{n}");
            last = l;
        }
        assert_eq!(colour(0, 10), [255, 255, 255]);
    }
}
