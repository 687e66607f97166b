//! The raw profile: how often each fall-through range ran and each branch was
//! taken, keyed by address in the profiled binary's own (link-time) address
//! space. It knows nothing of compilers' profile formats; `kfdo-afdo` turns it
//! into a sample profile with the help of DWARF.
//!
//! - [`raw`]: the counts, exact merging, and llvm-profgen's unsymbolized text form.
//! - [`lbr`]: turning one LBR stack into range and branch counts, with the rules
//!   llvm-profgen applies (which ranges are impossible, what is external).
//! - [`space`]: per-process address spaces from MMAP/FORK/COMM records, mapping
//!   runtime addresses into the binary.
//! - [`target`] and [`count`]: the one place that decides which samples are
//!   the binary's (build-id, name, FORK, exec, the kernel's anchor symbols);
//!   counting perf.data or perf script text into a raw profile in parallel, and
//!   [`count::for_each_sample`] for readers that want each placed sample
//!   (heat maps).
//!
//! # Layers
//!
//! Each module uses only the layers below it; modules in one layer are
//! independent of each other (the `layering` test checks every `crate::` /
//! `super::` path against this list):
//!
//! 1. `code` (the binary's instruction starts), `error`, `space` (address
//!    spaces from mmap records), `target` (which mappings are the binary):
//!    independent of each other.
//! 2. `raw`: the counts and their on-disk form.
//! 3. `lbr`: one branch stack into range and branch counts.
//! 4. `stacks`: identical stacks counted once.
//! 5. `count`: recordings in, a raw profile out.
//!
//! Inside the folders, bottom first:
//!
//! - `count/`: `stats`, then `mappings` and `sample`, then `combine`, then `perf_data`
//!   and `perf_script`.

pub mod code;
pub mod count;
pub mod error;
pub mod lbr;
pub mod raw;
pub mod space;
mod stacks;
pub mod target;

pub use code::CodeMap;
pub use error::AggregateError;
pub use raw::{RawProfile, EXTERNAL_ADDR};

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
