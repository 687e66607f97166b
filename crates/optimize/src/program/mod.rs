//! `kfdo optimize` for a program: a recipe (`recipe`) says how to fetch, build, train
//! and benchmark it; `step_list` is the run's steps. `pipeline` builds the variants (`crate::vocabulary`: baseline, AutoFDO
//! from kfdo's and from llvm-profgen's profile, instrumented PGO, AutoFDO with ThinLTO,
//! and Propeller and BOLT on top of the baseline or of AutoFDO+ThinLTO; `flags`: clang's
//! flags for each) with the recipe's compiler (`compiler`: the recipe's choice and GCC's
//! flags; `compile` runs the builds), records the training runs
//! and converts them (`train`, `train_gcc`; BOLT's rewrite and the layout warnings in
//! `postlink`), benchmarks every build interleaved and writes the report (`judge`,
//! `summary`). A recipe may build for another architecture (`target`: aarch64 on
//! x86-64), recorded, timed and counted under QEMU.

pub mod compile;
pub mod compiler;
pub mod ctx;
pub mod flags;
pub mod judge;
pub mod llvm_compare;
pub mod pipeline;
pub mod postlink;
pub mod recipe;
pub mod step_list;
pub mod summary;
pub mod target;
pub mod train;
pub mod train_gcc;

pub use ctx::Options;
pub use pipeline::{run, Outcome};
pub use recipe::Recipe;
