//! The program pipeline's context: what the user asked for, over the shared steps.

use std::path::PathBuf;

use crate::steps::{StepList, Steps};

use super::recipe::Recipe;
use crate::vocabulary::{Compiler, Variant};

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct Options {
    pub recipe: Recipe,
    pub variants: Vec<Variant>,
    /// How the training run is recorded; None is auto (which picks, and says why).
    pub method: Option<kfdo_record::hardware::Method>,
    /// `kfdo record --period`, when given.
    pub period: Option<u64>,
    /// The benchmark's counters; `Auto` here means hardware perf, else emulated.
    pub counters: kfdo_bench::counters::Choice,
    /// Timed runs per variant, overriding the recipe's.
    pub runs: Option<usize>,
    /// Output directory.
    pub out: PathBuf,
    /// The executable that holds kfdo's code (the running one): its content hash keys
    /// the steps that kfdo's own code does (conversion, report).
    pub kfdo_exe: PathBuf,
    pub cc: String,
    pub cxx: String,
    /// The family `cc` belongs to: it picks the flags and the profile formats.
    pub compiler: Compiler,
    /// `[build] target`: the architecture the builds are for, when not this machine's.
    pub target: Option<super::target::Target>,
    pub profdata: String,
    pub profgen: String,
    /// Independent steps (builds) run at once.
    pub jobs: usize,
    pub quiet: bool,
    /// Record the optimized build too, for the heat map of baseline vs optimized.
    pub heatmaps: bool,
    /// `--compare-llvm N`: the run of the same recipe with another LLVM release, made
    /// before this one, that the summary compares this run with.
    pub against: Option<Against>,
}

/// Another LLVM release's run of the same recipe (`program::llvm_compare`).
#[derive(Debug, Clone)]
pub struct Against {
    pub llvm: kfdo_toolchain::Llvm,
    /// Its output directory (`OUT/llvm-N`).
    pub out: PathBuf,
}

impl Options {
    /// What decides the run's steps.
    pub fn shape(&self) -> super::step_list::Shape<'_> {
        super::step_list::Shape {
            recipe: &self.recipe,
            variants: &self.variants,
            compiler: self.compiler,
            heatmaps: self.heatmaps,
        }
    }

    /// The LLVM release whose tools the run's LLVM steps use (a GCC recipe's: the
    /// default release, for what GCC builds do not replace).
    pub fn llvm(&self) -> kfdo_toolchain::Llvm {
        self.compiler.llvm().unwrap_or_default()
    }
}

/// The program pipeline's context: its options and the shared [`Steps`].
pub struct Ctx {
    pub opts: Options,
    pub steps: Steps,
}

impl std::ops::Deref for Ctx {
    type Target = Steps;
    fn deref(&self) -> &Steps {
        &self.steps
    }
}

impl Ctx {
    pub fn new(opts: Options, plan: StepList) -> anyhow::Result<Ctx> {
        let steps = Steps::new(
            &opts.out,
            &[&opts.cc, &opts.cxx],
            &opts.kfdo_exe,
            plan,
            opts.quiet,
        )?;
        Ok(Ctx { opts, steps })
    }

    pub fn recipe(&self) -> &Recipe {
        &self.opts.recipe
    }
}
