//! kfdo-proftools: what people do with AutoFDO sample profiles once they have
//! them — keep, merge and compare them.
//!
//! - [`merge`]: `llvm-profdata merge --sample` with weights (the same profile,
//!   count for count).
//! - [`overlap`]: `llvm-profdata overlap --sample`'s similarity figures.
//! - [`diff`]: which functions' share of the samples moved most between two
//!   profiles, and which were added or removed.
//! - [`staleness`]: how much of an old profile still matches a new build.
//!
//! Every profile is read through `kfdo_afdo::read_profile`, so any format that
//! reader knows (LLVM text, extbinary, and whatever it learns later) works here.
//!
//! # Layers
//!
//! Each module uses only the layers below it; modules in one layer are
//! independent of each other (the `layering` test checks every `crate::` /
//! `super::` path against this list):
//!
//! 1. `error` ([`ToolError`]), `walk` (per-function sums).
//! 2. `read` (any profile kfdo reads), `overlap`, `staleness`.
//! 3. `diff` (built on overlap), `merge`.
//! 4. `render`: the reports as text.

pub mod diff;
pub mod error;
pub mod merge;
pub mod overlap;
mod read;
pub mod render;
pub mod staleness;
mod walk;

pub use diff::{diff_profiles, DiffOptions, DiffReport, FunctionChange};
pub use error::ToolError;
pub use merge::{merge_files, merge_into, parse_weighted, WeightedInput};
pub use overlap::{overlap_profiles, OverlapReport};
pub use read::read;
pub use staleness::{check_staleness, StalenessReport};

/// The profile model and formats these tools work on.
pub use kfdo_afdo;

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
