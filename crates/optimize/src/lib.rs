//! kfdo-optimize: from a program's or a kernel's source to a faster build and the proof.
//!
//! Two sibling pipelines over one step core:
//! - `program`: a program recipe's variants (clang or GCC; AutoFDO, instrumented PGO,
//!   ThinLTO, Propeller, BOLT), built, trained, profiled, benchmarked and reported;
//! - `kernel`: a kernel recipe's variants, built with kbuild, booted under QEMU,
//!   recorded, judged and packaged.
//!
//! Every step is cached (`steps::cache`): keyed by a SHA-256 of what it reads and
//! remembering the content hashes of what it wrote, so a rerun does only what
//! changed; every step logs to `OUT/logs/STEP.log` (`steps::exec`), and a failure
//! names the step and its log. kfdo's own steps (record, profile, compare,
//! heatmap, report) are calls into the library crates, with what they say
//! written into the step's log. `plan` turns a recipe path and the command line's
//! overrides into a checked plan for one of the two pipelines, and runs it.
//!
//! # Layers
//!
//! A module uses (imports, or calls the methods of) only the layers below it; modules
//! in one layer are independent of each other, so the two pipelines never use each
//! other (the `layering` test checks every `crate::` / `super::` path against this
//! list):
//!
//! 1. `vocabulary`: what both pipelines build, with what, and the one table of which
//!    build makes which variant.
//! 2. `steps`: the step core (cache, logs, progress, the run's plan, the engine).
//! 3. `program` and `kernel`: the two pipelines.
//! 4. `plan` (a recipe and the command line to a checked run) and `counters_vs_time`
//!    (an output directory's counters held against its time).
//!
//! Inside the folders, bottom first, each module a layer of its own (each folder's
//! `mod.rs` only declares and re-exports its modules):
//!
//! - `vocabulary/`: `variant`, then `compiler`, then `support`.
//! - `steps/`: `interrupt`, then `cache`, then `exec`, then `progress`, then `scripts`,
//!   then `recipe_file`, then `output_dir`, then `planned`, then `gcc_note`, then
//!   `agree`, then `engine`, then `profile`, then `llvm_profgen`.
//! - `program/`: `flags`, then `compiler`, then `target`, then `recipe`, then
//!   `step_list`, then `ctx`, then `compile`, then `train`, then `train_gcc`, then
//!   `postlink`, then `judge`, then `summary`, then `llvm_compare`, then `pipeline`.
//! - `kernel/`: `profile_check`, then `gcda`, then `summary`, then `recipe`, then
//!   `variant`, then `ctx`, then `source`, then `config`, then `gcc_warnings`, then
//!   `build`, then `initramfs`, then `boot`, then `host_process`, then `train`, then
//!   `propeller`, then `bolt`, then `bolt_build`, then `gcov_pgo`, then `boot_trials`,
//!   then `judge`, then `report`, then `package`, then `kvm`, then `uml`, then
//!   `step_list`, then `counters_vs_time`, then `pipeline`.
//! - `kernel/uml/` (the User-Mode Linux twins): `twin`, then `config`, then `build`,
//!   then `run`, then `judge`, then `coverage`, then `summary`.

pub mod counters_vs_time;
pub mod kernel;
pub mod plan;

pub mod program;
pub mod steps;
pub mod vocabulary;

pub use plan::{Finished, Overrides, Plan};
pub use program::{Options, Outcome, Recipe};
pub use vocabulary::{Compiler, Variant};

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
