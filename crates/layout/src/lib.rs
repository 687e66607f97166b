//! kfdo-layout: profiles for the tools that lay code out after compilation, built from
//! the branch samples kfdo already reads.
//!
//! * [`bolt`]: BOLT's fdata (`llvm-bolt -data=`), the records perf2bolt writes: taken
//!   branches and the fall-throughs between basic blocks, per function, by offset.
//!
//! # Layers
//!
//! Each module uses only the layers below it; modules in one layer are
//! independent of each other (the `layering` test checks every `crate::` /
//! `super::` path against this list):
//!
//! 1. `bolt` and `propeller`, independent of each other.
//!
//! Inside the folders, bottom first:
//!
//! - `bolt/`: `cfg`, `fdata` and `functions`, then `aggregate`.
//! - `propeller/`: `model` and `verify`, then `build`, `layout` and `writer`.
//! - `propeller/layout/`: `graph`, `merge_order` and `params`, then `score`, then
//!   `chain` and `forced`, then `assembly`, then `merge`, then `c3` and `tests`.
//!
//! Not checked: `propeller/layout/tests.rs` (the tests drive the folder's own entry
//! point, `code_layout`, in `mod.rs`).

pub mod bolt;
pub mod propeller;

pub use bolt::{bolt_profile, BoltError, BoltProfile, BoltStats};

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
