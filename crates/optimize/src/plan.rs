//! One checked plan from a recipe path and the command line's overrides: the recipe
//! is read once, tells whether it is a program's or a kernel's, and every option is
//! checked here, before the output directory is made, so a pipeline runs only what
//! was refused nowhere.

use std::path::{Path, PathBuf};

use anyhow::Context;
use kfdo_bench::counters::Choice;
use kfdo_record::hardware::Method;
use kfdo_toolchain::Llvm;

use crate::kernel::{self, KernelOptions, KernelRecipe, KernelVariant};
use crate::program::{self, compiler, target::Target, Options, Recipe};
use crate::steps::recipe_file::read_text;
use crate::steps::{output_dir, Opt, StepList};
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
        if KernelRecipe::is_kernel_recipe(&text) {
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

/// The options of `o` that the user gave (a `--no-...` flag given is its option read).
fn given(o: &Overrides) -> Vec<Opt> {
    [
        (o.runs.is_some(), Opt::Runs),
        (o.boots.is_some(), Opt::Boots),
        (o.method.is_some(), Opt::Method),
        (o.period.is_some(), Opt::Period),
        (o.counters != Choice::Auto, Opt::Counters),
        (o.cc.is_some(), Opt::Cc),
        (o.cxx.is_some(), Opt::Cxx),
        (o.profdata.is_some(), Opt::LlvmProfdata),
        (o.profgen.is_some(), Opt::LlvmProfgen),
        (!o.packages, Opt::NoPackages),
        (!o.uml, Opt::NoUml),
        (!o.kvm, Opt::NoKvm),
    ]
    .into_iter()
    .filter_map(|(given, opt)| given.then_some(opt))
    .collect()
}

/// Why no step of a run reads `opt`, and what to do instead.
fn unread_because(opt: Opt, kernel: bool) -> &'static str {
    match (opt, kernel) {
        (Opt::Runs, true) => "a kernel is judged in boots: --boots N",
        (Opt::Boots, false) => "a program is judged in timed runs: --runs N",
        (Opt::Method, true) => "a kernel's training run is recorded under emulation, in the guest",
        (Opt::Counters, true) => "a kernel's counters are the emulated guest's own",
        (Opt::Cc | Opt::Cxx | Opt::LlvmProfdata, true) => {
            "a kernel is built by kbuild with the recipe's compiler (--llvm N picks the LLVM \
             release)"
        }
        (Opt::NoPackages | Opt::NoUml | Opt::NoKvm, false) => "it applies to kernel recipes",
        (Opt::NoUml, true) => "the recipe has no [uml] table, so no twins are built",
        (Opt::NoKvm, true) => "only an x86_64 kernel on an x86_64 host boots under KVM",
        (Opt::Method | Opt::Period, false) => {
            "with these variants and no heat maps, no training run is recorded"
        }
        (Opt::Period, true) => "no kernel is recorded",
        (Opt::LlvmProfgen, _) => {
            "no profile of this run is llvm-profgen's (autofdo-llvm-profgen is not built)"
        }
        (Opt::LlvmProfdata, false) => {
            "no instrumented clang build is trained (ifdo is not built with clang)"
        }
        _ => "no step of this run reads it",
    }
}

