//! `kfdo optimize` for the Linux kernel: a kernel recipe (`recipe`) names the source
//! (`source`: Debian's linux-source package, fetched with an apt of kfdo's own), the
//! configuration to start from and the workload; kfdo configures (`config`) and builds
//! (`build`) the variants (`variant`: baseline, AutoFDO, AutoFDO+ThinLTO, and the recipe's
//! own: any compiler, KCFLAGS or Kconfig change), boots the baseline under QEMU with the
//! training workload and records its kernel branches in the workload's window only
//! (`boot`, `train`), converts the recording with kfdo and llvm-profgen (`train`;
//! Propeller's in `propeller`, gcov PGO's counts in `gcov_pgo`), rebuilds, boots every
//! variant several times, interleaved, with the evaluation workloads (`judge`: kernel-mode
//! emulated counters and the workloads' operations per second), draws kernel heat maps,
//! writes the summary and the report (`summary`, `report`), and packages the winner (`package`).
//! `step_list` is the run's steps, `pipeline` takes them; `ctx` holds the options and
//! the shared steps.
//!
//! Every step is cached like the program pipeline's (`crate::steps`), in the same
//! output layout: `OUT/logs`, `OUT/build/VARIANT` (kbuild's `O=`), `OUT/profiles`,
//! `OUT/bench/results.db`, `OUT/report`, `OUT/summary.md`, `OUT/packages`.

pub mod bolt;
pub mod bolt_build;
pub mod boot;
pub mod boot_trials;
pub mod build;
pub mod config;
pub mod counters_vs_time;
pub mod ctx;
pub mod gcc_warnings;
pub mod gcda;
pub mod gcov_pgo;
pub mod host_process;
pub mod initramfs;
pub mod judge;
pub mod kvm;
pub mod package;
pub mod pipeline;
pub mod profile_check;
pub mod propeller;
pub mod recipe;
pub mod report;
pub mod source;
pub mod step_list;
pub mod summary;
pub mod train;
pub mod uml;
pub mod variant;

pub use ctx::{KernelCtx, KernelOptions};
pub use pipeline::run;
pub use recipe::KernelRecipe;
pub use variant::KernelVariant;
