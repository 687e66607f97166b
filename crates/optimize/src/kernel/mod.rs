//! `kfdo optimize` for the Linux kernel: a kernel recipe (`recipe`) names the source
//! (`source`: Debian's linux-source package, fetched with an apt of kfdo's own), the
//! configuration to start from and the workload; kfdo configures (`config`) and builds
//! (`build`) the variants (`variant`: baseline, AutoFDO, AutoFDO+ThinLTO, and the recipe's
//! own: any compiler, KCFLAGS or Kconfig change), boots the baseline under QEMU with the
//! training workload and records its kernel branches in the workload's window only
//! (`boot`), converts the recording with kfdo and llvm-profgen-19, rebuilds, boots every
//! variant several times, interleaved, with the evaluation workloads (`judge`: kernel-mode
//! emulated counters and the workloads' operations per second), draws kernel heat maps,
//! writes the summary and the report, and packages the winner (`package`).
//!
//! Every step is cached like the program pipeline's (`crate::cache`), in the same output
//! layout: `OUT/logs`, `OUT/build/VARIANT` (kbuild's `O=`), `OUT/profiles`,
//! `OUT/bench/results.db`, `OUT/report`, `OUT/summary.md`, `OUT/packages`.

pub mod boot;
pub mod build;
pub mod config;
pub mod gcc_warnings;
pub mod gcda;
pub mod gcov_pgo;
pub mod initramfs;
pub mod judge;
pub mod package;
pub mod pipeline;
pub mod profile_check;
pub mod propeller;
pub mod recipe;
pub mod source;
pub mod summary;
pub mod variant;

use std::path::PathBuf;

use crate::ctx::Steps;

pub use pipeline::run;
pub use recipe::KernelRecipe;
pub use variant::KernelVariant;

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct KernelOptions {
    pub recipe: KernelRecipe,
    pub variants: Vec<KernelVariant>,
    /// Sampling period of the training recording (taken branches).
    pub period: Option<u64>,
    /// Boots per variant and evaluation workload, overriding the recipe's.
    pub boots: Option<usize>,
    pub out: PathBuf,
    pub kfdo_exe: PathBuf,
    pub profgen: String,
    /// Parallel make jobs.
    pub jobs: usize,
    pub quiet: bool,
    pub heatmaps: bool,
    /// Build Debian and RPM packages of the winning variant.
    pub packages: bool,
}

/// The kernel pipeline's context: its options and the shared [`Steps`].
pub struct KernelCtx {
    pub recipe: KernelRecipe,
    pub opts: KernelOptions,
    pub steps: Steps,
}

impl std::ops::Deref for KernelCtx {
    type Target = Steps;
    fn deref(&self) -> &Steps {
        &self.steps
    }
}
