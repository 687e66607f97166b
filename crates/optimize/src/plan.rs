//! One checked plan from a recipe path and the command line's overrides: the recipe
//! is read once, tells whether it is a program's or a kernel's, and every option is
//! checked here, before the output directory is made, so a pipeline runs only what
//! was refused nowhere.

use std::path::{Path, PathBuf};

use anyhow::Context;
use kfdo_bench::counters::Choice;
use kfdo_record::hardware::Method;

use crate::kernel::{KernelOptions, KernelRecipe, KernelVariant};
use crate::program::{compiler, target::Target, Compiler, Options, Recipe, Variant};
use crate::steps::recipe_file::read_text;

/// What the command line may say about a run (None: the recipe's or the default).
#[derive(Debug, Clone)]
pub struct Overrides {
    /// Comma-separated variants besides the baseline.
    pub variants: Option<String>,
    /// Kernels: boots per variant and evaluation workload.
    pub boots: Option<usize>,
    /// Kernels: build the packages of the winning variant.
    pub packages: bool,
    /// How the training run is recorded; None is auto.
    pub method: Option<Method>,
    pub period: Option<u64>,
    pub counters: Choice,
    pub runs: Option<usize>,
    /// Output directory (default: `kfdo-optimize/NAME`).
    pub output: Option<PathBuf>,
    pub cc: Option<String>,
    pub cxx: Option<String>,
    pub profdata: String,
    pub profgen: String,
    /// Builds side by side (default: one per CPU).
    pub jobs: Option<usize>,
    pub heatmaps: bool,
    pub quiet: bool,
    /// The executable that holds kfdo's code: its hash keys kfdo's own steps.
    pub kfdo_exe: PathBuf,
}

/// A run of one of the two pipelines, every option checked.
#[derive(Debug)]
pub enum Plan {
    Program(Options),
    Kernel(KernelOptions),
}

/// What a finished run leaves.
pub struct Finished {
    pub summary: String,
    pub summary_path: PathBuf,
    pub report: PathBuf,
    /// Kernels: the winner's packages.
    pub packages: Vec<PathBuf>,
}

impl Plan {
    /// Reads the recipe at `recipe` (a directory stands for its recipe.toml) and checks
    /// `o` against it.
    pub fn resolve(recipe: &Path, o: Overrides) -> anyhow::Result<Plan> {
        let recipe = if recipe.is_dir() {
            recipe.join("recipe.toml")
        } else {
            recipe.to_path_buf()
        };
        if o.period == Some(0) {
            anyhow::bail!("--period must be at least 1");
        }
        if matches!(o.runs, Some(0 | 1)) {
            anyhow::bail!("--runs: need at least 2 timed runs for a statistic");
        }
        if matches!(o.boots, Some(0 | 1)) {
            anyhow::bail!("--boots: need at least 2 boots per variant for a statistic");
        }
        let text = read_text(&recipe)?;
        if KernelRecipe::is_kernel_recipe(&text) {
            kernel_plan(KernelRecipe::from_text(&recipe, &text)?, o).map(Plan::Kernel)
        } else {
            program_plan(Recipe::from_text(&recipe, &text)?, &recipe, o).map(Plan::Program)
        }
    }

    /// Runs the plan's pipeline.
    pub fn run(self) -> anyhow::Result<Finished> {
        match self {
            Plan::Program(opts) => {
                let done = crate::program::run(opts)?;
                Ok(Finished {
                    summary: done.summary,
                    summary_path: done.summary_path,
                    report: done.report,
                    packages: Vec::new(),
                })
            }
            Plan::Kernel(opts) => {
                let done = crate::kernel::run(opts)?;
                Ok(Finished {
                    summary: done.summary,
                    summary_path: done.summary_path,
                    report: done.report,
                    packages: done.packages,
                })
            }
        }
    }
}

/// `path`: the recipe file as the user named it, for errors.
fn program_plan(recipe: Recipe, path: &Path, o: Overrides) -> anyhow::Result<Options> {
    let (default_cc, default_cxx) = compiler::default_commands(&recipe.build.compiler);
    let cc = o.cc.unwrap_or(default_cc);
    let cxx = o.cxx.unwrap_or(default_cxx);
    let compiler = Compiler::resolve(&recipe.build.compiler, &cc)
        .map_err(|e| anyhow::anyhow!("recipe {}: {e}", path.display()))?;
    let target = recipe
        .build
        .target
        .as_deref()
        .map(Target::parse)
        .transpose()
        .map_err(|e| anyhow::anyhow!("recipe {}: {e}", path.display()))?;
    let default_variants = match &target {
        Some(t) => t.default_variants(),
        None => compiler.default_variants(),
    };
    let variants = Variant::parse_list(o.variants.as_deref().unwrap_or(default_variants))?;
    compiler.check_variants(&variants)?;
    // What a cross build cannot do is refused before the output directory is made.
    if let Some(t) = &target {
        t.check_variants(&variants)?;
        t.method(o.method)?;
        t.counters(o.counters)?;
    }
    let out = output_dir(o.output.as_deref(), &recipe.name)?;
    Ok(Options {
        recipe,
        variants,
        method: o.method,
        period: o.period,
        counters: o.counters,
        runs: o.runs,
        out,
        kfdo_exe: o.kfdo_exe,
        cc,
        cxx,
        compiler,
        target,
        profdata: o.profdata,
        profgen: o.profgen,
        jobs: jobs(o.jobs),
        quiet: o.quiet,
        heatmaps: o.heatmaps,
    })
}

fn kernel_plan(recipe: KernelRecipe, o: Overrides) -> anyhow::Result<KernelOptions> {
    let default = recipe.default_variants().join(",");
    let variants = KernelVariant::parse_list(o.variants.as_deref().unwrap_or(&default), &recipe)?;
    let out = output_dir(o.output.as_deref(), &recipe.name)?;
    Ok(KernelOptions {
        recipe,
        variants,
        period: o.period,
        boots: o.boots,
        out,
        kfdo_exe: o.kfdo_exe,
        profgen: o.profgen,
        jobs: jobs(o.jobs),
        quiet: o.quiet,
        heatmaps: o.heatmaps,
        packages: o.packages,
    })
}

/// `-o`, or `kfdo-optimize/NAME`; created, and made absolute.
fn output_dir(output: Option<&Path>, recipe_name: &str) -> anyhow::Result<PathBuf> {
    let out = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("kfdo-optimize").join(recipe_name));
    std::fs::create_dir_all(&out)
        .with_context(|| format!("cannot create the output directory {}", out.display()))?;
    Ok(std::fs::canonicalize(&out)?)
}

/// `--jobs`, or one per CPU.
fn jobs(requested: Option<usize>) -> usize {
    requested.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
