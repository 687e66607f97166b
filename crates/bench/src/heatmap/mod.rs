//! Time x address heat maps of samples in a binary's text, as in the seeds'
//! figures: x = time, y = address (low addresses at the bottom), colour =
//! samples on a log scale. And the "hot text span": how many bytes of text
//! hold 90 % of the samples, a single number to compare layouts of two builds.
//!
//! This module is pure (points in, pixels out); [`input`] reads perf.data
//! and the ELF file to produce the points.

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
