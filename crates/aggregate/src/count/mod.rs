//! Counting recordings into a raw profile: which samples are the binary's, and how
//! often each range ran and each branch was taken.
//!
//! Two passes over the input. The first, sequential, follows the mapping
//! records (MMAP, FORK, COMM exec) and counts samples per chunk; it decodes
//! no branch stacks and is cheap. The second, in parallel over the same
//! chunks, translates every sample's addresses into the binary and counts
//! ranges and branches into per-thread raw profiles that are then merged
//! (counts add, so the result does not depend on the split).
//!
//! Layers, bottom first (the crate's `layering` test checks them): `stats` (what is
//! asked and reported); `mappings` (pass 1), `sample` (one sample counted);
//! `combine` (the parts added up); `perf_data`, `perf_script` (the two readers).

mod combine;
mod mappings;
mod perf_data;
mod perf_script;
mod sample;
mod stats;

pub use perf_data::{count_perf_data, for_each_sample, for_each_sample_with};
pub use perf_script::count_perf_script;
pub use stats::{CountOptions, CountStats, SampleMode};
