//! One checked plan from a recipe path and the command line's overrides: the recipe
//! is read once, tells whether it is a program's or a kernel's, and every option is
//! checked here, before the output directory is made, so a pipeline runs only what
//! was refused nowhere.

use std::path::{Path, PathBuf};

use anyhow::Context;
use kfdo_bench::counters::Choice;
use kfdo_record::hardware::Method;
use kfdo_toolchain::Llvm;

use crate::kernel::{KernelOptions, KernelRecipe, KernelVariant};
use crate::program::{compiler, target::Target, Options, Recipe};
use crate::steps::output_dir;
use crate::steps::recipe_file::read_text;
use crate::vocabulary::{support, BuildKind, Variant};

/// What the command line may say about a run (None: the recipe's or the default).
#[derive(Debug, Clone)]
pub struct Overrides {
    /// Comma-separated variants besides the baseline.
    pub variants: Option<String>,
    /// Kernels: boots per variant and evaluation workload.
    pub boots: Option<usize>,
    /// Kernels: build the packages of the winning variant.
    pub packages: bool,
    /// Kernels: build and judge the User-Mode Linux twins the recipe asks for.
    pub uml: bool,
    /// Kernels: boot them under KVM too, where KVM works.
    pub kvm: bool,
    /// How the training run is recorded; None is auto.
    pub method: Option<Method>,
    pub period: Option<u64>,
    pub counters: Choice,
    pub runs: Option<usize>,
    /// Output directory (default: `kfdo-optimize/NAME`).
    pub output: Option<PathBuf>,
    pub cc: Option<String>,
    pub cxx: Option<String>,
    /// The LLVM release of a clang recipe's tools (`--llvm`), over the recipe's.
    pub llvm: Option<Llvm>,
    /// `--compare-llvm N`: programs only: run the recipe's baseline and autofdo with
    /// this release too (in `OUT/llvm-N`) and compare the two in the summary.
    pub compare_llvm: Option<Llvm>,
    /// llvm-profdata / llvm-profgen by path (default: the LLVM release's).
    pub profdata: Option<String>,
    pub profgen: Option<String>,
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
    /// A program's run, and with `--compare-llvm` the other release's run made first.
    Program(Box<Options>, Option<Box<Options>>),
    Kernel(Box<KernelOptions>),
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
        let kernel = KernelRecipe::is_kernel_recipe(&text);
        refuse_unread(&o, kernel, &recipe)?;
        if kernel {
            if let Some(l) = o.compare_llvm {
                anyhow::bail!(
                    "--compare-llvm {}: compares program recipes' builds; for a kernel, run \
                     the recipe with --llvm N into two output directories",
                    l.major
                );
            }
            kernel_plan(KernelRecipe::from_text(&recipe, &text)?, o)
                .map(|k| Plan::Kernel(Box::new(k)))
        } else {
            let r = Recipe::from_text(&recipe, &text)?;
            if let Some(other) = o.compare_llvm {
                check_compare(&r, &o, other)?;
            }
            let main = program_plan(r.clone(), &recipe, o.clone())?;
            let Some(other) = o.compare_llvm else {
                return Ok(Plan::Program(Box::new(main), None));
            };
            let against = against_plan(r, &recipe, &main, o, other)?;
            let main = Options {
                against: Some(crate::program::ctx::Against {
                    llvm: other,
                    out: against.out.clone(),
                }),
                ..main
            };
            Ok(Plan::Program(Box::new(main), Some(Box::new(against))))
        }
    }

    /// Runs the plan's pipeline.
    pub fn run(self) -> anyhow::Result<Finished> {
        match self {
            Plan::Program(opts, against) => {
                if let Some(other) = against {
                    crate::program::run(*other)?;
                }
                let done = crate::program::run(*opts)?;
                Ok(Finished {
                    summary: done.summary,
                    summary_path: done.summary_path,
                    report: done.report,
                    packages: Vec::new(),
                })
            }
            Plan::Kernel(opts) => {
                let done = crate::kernel::run(*opts)?;
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

/// Refuses, by name and before any work, an option that no step of the recipe's
/// pipeline reads: `--runs` on a kernel recipe or `--boots` on a program's would
/// otherwise be ignored in silence, and the run would not be the one asked for.
fn refuse_unread(o: &Overrides, kernel: bool, recipe: &Path) -> anyhow::Result<()> {
    let (kind, unread): (&str, Vec<(&str, &str)>) = if kernel {
        let mut unread = Vec::new();
        if o.runs.is_some() {
            unread.push(("--runs", "a kernel is judged in boots: --boots N"));
        }
        if o.method.is_some() {
            unread.push((
                "--method",
                "a kernel's training run is recorded under emulation, in the guest",
            ));
        }
        if o.counters != Choice::Auto {
            unread.push((
                "--counters",
                "a kernel's counters are the emulated guest's own",
            ));
        }
        for (given, option) in [
            (o.cc.is_some(), "--cc"),
            (o.cxx.is_some(), "--cxx"),
            (o.profdata.is_some(), "--llvm-profdata"),
        ] {
            if given {
                unread.push((
                    option,
                    "a kernel is built by kbuild with the recipe's compiler (--llvm N picks \
                     the LLVM release)",
                ));
            }
        }
        ("a kernel", unread)
    } else {
        let mut unread = Vec::new();
        if o.boots.is_some() {
            unread.push(("--boots", "a program is judged in timed runs: --runs N"));
        }
        for (off, option) in [
            (!o.packages, "--no-packages"),
            (!o.uml, "--no-uml"),
            (!o.kvm, "--no-kvm"),
        ] {
            if off {
                unread.push((option, "it applies to kernel recipes"));
            }
        }
        ("a program", unread)
    };
    let Some((option, instead)) = unread.first() else {
        return Ok(());
    };
    let all: Vec<&str> = unread.iter().map(|(o, _)| *o).collect();
    anyhow::bail!(
        "{} {}: recipe {} is {kind} recipe, and no step of its run reads {} ({option}: \
         {instead}); leave {} out",
        all.join(", "),
        if all.len() == 1 {
            "does not apply"
        } else {
            "do not apply"
        },
        recipe.display(),
        if all.len() == 1 { "it" } else { "them" },
        if all.len() == 1 { "it" } else { "them" },
    )
}

/// Refuses a `--compare-llvm` that has nothing to compare, before anything is made.
fn check_compare(recipe: &Recipe, o: &Overrides, other: Llvm) -> anyhow::Result<()> {
    let choice = recipe.build.compiler.with_llvm(o.llvm)?;
    let (this, _) = choice.commands();
    if !choice.is_clang() {
        anyhow::bail!(
            "--compare-llvm {}: the recipe builds with \"{choice}\" ([build] compiler); \
             --compare-llvm compares clang builds",
            other.major
        );
    }
    if this == other.clang() {
        anyhow::bail!(
            "--compare-llvm {}: the run already uses {this}; name another release (--llvm \
             picks the run's own)",
            other.major
        );
    }
    if o.cc.is_some() || o.cxx.is_some() || o.profdata.is_some() || o.profgen.is_some() {
        anyhow::bail!(
            "--compare-llvm {}: --cc, --cxx, --llvm-profdata and --llvm-profgen name one \
             release's tools; leave them out to compare two releases",
            other.major
        );
    }
    Ok(())
}

/// The other release's run of `--compare-llvm` (checked by [`check_compare`]): baseline
/// and autofdo, with that release's tools, into `OUT/llvm-N`, as `main` records and
/// counts.
fn against_plan(
    recipe: Recipe,
    path: &Path,
    main: &Options,
    o: Overrides,
    other: Llvm,
) -> anyhow::Result<Options> {
    let o = Overrides {
        llvm: Some(other),
        compare_llvm: None,
        variants: Some(Variant::Autofdo.name().to_string()),
        output: Some(main.out.join(format!("llvm-{}", other.major))),
        heatmaps: false,
        ..o
    };
    program_plan(recipe, path, o)
}

/// `path`: the recipe file as the user named it, for errors.
fn program_plan(recipe: Recipe, path: &Path, o: Overrides) -> anyhow::Result<Options> {
    let choice = recipe.build.compiler.with_llvm(o.llvm)?;
    let (default_cc, default_cxx) = choice.commands();
    let cc = o.cc.unwrap_or(default_cc);
    let cxx = o.cxx.unwrap_or(default_cxx);
    let compiler = compiler::resolve(choice, &cc)
        .map_err(|e| anyhow::anyhow!("recipe {}: {e}", path.display()))?;
    let llvm = compiler.llvm().unwrap_or_default();
    let target = recipe
        .build
        .target
        .as_deref()
        .map(Target::parse)
        .transpose()
        .map_err(|e| anyhow::anyhow!("recipe {}: {e}", path.display()))?;
    let kind = match target {
        Some(_) => BuildKind::CrossProgram,
        None => BuildKind::Program,
    };
    let variants = match o.variants.as_deref() {
        Some(list) => Variant::parse_list(list)?,
        None => Variant::with_bases(support::defaults(kind, compiler)),
    };
    support::check(&variants, kind, compiler).map_err(|e| anyhow::anyhow!("--variants {e}"))?;
    // What a cross build cannot do is refused before the output directory is made.
    if let Some(t) = &target {
        t.method(o.method)?;
        t.counters(o.counters)?;
    }
    let out_named = o
        .output
        .clone()
        .unwrap_or_else(|| default_output(&recipe.name));
    if let Some(src) = &recipe.source.path {
        refuse_output_inside(&out_named, &recipe.dir.join(src), path)?;
    }
    let out = output_dir::claim(&out_named, path)?;
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
        profdata: o.profdata.unwrap_or_else(|| llvm.profdata()),
        profgen: o.profgen.unwrap_or_else(|| llvm.profgen()),
        jobs: jobs(o.jobs),
        quiet: o.quiet,
        heatmaps: o.heatmaps,
        against: None,
    })
}

fn kernel_plan(recipe: KernelRecipe, o: Overrides) -> anyhow::Result<KernelOptions> {
    let recipe = match o.llvm {
        Some(l) => recipe.with_llvm(l)?,
        None => recipe,
    };
    let llvm = recipe.compiler()?.llvm().unwrap_or_default();
    let default = recipe.default_variants().join(",");
    let variants = KernelVariant::parse_list(o.variants.as_deref().unwrap_or(&default), &recipe)?;
    let recipe_has_uml = recipe.uml.is_some();
    let out = output_dir::claim(
        &o.output
            .clone()
            .unwrap_or_else(|| default_output(&recipe.name)),
        &recipe.path,
    )?;
    Ok(KernelOptions {
        recipe,
        variants,
        period: o.period,
        boots: o.boots,
        out,
        kfdo_exe: o.kfdo_exe,
        profgen: o.profgen.unwrap_or_else(|| llvm.profgen()),
        jobs: jobs(o.jobs),
        quiet: o.quiet,
        heatmaps: o.heatmaps,
        packages: o.packages,
        uml: o.uml && recipe_has_uml,
        kvm: o.kvm,
    })
}

/// Where the results go without `-o`: `kfdo-optimize/NAME` in the current directory.
fn default_output(recipe_name: &str) -> PathBuf {
    PathBuf::from("kfdo-optimize").join(recipe_name)
}

/// Refuses an output directory inside the recipe's source tree: every build copies
/// and every key hashes that tree, so the results of one run would change the source
/// of the next and every rerun would rebuild every variant. Refused rather than left
/// out of the hash, so the source tree stays what the recipe names.
fn refuse_output_inside(out: &Path, src: &Path, recipe: &Path) -> anyhow::Result<()> {
    let Ok(src) = std::fs::canonicalize(src) else {
        // A missing source is said by the source step, naming the recipe.
        return Ok(());
    };
    let out = resolved(out)?;
    if out.starts_with(&src) {
        anyhow::bail!(
            "the output directory {} is inside the source tree {} (`[source] path` of recipe \
             {}): each run's results would change the source the next run hashes, and \
             every variant would be rebuilt every time; kfdo optimize refuses it (the output \
             is not left out of the source's hash): give an output directory outside the \
             source with -o DIR",
            out.display(),
            src.display(),
            recipe.display()
        );
    }
    Ok(())
}

/// `p` made absolute with its existing part's symbolic links resolved, without
/// creating anything.
fn resolved(p: &Path) -> anyhow::Result<PathBuf> {
    let abs = std::path::absolute(p)
        .with_context(|| format!("cannot resolve the output directory {}", p.display()))?;
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return Ok(abs),
        }
    }
    let mut out = std::fs::canonicalize(existing)?;
    out.extend(rest.iter().rev());
    Ok(out)
}

/// `--jobs`, or one per CPU.
fn jobs(requested: Option<usize>) -> usize {
    requested.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
