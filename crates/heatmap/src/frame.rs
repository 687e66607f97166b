//! The heat map PNG as a picture of its own: the plot framed by axes, address and time
//! ticks and their labels, as the SVG has them (whose picture embeds the bare plot).
//! Text is drawn with an 8x8 bitmap font: the labels are hex digits, seconds and a few
//! words, and a bitmap needs no font file on the machine.

use crate::axes::{address_ticks, format_secs, time_ticks};
use crate::grid::{Geometry, Grid};

/// Margins around the plot: room for `+0x` labels on the left, the axis title above,
/// time labels and their title below.
const LEFT: u32 = 84;
const TOP: u32 = 22;
const RIGHT: u32 = 12;
const BOTTOM: u32 = 34;
const INK: image::Rgb<u8> = image::Rgb([51, 51, 51]);
const GLYPH: u32 = 8;

/// Where the plot lies in the framed picture: `(left, top)`, its top-left pixel.
pub fn plot_origin() -> (u32, u32) {
    (LEFT, TOP)
}

/// The framed picture, from the bare plot `plot` (as `render_png` draws it).
pub fn frame_png(g: &Grid, geo: &Geometry, plot: &image::RgbImage) -> image::RgbImage {
    let (w, h) = (geo.width, geo.height);
    let mut img =
        image::RgbImage::from_pixel(LEFT + w + RIGHT, TOP + h + BOTTOM, image::Rgb([255; 3]));
    image::imageops::replace(&mut img, plot, i64::from(LEFT), i64::from(TOP));
    // The frame, one pixel outside the plot.
    for x in LEFT - 1..=LEFT + w {
        img.put_pixel(x, TOP - 1, INK);
        img.put_pixel(x, TOP + h, INK);
    }
    for y in TOP - 1..=TOP + h {
        img.put_pixel(LEFT - 1, y, INK);
        img.put_pixel(LEFT + w, y, INK);
    }
    let span = (g.a1 - g.a0).max(1) as f64;
    for t in address_ticks(g) {
        let y = TOP + h - ((t as f64 / span) * f64::from(h)).round().min(f64::from(h)) as u32;
        for x in LEFT - 6..LEFT - 1 {
            img.put_pixel(x, y.min(TOP + h), INK);
        }
        let label = format!("+0x{t:x}");
        let right = LEFT - 8;
        text(
            &mut img,
            &label,
            right.saturating_sub(width(&label)),
            y.saturating_sub(GLYPH / 2),
        );
    }
    let (secs, ticks) = time_ticks(g);
    for t in ticks {
        let x = LEFT + ((t / secs) * f64::from(w)).round().min(f64::from(w)) as u32;
        for y in TOP + h + 1..TOP + h + 6 {
            img.put_pixel(x.min(LEFT + w), y, INK);
        }
        let label = format_secs(t);
        text(
            &mut img,
            &label,
            x.saturating_sub(width(&label) / 2),
            TOP + h + 8,
        );
    }
    let title = "time (s)";
    text(
        &mut img,
        title,
        LEFT + (w.saturating_sub(width(title))) / 2,
        TOP + h + 22,
    );
    let axis = format!("address in text (offset from 0x{:x})", g.a0);
    text(&mut img, &axis, 4, (TOP - GLYPH) / 2);
    img
}

fn width(s: &str) -> u32 {
    s.chars().count() as u32 * GLYPH
}

/// `s` in ink with its top-left corner at `(x, y)`; what falls outside is left out.
fn text(img: &mut image::RgbImage, s: &str, x: u32, y: u32) {
    use font8x8::UnicodeFonts;
    for (i, ch) in s.chars().enumerate() {
        let Some(rows) = font8x8::BASIC_FONTS.get(ch) else {
            continue;
        };
        for (dy, row) in rows.iter().enumerate() {
            for dx in 0..8 {
                // The font's bit 0 is the glyph's leftmost pixel.
                if row & (1 << dx) != 0 {
                    let (px, py) = (x + i as u32 * GLYPH + dx, y + dy as u32);
                    if px < img.width() && py < img.height() {
                        img.put_pixel(px, py, INK);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::geometry;
    use crate::points::Point;

    #[test]
    fn the_plot_sits_inside_axes_with_ticks_and_labels() {
        let points: Vec<Point> = (0..400u64)
            .map(|i| Point {
                time_ns: i * 1_000_000,
                addr: 0x1000 + (i * 37) % 0x4000,
            })
            .collect();
        let g = Grid::build(&points, 0x1000, 0x5000, 40, 32);
        let geo = geometry(&g);
        let plot = image::RgbImage::from_pixel(geo.width, geo.height, image::Rgb([200, 0, 0]));
        let img = frame_png(&g, &geo, &plot);
        let (left, top) = plot_origin();
        assert_eq!(img.width(), left + geo.width + RIGHT);
        assert_eq!(img.height(), top + geo.height + BOTTOM);
        // The plot, whole, at its origin.
        assert_eq!(*img.get_pixel(left, top), image::Rgb([200, 0, 0]));
        assert_eq!(
            *img.get_pixel(left + geo.width - 1, top + geo.height - 1),
            image::Rgb([200, 0, 0])
        );
        // The axes: a dark line along the left and the bottom of the plot.
        for y in top..top + geo.height {
            assert_eq!(*img.get_pixel(left - 1, y), INK, "left axis at row {y}");
        }
        for x in left..left + geo.width {
            assert_eq!(
                *img.get_pixel(x, top + geo.height),
                INK,
                "bottom axis at {x}"
            );
        }
        // Ink in the label margins: address labels on the left, time labels below.
        let inked = |xs: std::ops::Range<u32>, ys: std::ops::Range<u32>| {
            xs.flat_map(|x| ys.clone().map(move |y| (x, y)))
                .filter(|&(x, y)| *img.get_pixel(x, y) == INK)
                .count()
        };
        assert!(inked(0..left - 8, top..top + geo.height) > 50);
        assert!(
            inked(
                left..left + geo.width,
                top + geo.height + 8..top + geo.height + 16
            ) > 20
        );
    }
}
