//! `kfdo optimize`: wiring for kfdo-optimize (recipe in, report out).

use std::path::PathBuf;

use anyhow::Context;
use kfdo_bench::counters::Choice;
use kfdo_optimize::{Compiler, Options, Recipe, Variant};
use kfdo_record::hardware::Method;

use crate::output::Global;

#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  kfdo optimize recipes/sqlite3/recipe.toml\n  \
    kfdo optimize recipes/lua5.4/recipe.toml --variants autofdo,ifdo -o /tmp/lua\n\n\
    Steps are cached by content: a rerun does only what changed. Each step logs to OUT/logs/; \
    the report is OUT/report/index.html, the verdict OUT/summary.md. The recipe format is in recipes/README.md."
)]
pub struct Args {
    /// The recipe (TOML), or a directory holding recipe.toml: a program's source, build,
    /// train and bench commands, or a kernel's source, configuration and workload.
    #[arg(value_name = "RECIPE")]
    recipe: PathBuf,
    /// Variants to build besides the baseline, comma-separated. Programs: autofdo,
    /// autofdo-llvm-profgen, ifdo, autofdo+thinlto (default: these four; for a recipe with
    /// `[build] target`, all but ifdo), and the layout variants propeller, bolt,
    /// autofdo+thinlto+propeller, autofdo+thinlto+bolt. Kernels:
    /// autofdo, autofdo-llvm-profgen, autofdo+thinlto, autofdo+thinlto+propeller and the
    /// recipe's own [[variant]]s (default: the recipe's default_variants, else
    /// autofdo,autofdo+thinlto).
    #[arg(long, value_name = "LIST")]
    variants: Option<String>,
    /// Kernels: boots per variant and evaluation workload (default: the recipe's, else 5).
    #[arg(long, value_name = "N")]
    boots: Option<usize>,
    /// Kernels: do not build the .deb / .rpm packages of the winning variant.
    #[arg(long)]
    no_packages: bool,
    /// How the training run is recorded (`kfdo record --method`); auto says why it picks.
    #[arg(long, value_name = "METHOD", default_value = "auto")]
    method: String,
    /// Sampling period of the training run (taken branches); default: kfdo record's.
    #[arg(long, value_name = "N")]
    period: Option<u64>,
    /// Counters of the benchmark: auto (hardware perf, else emulated), perf, cachegrind, emulated, none.
    #[arg(long, value_name = "SOURCE", default_value = "auto")]
    counters: String,
    /// Timed runs of each variant per benchmark (default: the recipe's, else 10).
    #[arg(long, value_name = "N")]
    runs: Option<usize>,
    /// Output directory (default: kfdo-optimize/NAME).
    #[arg(long, short = 'o', value_name = "DIR")]
    output: Option<PathBuf>,
    /// C compiler, of the family the recipe's [build] compiler names (default: clang-19;
    /// gcc / gcc-N for a GCC recipe).
    #[arg(long, value_name = "CC")]
    cc: Option<String>,
    /// C++ compiler (default: clang++-19; g++ / g++-N for a GCC recipe).
    #[arg(long, value_name = "CXX")]
    cxx: Option<String>,
    /// llvm-profdata, for the instrumented profile.
    #[arg(long, value_name = "PATH", default_value = "llvm-profdata-19")]
    llvm_profdata: String,
    /// llvm-profgen, the reference converter.
    #[arg(long, value_name = "PATH", default_value = "llvm-profgen-19")]
    llvm_profgen: String,
    /// Builds run side by side (default: the number of CPUs).
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,
    /// Skip the heat maps (they record the optimized build once more).
    #[arg(long)]
    no_heatmaps: bool,
}

