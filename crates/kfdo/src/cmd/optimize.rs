//! `kfdo optimize`: wiring for kfdo-optimize (recipe in, report out).

use std::path::PathBuf;

use anyhow::Context;
use kfdo_bench::counters::Choice;
use kfdo_optimize::{Options, Recipe, Variant};
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
    /// The recipe (TOML): source, build, train and bench commands.
    #[arg(value_name = "RECIPE.toml")]
    recipe: PathBuf,
    /// Variants to build besides the baseline, comma-separated:
    /// autofdo, autofdo-llvm-profgen, ifdo, autofdo+thinlto.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "autofdo,autofdo-llvm-profgen,ifdo,autofdo+thinlto"
    )]
    variants: String,
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
    /// C compiler (clang: the flags are clang's).
    #[arg(long, value_name = "CC", default_value = "clang-19")]
    cc: String,
    /// C++ compiler.
    #[arg(long, value_name = "CXX", default_value = "clang++-19")]
    cxx: String,
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

pub fn run(a: Args, g: &Global) -> anyhow::Result<i32> {
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
    let recipe = Recipe::load(&a.recipe)?;
    let variants = Variant::parse_list(&a.variants)?;
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from("kfdo-optimize").join(&recipe.name));
    std::fs::create_dir_all(&out)
        .with_context(|| format!("cannot create the output directory {}", out.display()))?;
    let out = std::fs::canonicalize(&out)?;
    let kfdo_exe = std::env::current_exe().context("cannot find the kfdo executable")?;
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let opts = Options {
        recipe,
        variants,
        method,
        period: a.period,
        counters,
        runs: a.runs,
        out,
        kfdo_exe,
        cc: a.cc,
        cxx: a.cxx,
        profdata: a.llvm_profdata,
        profgen: a.llvm_profgen,
        jobs,
        quiet: g.quiet,
        heatmaps: !a.no_heatmaps,
    };
    let outcome = kfdo_optimize::run(opts)?;
    println!("{}", outcome.summary.trim_end());
    println!();
    println!("report:  {}", outcome.report.join("index.html").display());
    println!("summary: {}", outcome.summary_path.display());
    Ok(0)
}
