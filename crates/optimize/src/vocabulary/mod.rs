//! The words both pipelines (programs, kernels) use for what they build: a variant
//! (`variant`: which profile it reads, which optimizations are stacked, which build a
//! layout variant optimizes), the compiler that builds it (`compiler`: family,
//! release, how a recipe names it), and the one table of which kind of build makes
//! which variant with which compiler (`support`). What only one pipeline needs
//! hangs off these: a program's flags in `program::flags`, a kernel's Kconfig
//! symbols, KCFLAGS route and gcov PGO in `kernel::variant`.

pub mod compiler;
pub mod support;
pub mod variant;

pub use compiler::{Compiler, CompilerName};
pub use support::{BuildKind, Refusal};
pub use variant::{CompileProfile, Layout, ProfileKind, Variant};
