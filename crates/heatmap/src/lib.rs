//! kfdo-heatmap: time x address heat maps of samples in a binary's text, as in the
//! seeds' figures: x = time, y = address (low addresses at the bottom), colour =
//! samples on a log scale. And the "hot text span": how many bytes of text hold 90 %
//! of the samples, a single number to compare layouts of two builds.
//!
//! One command lives here as a typed call: [`make`] (`kfdo heatmap`). It is a crate of
//! its own because it reads recordings: it takes each sample's place in the binary from
//! kfdo-aggregate (the same matching as `kfdo profile`) and its symbols from kfdo-elf,
//! while kfdo-bench, whose results store and report helpers it uses, reads none.
//!
//! # Layers
//!
//! Each module uses only the layers below it (the `layering` test checks every
//! `crate::` / `super::` path against this list). Everything but [`input`] is pure
//! (points in, pixels out); [`input`] reads perf.data and the ELF file to produce the
//! points.
//!
//! 1. `points` (samples and functions) and `span` (the hot text span).
//! 2. `grid` (cells, colours, the plot) and `input` (perf.data and the ELF file to
//!    points).
//! 3. `axes` (where the ticks go).
//! 4. `svg` (the picture with axes and labels) and `frame` (the PNG with axes).
//! 5. `make` (one heat map of a recording).

mod axes;
mod frame;
mod grid;
pub mod input;
pub mod make;
mod points;
mod span;
mod svg;

pub use frame::{frame_png, plot_origin};
pub use grid::{colour, encode_png, geometry, ramp, render_plot, render_png, Geometry, Grid};
pub use make::{make, HeatmapError, HeatmapOutcome, HeatmapRequest};
pub use points::{HotFunction, Point};
pub use span::{hot_text_span, HotSpan};
pub use svg::render_svg;

/// The image crate this one renders with, for callers (and tests) that decode the heat
/// maps without a dependency of their own.
pub use image;

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
