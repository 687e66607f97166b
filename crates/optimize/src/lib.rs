//! kfdo-optimize: from a program's source to a faster build and the proof.
//!
//! A recipe (`recipe`) says how to fetch, build, train and benchmark a
//! program. `pipeline` builds the variants (`variant`: baseline, AutoFDO from
//! kfdo's and from llvm-profgen's profile, instrumented PGO, AutoFDO with
//! ThinLTO, and Propeller and BOLT on top of the baseline or of AutoFDO+ThinLTO),
//! records the training runs and converts them (`train`; BOLT's rewrite and the
//! layout warnings in `postlink`), benchmarks
//! every build interleaved and writes the report (`judge`, `summary`). A recipe may
//! build for another architecture (`target`: aarch64 on x86-64), recorded, timed and
//! counted under QEMU.
//!
//! Every step is cached (`cache`): keyed by a SHA-256 of what it reads and
//! remembering the content hashes of what it wrote, so a rerun does only what
//! changed; every step logs to `OUT/logs/STEP.log` (`exec`), and a failure
//! names the step and its log. kfdo's own steps (record, profile, compare,
//! heatmap, report) are calls into the library crates, with what they say
//! written into the step's log.

pub mod cache;
pub mod compile;
pub mod compiler;
pub mod ctx;
pub mod exec;
pub mod judge;
pub mod kernel;
pub mod pipeline;
pub mod postlink;
pub mod progress;
pub mod recipe;
pub mod scripts;
pub mod summary;
pub mod target;
pub mod train;
pub mod train_gcc;
pub mod variant;

pub use compiler::Compiler;
pub use ctx::Options;
pub use pipeline::{run, Outcome};
pub use recipe::Recipe;
pub use variant::Variant;