/// Refuses, by name and before any work, an option that no step of the run's plan
/// reads: `--runs` on a kernel recipe or `--boots` on a program's would otherwise be
/// ignored in silence, and the run would not be the one asked for.
fn refuse_unread(
    given: &[Opt],
    plan: &StepList,
    kernel: bool,
    recipe: &Path,
) -> anyhow::Result<()> {
    let read = plan.reads();
    let unread: Vec<Opt> = given
        .iter()
        .copied()
        .filter(|g| !read.contains(g))
        .collect();
    let Some(first) = unread.first() else {
        return Ok(());
    };
    let all: Vec<&str> = unread.iter().map(|o| o.flag()).collect();
    let one = all.len() == 1;
    anyhow::bail!(
        "{} {}: recipe {} is {} recipe, and no step of its run reads {} ({}: {}); leave {} out",
        all.join(", "),
        if one {
            "does not apply"
        } else {
            "do not apply"
        },
        recipe.display(),
        if kernel { "a kernel" } else { "a program" },
        if one { "it" } else { "them" },
        first.flag(),
        unread_because(*first, kernel),
        if one { "it" } else { "them" },
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
    let given = given(&o);
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
    let plan = program::step_list::step_list(&program::step_list::Shape {
        recipe: &recipe,
        variants: &variants,
        compiler,
        heatmaps: o.heatmaps,
    });
    refuse_unread(&given, &plan, false, path)?;
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
    // The plan without KVM: whether KVM works here is probed when the run starts, and
    // adds a step that reads no option of its own (`--boots`, which the benchmark reads).
    let plan = kernel::step_list::step_list(&kernel::step_list::Shape {
        recipe: &recipe,
        variants: &variants,
        heatmaps: o.heatmaps,
        packages: o.packages,
        uml: o.uml && recipe_has_uml,
        kvm: false,
    });
    refuse_unread(&given(&o), &plan, true, &recipe.path)?;
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

#[cfg(test)]
mod tests {
    //! The step list of every bundled recipe, made as a run would make it but without
    //! running a compiler or making an output directory.

    use super::*;
    use crate::vocabulary::{support, BuildKind, Compiler};

    fn bundled() -> Vec<PathBuf> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../recipes");
        let mut r: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path().join("recipe.toml"))
            .filter(|p| p.is_file())
            .collect();
        r.sort();
        r
    }

    /// The default run's steps of the recipe at `path`, heat maps and packages on.
    fn default_steps(path: &Path) -> StepList {
        let text = read_text(path).unwrap();
        if KernelRecipe::is_kernel_recipe(&text) {
            let r = KernelRecipe::from_text(path, &text).unwrap();
            let variants = KernelVariant::parse_list(&r.default_variants().join(","), &r).unwrap();
            kernel::step_list::step_list(&kernel::step_list::Shape {
                recipe: &r,
                variants: &variants,
                heatmaps: true,
                packages: true,
                uml: r.uml.is_some(),
                kvm: false,
            })
        } else {
            let r = Recipe::from_text(path, &text).unwrap();
            // The gcc on PATH builds what GCC builds; its release does not change the steps.
            let compiler = r.build.compiler.compiler().unwrap_or(Compiler::GCC);
            let kind = match r.build.target {
                Some(_) => BuildKind::CrossProgram,
                None => BuildKind::Program,
            };
            let variants = Variant::with_bases(support::defaults(kind, compiler));
            program::step_list::step_list(&program::step_list::Shape {
                recipe: &r,
                variants: &variants,
                compiler,
                heatmaps: true,
            })
        }
    }

    #[test]
    fn every_bundled_recipe_plans_its_builds_a_benchmark_and_a_report() {
        let recipes = bundled();
        assert!(recipes.len() >= 8, "{recipes:?}");
        for path in recipes {
            let steps = default_steps(&path);
            let names = steps.names();
            eprintln!("{}:\n  {}", path.display(), names.join("\n  "));
            assert!(names.contains(&"build baseline"), "{names:?}");
            assert!(names.contains(&"benchmark"), "{names:?}");
            // A kernel's packages come after its report; a program's run ends with it.
            let last = if steps.reads().contains(&Opt::NoPackages) {
                "packages"
            } else {
                "report"
            };
            assert_eq!(names.last(), Some(&last), "{names:?}");
            let builds = names.iter().filter(|n| n.starts_with("build ")).count();
            assert!(builds >= 3, "{}: {names:?}", path.display());
        }
    }

    #[test]
    fn sqlite3_and_linux_resolve_to_these_steps() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../recipes");
        assert_eq!(
            default_steps(&root.join("sqlite3/recipe.toml")).names(),
            [
                "source",
                "prepare",
                "build baseline",
                "build ifdo-instrumented",
                "train ifdo",
                "record training run",
                "profile kfdo",
                "profile llvm-profgen",
                "build autofdo",
                "build autofdo-llvm-profgen",
                "build ifdo",
                "build autofdo+thinlto",
                "benchmark",
                "record autofdo (for its heat map)",
                "report",
            ]
        );
        assert_eq!(
            default_steps(&root.join("linux/recipe.toml")).names(),
            [
                "kernel source",
                "configure base",
                "configure baseline",
                "configure autofdo",
                "configure autofdo+thinlto",
                "build initramfs",
                "build baseline",
                "initramfs baseline",
                "record training run",
                "profile kfdo",
                "profile llvm-profgen",
                "build autofdo",
                "build autofdo+thinlto",
                "initramfs autofdo",
                "initramfs autofdo+thinlto",
                "benchmark",
                "record baseline evaluation",
                "record autofdo evaluation",
                "record autofdo+thinlto evaluation",
                "configure uml base",
                "configure uml baseline",
                "build uml baseline",
                "configure uml autofdo",
                "build uml autofdo",
                "configure uml autofdo+thinlto",
                "build uml autofdo+thinlto",
                "benchmark uml",
                "report",
                "packages",
            ]
        );
    }

    #[test]
    fn the_layout_kernels_plan_their_base_recordings() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/kernel/autofdo-recipe/recipe.toml");
        let r = KernelRecipe::load(&path).unwrap();
        let variants =
            KernelVariant::parse_list("autofdo+thinlto+propeller,autofdo+thinlto+bolt", &r)
                .unwrap();
        let steps = kernel::step_list::step_list(&kernel::step_list::Shape {
            recipe: &r,
            variants: &variants,
            heatmaps: false,
            packages: false,
            uml: false,
            kvm: false,
        });
        // The order optimize_kernel_propeller's run takes them in.
        assert_eq!(
            steps.names(),
            [
                "kernel source",
                "configure base",
                "configure baseline",
                "configure autofdo+thinlto",
                "configure autofdo+thinlto+propeller",
                "configure autofdo+thinlto+bolt",
                "build initramfs",
                "build baseline",
                "initramfs baseline",
                "record training run",
                "profile kfdo",
                "profile llvm-profgen",
                "build autofdo+thinlto",
                "initramfs autofdo+thinlto",
                "record autofdo+thinlto training run",
                "profile propeller",
                "build autofdo+thinlto+propeller",
                "record autofdo+thinlto training run for BOLT",
                "bolt autofdo+thinlto+bolt",
                "initramfs autofdo+thinlto+propeller",
                "initramfs autofdo+thinlto+bolt",
                "benchmark",
                "report",
            ]
        );
    }

    #[test]
    fn the_options_a_run_reads_are_its_steps_options() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../recipes");
        let program = default_steps(&root.join("sqlite3/recipe.toml")).reads();
        for o in [
            Opt::Runs,
            Opt::Counters,
            Opt::Method,
            Opt::Period,
            Opt::Cc,
            Opt::LlvmProfdata,
            Opt::LlvmProfgen,
        ] {
            assert!(program.contains(&o), "{o:?}");
        }
        for o in [Opt::Boots, Opt::NoPackages, Opt::NoUml, Opt::NoKvm] {
            assert!(!program.contains(&o), "{o:?}");
        }
        let kernel = default_steps(&root.join("linux/recipe.toml")).reads();
        for o in [
            Opt::Boots,
            Opt::Period,
            Opt::NoPackages,
            Opt::NoUml,
            Opt::LlvmProfgen,
        ] {
            assert!(kernel.contains(&o), "{o:?}");
        }
        for o in [
            Opt::Runs,
            Opt::Method,
            Opt::Counters,
            Opt::Cc,
            Opt::Cxx,
            Opt::LlvmProfdata,
        ] {
            assert!(!kernel.contains(&o), "{o:?}");
        }
        // A GCC kernel has no llvm-profgen profile to make.
        let gcc = default_steps(&root.join("linux-gcc/recipe.toml")).reads();
        assert!(!gcc.contains(&Opt::LlvmProfgen));
    }
}
