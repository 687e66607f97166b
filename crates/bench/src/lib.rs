//! kfdo-bench: judging builds. An A/B runner that interleaves commands,
//! statistics that say how sure a verdict is, counters (hardware `perf stat`,
//! valgrind's cachegrind), a SQLite results store, HTML / Markdown reports and
//! time x address heat maps.
//!
//! Layers look down only: `stats` knows nothing of processes, `runner` nothing
//! of SQLite, `report` reads only what `store` gives it.

pub mod analysis;
pub mod counters;
pub mod env;
pub mod heatmap;
pub mod report;
pub mod runner;
pub mod stats;
pub mod store;

/// The image crate this one renders with, for callers (and tests) that
/// decode the heat maps or screenshots without a dependency of their own.
pub use image;
