//! The words both pipelines (programs, kernels) use for what they build: a variant
//! (`variant`: which profile it reads, which optimizations are stacked, which build a
//! layout variant optimizes) and the compiler that builds it (`compiler`: family,
//! release, and the variants each family can build). What only one pipeline needs
//! hangs off these: a program's flags in `program::flags`, a kernel's Kconfig
//! symbols, KCFLAGS route and gcov PGO in `kernel::variant`.

pub mod compiler;
pub mod variant;

pub use compiler::Compiler;
pub use variant::{CompileProfile, Layout, ProfileKind, Variant};
