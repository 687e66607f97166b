//! kfdo-toolchain: the LLVM release a kfdo step runs, in one place.
//!
//! Every LLVM tool kfdo runs (clang, lld, llvm-profgen, llvm-profdata, llvm-objcopy,
//! llvm-readobj, llvm-bolt, perf2bolt) is named through an [`Llvm`], so a run that
//! chose release 22 runs 22's tools from its first step to its last, and nothing else.
//! Debian installs each release side by side under `/usr/lib/llvm-N/bin`, with
//! `TOOL-N` links on PATH; those are the names used here.
//!
//! What differs between the releases kfdo knows (flags, defaults, formats) is
//! [`Differences`], asked of an `Llvm` ([`Llvm::differences`]) and nowhere else.
//!
//! # Layers
//!
//! Each module uses only the layers below it (the `layering` test checks them):
//!
//! 1. `llvm` ([`Llvm`]: a release and its tools' names).
//! 2. `differences` (what changed between releases), `installed` (which releases this
//!    machine has).

mod differences;
mod installed;
mod llvm;

pub use differences::Differences;
pub use installed::{installed, Installed, TOOLS};
pub use llvm::{Llvm, ParseLlvmError};

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
