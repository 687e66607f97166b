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
//! 1. `llvm` ([`Llvm`]: a release and its tools' names).
//! 2. `differences` (what changed between releases), `installed` (which releases this
//!    machine has).

mod differences;
mod installed;
mod llvm;

pub use differences::Differences;
pub use installed::{installed, Installed, TOOLS};
pub use llvm::{Llvm, ParseLlvmError};