pub fn run(mut a: Args, g: &Global) -> anyhow::Result<i32> {
    // A recipe directory stands for its recipe.toml (`kfdo optimize recipes/linux`).
    if a.recipe.is_dir() {
        a.recipe = a.recipe.join("recipe.toml");
    }
    let method = match a.method.as_str() {
        "auto" => None,
        m => Some(
            m.parse::<Method>()
                .map_err(|why| anyhow::anyhow!("--method {m}: {why}"))?,
        ),
    };
    let counters: Choice = a.counters.parse().map_err(|_| {
        let names: Vec<&str> = Choice::ALL.iter().map(|c| c.name()).collect();
        anyhow::anyhow!("--counters {}: use one of {}", a.counters, names.join(", "))
    })?;
    if a.period == Some(0) {
        anyhow::bail!("--period must be at least 1");
    }
    if matches!(a.runs, Some(0 | 1)) {
        anyhow::bail!("--runs: need at least 2 timed runs for a statistic");
    }
    if matches!(a.boots, Some(0 | 1)) {
        anyhow::bail!("--boots: need at least 2 boots per variant for a statistic");
    }
    let text = kfdo_optimize::recipe::read_text(&a.recipe)?;
    if kfdo_optimize::kernel::KernelRecipe::is_kernel_recipe(&text) {
        return run_kernel(a, g);
    }
    let recipe = Recipe::load(&a.recipe)?;
    let (default_cc, default_cxx) =
        kfdo_optimize::compiler::default_commands(&recipe.build.compiler);
    let cc = a.cc.clone().unwrap_or(default_cc);
    let cxx = a.cxx.clone().unwrap_or(default_cxx);
    let compiler = Compiler::resolve(&recipe.build.compiler, &cc)
        .map_err(|e| anyhow::anyhow!("recipe {}: {e}", a.recipe.display()))?;
    let target = recipe
        .build
        .target
        .as_deref()
        .map(kfdo_optimize::target::Target::parse)
        .transpose()
        .map_err(|e| anyhow::anyhow!("recipe {}: {e}", a.recipe.display()))?;
    let default_variants = match &target {
        Some(t) => t.default_variants(),
        None => compiler.default_variants(),
    };
    let variants = Variant::parse_list(a.variants.as_deref().unwrap_or(default_variants))?;
    compiler.check_variants(&variants)?;
    // What a cross build cannot do is refused before the output directory is made.
    if let Some(t) = &target {
        t.check_variants(&variants)?;
        t.method(method)?;
        t.counters(counters)?;
    }
    let out = output_dir(&a, &recipe.name)?;
    let kfdo_exe = std::env::current_exe().context("cannot find the kfdo executable")?;
    let jobs = jobs(&a);
    let opts = Options {
        recipe,
        variants,
        method,
        period: a.period,
        counters,
        runs: a.runs,
        out,
        kfdo_exe,
        cc,
        cxx,
        compiler,
        target,
        profdata: a.llvm_profdata,
        profgen: a.llvm_profgen,
        jobs,
        quiet: g.quiet,
        heatmaps: !a.no_heatmaps,
    };
    let outcome = kfdo_optimize::run(opts)?;
    print_outcome(&outcome.summary, &outcome.report, &outcome.summary_path);
    Ok(0)
}

/// `-o`, or `kfdo-optimize/NAME`; created, and made absolute.
fn output_dir(a: &Args, recipe_name: &str) -> anyhow::Result<PathBuf> {
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from("kfdo-optimize").join(recipe_name));
    std::fs::create_dir_all(&out)
        .with_context(|| format!("cannot create the output directory {}", out.display()))?;
    Ok(std::fs::canonicalize(&out)?)
}

/// `--jobs`, or one per CPU.
fn jobs(a: &Args) -> usize {
    a.jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn print_outcome(summary: &str, report: &std::path::Path, summary_path: &std::path::Path) {
    println!("{}", summary.trim_end());
    println!();
    println!("report:  {}", report.join("index.html").display());
    println!("summary: {}", summary_path.display());
}

/// `kfdo optimize` on a kernel recipe.
fn run_kernel(a: Args, g: &Global) -> anyhow::Result<i32> {
    use kfdo_optimize::kernel::{self, KernelOptions, KernelRecipe, KernelVariant};
    if a.period == Some(0) {
        anyhow::bail!("--period must be at least 1");
    }
    let recipe = KernelRecipe::load(&a.recipe)?;
    let default = recipe.default_variants().join(",");
    let variants = KernelVariant::parse_list(a.variants.as_deref().unwrap_or(&default), &recipe)?;
    let out = output_dir(&a, &recipe.name)?;
    let jobs = jobs(&a);
    let opts = KernelOptions {
        recipe,
        variants,
        period: a.period,
        boots: a.boots,
        out,
        kfdo_exe: std::env::current_exe().context("cannot find the kfdo executable")?,
        profgen: a.llvm_profgen,
        jobs,
        quiet: g.quiet,
        heatmaps: !a.no_heatmaps,
        packages: !a.no_packages,
    };
    let outcome = kernel::run(opts)?;
    print_outcome(&outcome.summary, &outcome.report, &outcome.summary_path);
    for p in &outcome.packages {
        println!("package: {}", p.display());
    }
    Ok(0)
}
