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
//! Layers, bottom first: a module uses (imports, or calls the methods of) only the
//! modules before it, and the two pipelines never use each other.
//! 0. `vocabulary`: `variant`, `compiler` (what both pipelines build, and with what)
//! 1. `steps`: `interrupt`, `cache`, `exec`, `progress`, `scripts`, `recipe_file`,
//!    `output_dir`, `gcc_note`, `agree`, `engine`, `profile`, `llvm_profgen`
//! 2. `program`: `flags`, `compiler`, `target`, `recipe`, `ctx`, `compile`, `train`,
//!    `train_gcc`, `postlink`, `judge`, `summary`, `llvm_compare`, `pipeline`;
//!    beside it `kernel`: `profile_check`, `gcda`, `summary`, `recipe`, `variant`, `ctx`,
//!    `source`, `config`, `gcc_warnings`, `build`, `initramfs`, `boot`, `host_process`, `train`,
//!    `propeller`, `bolt`, `bolt_build`, `gcov_pgo`, `judge`, `report`, `package`, `kvm`,
//!    `uml`, `model`, `pipeline`;
//!    in `kernel/uml` (the User-Mode Linux twins): `twin`, `config`, `build`, `run`,
//!    `judge`, `coverage`, `summary`
//! 3. `plan`, `counters_vs_time` (an output directory's counters held against its time)
//!
//! (Each folder's `mod.rs` only declares and re-exports its modules.)

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
    //! The layers of the crate doc, bottom first; `kfdo_testkit::layering` checks every
    //! `crate::` / `super::` path under `src/` against them. Inside each folder the
    //! modules are in the doc's order, each one a layer of its own.

    use kfdo_testkit::layering::{assert_crate_layers, FolderLayers};

    fn assert_table(table: FolderLayers) {
        assert_crate_layers(env!("CARGO_MANIFEST_DIR"), &[table]);
    }

    #[test]
    fn the_pipelines_are_siblings_over_the_step_core() {
        assert_table(FolderLayers::new(
            "",
            &[
                &["vocabulary"],
                &["steps"],
                &["program", "kernel"],
                &["plan", "counters_vs_time"],
            ],
        ));
    }

    #[test]
    fn vocabulary_modules_only_use_earlier_ones() {
        let order = ["variant", "compiler"];
        assert_table(FolderLayers::one_per_layer("vocabulary", &order));
    }

    #[test]
    fn step_modules_only_use_earlier_ones() {
        let order = [
            "interrupt",
            "cache",
            "exec",
            "progress",
            "scripts",
            "recipe_file",
            "output_dir",
            "gcc_note",
            "agree",
            "engine",
            "profile",
            "llvm_profgen",
        ];
        assert_table(FolderLayers::one_per_layer("steps", &order));
    }

    #[test]
    fn program_modules_only_use_earlier_ones() {
        let order = [
            "flags",
            "compiler",
            "target",
            "recipe",
            "ctx",
            "compile",
            "train",
            "train_gcc",
            "postlink",
            "judge",
            "summary",
            "llvm_compare",
            "pipeline",
        ];
        assert_table(FolderLayers::one_per_layer("program", &order));
    }

    #[test]
    fn kernel_modules_only_use_earlier_ones() {
        let order = [
            "profile_check",
            "gcda",
            "summary",
            "recipe",
            "variant",
            "ctx",
            "source",
            "config",
            "gcc_warnings",
            "build",
            "initramfs",
            "boot",
            "host_process",
            "train",
            "propeller",
            "bolt",
            "bolt_build",
            "gcov_pgo",
            "judge",
            "report",
            "package",
            "kvm",
            "uml",
            "model",
            "pipeline",
        ];
        assert_table(FolderLayers::one_per_layer("kernel", &order));
    }

    #[test]
    fn uml_modules_only_use_earlier_ones() {
        let order = [
            "twin", "config", "build", "run", "judge", "coverage", "summary",
        ];
        assert_table(FolderLayers::one_per_layer("kernel/uml", &order));
    }
}
