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
//! 1. `bolt` and `propeller`, independent of each other. Inside `bolt/`:
//!    `cfg`, `fdata`, `functions`, then `aggregate`. Inside `propeller/`: `model`
//!    and `verify`, then `build`, `layout` and `writer`; inside `propeller/layout/`:
//!    `graph`, `merge_order` and `params`, then `score`, then `chain` and `forced`,
//!    then `assembly`, then `merge`, then `c3`.

pub mod bolt;
pub mod propeller;

pub use bolt::{bolt_profile, BoltError, BoltProfile, BoltStats};

#[cfg(test)]
mod layering {
    //! The layers of the crate doc, bottom first; `kfdo_testkit::layering` checks
    //! every `crate::` / `super::` path under `src/` against them.

    use std::path::Path;

    use kfdo_testkit::layering::{assert_folder_layers, assert_layers};

    fn src() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
    }

    #[test]
    fn modules_only_use_lower_layers() {
        let layers: &[&[&str]] = &[&["bolt", "propeller"]];
        assert_layers(&src(), layers, &[]);
    }

    #[test]
    fn bolt_modules_only_use_lower_layers() {
        let layers: &[&[&str]] = &[&["cfg", "fdata", "functions"], &["aggregate"]];
        assert_folder_layers(&src(), "bolt", layers, &[]);
    }

    #[test]
    fn propeller_modules_only_use_lower_layers() {
        let layers: &[&[&str]] = &[&["model", "verify"], &["build", "layout", "writer"]];
        assert_folder_layers(&src(), "propeller", layers, &[]);
    }

    #[test]
    fn propeller_layout_modules_only_use_lower_layers() {
        let layers: &[&[&str]] = &[
            &["graph", "merge_order", "params"],
            &["score"],
            &["chain", "forced"],
            &["assembly"],
            &["merge"],
            &["c3", "tests"],
        ];
        // The tests drive the folder's own entry point, `code_layout`, in mod.rs.
        let tests = &["propeller/layout/tests.rs"];
        assert_folder_layers(&src(), "propeller/layout", layers, tests);
    }
}
