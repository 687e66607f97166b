//! `kfdo optimize`: wiring for kfdo-optimize (recipe in, report out).

use std::path::PathBuf;

use anyhow::Context;
use kfdo_bench::counters::Choice;
use kfdo_optimize::{Overrides, Plan};
use kfdo_record::hardware::Method;
use kfdo_toolchain::Llvm;

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
    // The help is `vocabulary::support`'s table in words, so it names what is built.
    #[arg(long, value_name = "LIST", help = kfdo_optimize::vocabulary::support::help())]
    variants: Option<String>,
    /// Kernels: boots per variant and evaluation workload (default: the recipe's, else 5).
    #[arg(long, value_name = "N")]
    boots: Option<usize>,
    /// Kernels: do not build the .deb / .rpm packages of the winning variant.
    #[arg(long)]
    no_packages: bool,
    /// Kernels: skip the User-Mode Linux twins (native time) that the recipe's [uml] asks for.
    #[arg(long)]
    no_uml: bool,
    /// Kernels: do not boot them under KVM (done where `kfdo capabilities` says KVM works).
    #[arg(long)]
    no_kvm: bool,
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
    /// The LLVM release of a clang recipe's tools, over its compiler = "clang-N": every
    /// LLVM tool of the run (clang, lld, llvm-profgen, llvm-profdata, llvm-bolt) comes
    /// from it (`kfdo capabilities` lists those installed).
    #[arg(long, value_name = "N")]
    llvm: Option<String>,
    /// Programs: also build the baseline and autofdo with this LLVM release (in
    /// OUT/llvm-N) and compare the two releases' baselines and AutoFDO gains in the summary.
    #[arg(long, value_name = "N")]
    compare_llvm: Option<String>,
    /// C compiler, of the family the recipe's [build] compiler names (default: the LLVM
    /// release's clang-N; gcc / gcc-N for a GCC recipe).
    #[arg(long, value_name = "CC")]
    cc: Option<String>,
    /// C++ compiler (default: clang++-N; g++ / g++-N for a GCC recipe).
    #[arg(long, value_name = "CXX")]
    cxx: Option<String>,
    /// llvm-profdata, for the instrumented profile (default: the LLVM release's).
    #[arg(long, value_name = "PATH")]
    llvm_profdata: Option<String>,
    /// llvm-profgen, the reference converter (default: the LLVM release's).
    #[arg(long, value_name = "PATH")]
    llvm_profgen: Option<String>,
    /// Builds run side by side (default: the number of CPUs).
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,
    /// Skip the heat maps (they record the optimized build once more).
    #[arg(long)]
    no_heatmaps: bool,
}

/// `--OPTION N`: an LLVM release.
fn parse_llvm(option: &str, text: Option<&str>) -> anyhow::Result<Option<Llvm>> {
    text.map(|t| Llvm::parse(t).map_err(|e| anyhow::anyhow!("--{option} {t}: {e}")))
        .transpose()
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
    let overrides = Overrides {
        variants: a.variants,
        boots: a.boots,
        packages: !a.no_packages,
        uml: !a.no_uml,
        kvm: !a.no_kvm,
        method,
        period: a.period,
        counters,
        runs: a.runs,
        output: a.output,
        cc: a.cc,
        cxx: a.cxx,
        llvm: parse_llvm("llvm", a.llvm.as_deref())?,
        compare_llvm: parse_llvm("compare-llvm", a.compare_llvm.as_deref())?,
        profdata: a.llvm_profdata,
        profgen: a.llvm_profgen,
        jobs: a.jobs,
        heatmaps: !a.no_heatmaps,
        quiet: g.quiet,
        kfdo_exe: std::env::current_exe().context("cannot find the kfdo executable")?,
    };
    let plan = Plan::resolve(&a.recipe, overrides)?;
    // Ctrl-C or SIGTERM: stop the running commands, say what the cache kept, exit 130.
    let _ = ctrlc::set_handler(|| {
        eprintln!("{}", kfdo_optimize::steps::interrupt::interrupt());
        std::process::exit(130);
    });
    let done = plan.run()?;
    println!("{}", done.summary.trim_end());
    println!();
    println!("report:  {}", done.report.join("index.html").display());
    println!("summary: {}", done.summary_path.display());
    for p in &done.packages {
        println!("package: {}", p.display());
    }
    Ok(0)
}
