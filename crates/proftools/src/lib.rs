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

pub mod diff;
pub mod error;
pub mod merge;
pub mod overlap;
pub mod render;
pub mod staleness;
mod walk;

pub use diff::{diff_profiles, DiffOptions, DiffReport, FunctionChange};
pub use error::ToolError;
pub use merge::{merge_files, merge_into, parse_weighted, WeightedInput};
pub use overlap::{overlap_profiles, OverlapReport};
pub use staleness::{check_staleness, StalenessReport};

use std::path::Path;

/// The profile model and formats these tools work on.
pub use kfdo_afdo;

/// Read a profile, any format `kfdo_afdo` reads; errors name the file and the place.
pub fn read(path: &Path) -> Result<kfdo_afdo::Profile, ToolError> {
    kfdo_afdo::read_profile(path).map_err(ToolError::Read)
}
