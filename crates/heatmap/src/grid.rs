//! Samples counted in time x address cells, their colours and the PNG.

use crate::points::Point;

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
    /// Where the plot's top-left pixel lies in the PNG file, which frames it with axes
    /// (0, 0: the bare plot, as pictures made before the frame were).
    #[serde(default)]
    pub png_left: u32,
    #[serde(default)]
    pub png_top: u32,
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
        png_left: 0,
        png_top: 0,
    }
}

/// The bare plot: a cell of colour per time x address bucket. Row 0 of the image is
/// the highest address bucket.
pub fn render_plot(g: &Grid, geo: &Geometry) -> image::RgbImage {
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
    img
}

/// The bare plot as PNG bytes (what the SVG embeds).
pub fn render_png(g: &Grid, geo: &Geometry) -> Result<Vec<u8>, image::ImageError> {
    encode_png(&render_plot(g, geo))
}

/// An image as PNG bytes.
pub fn encode_png(img: &image::RgbImage) -> Result<Vec<u8>, image::ImageError> {
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png)?;
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

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
