//! Where the heat map's ticks go, the same in the SVG and the PNG: address offsets from
//! the start of the range in power-of-two steps (they read well in hex), and seconds
//! from the first sample.

use crate::grid::Grid;

/// Address offsets from `g.a0` to tick, from 0 up to the range's end.
pub fn address_ticks(g: &Grid) -> Vec<u64> {
    let span = (g.a1 - g.a0).max(1);
    let step = (span / 6).max(1).next_power_of_two();
    (0..=span).step_by(step as usize).collect()
}

/// Seconds from the first sample to tick, with the run's length in seconds; none for
/// a run of no length.
pub fn time_ticks(g: &Grid) -> (f64, Vec<f64>) {
    let secs = (g.t1 - g.t0) as f64 / 1e9;
    if secs > 0.0 {
        (secs, kfdo_bench::report::plot::ticks(0.0, secs, 8))
    } else {
        (secs, Vec::new())
    }
}

/// A tick's seconds, with the digits its size needs.
pub fn format_secs(t: f64) -> String {
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
