//! The kernel pipeline's context: what the user asked for, over the shared steps.

use std::path::PathBuf;

use crate::steps::Steps;

use super::recipe::KernelRecipe;
use super::variant::KernelVariant;

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
    /// Build and judge the User-Mode Linux twins (the recipe's `[uml]`).
    pub uml: bool,
    /// Boot the kernels under KVM too, where KVM works.
    pub kvm: bool,
}

/// The kernel pipeline's context: its options and the shared [`Steps`].
pub struct KernelCtx {
    pub recipe: KernelRecipe,
    pub opts: KernelOptions,
    pub steps: Steps,
    /// Whether the kernels can be booted under KVM here, and if not, why.
    pub kvm: kfdo_record::kvm::KvmStatus,
}

impl std::ops::Deref for KernelCtx {
    type Target = Steps;
    fn deref(&self) -> &Steps {
        &self.steps
    }
}
