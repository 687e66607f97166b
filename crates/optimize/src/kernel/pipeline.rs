//! The order of the kernel steps:
//!
//! ```text
//! kernel source -> configure base -> configure VARIANT (each)
//! build initramfs
//! build baseline -> record training run -> profile kfdo ------------> build autofdo, autofdo+thinlto, ...
//!                                       \-> profile llvm-profgen ---> build autofdo-llvm-profgen
//! autofdo+thinlto (with the BB address map) -> record training run -> profile propeller
//!                                           -> build autofdo+thinlto+propeller
//! all kernels -> benchmark (boots, interleaved) -> record eval (heat maps)
//! with [uml]: configure uml base -> configure + build uml VARIANT (each twin, its variant's
//!             profile) -> benchmark uml (native boots, interleaved)
//! report -> packages
//! ```
//! Kernel builds run one at a time, each with all the jobs (kbuild parallelizes better
//! than two builds side by side on few cores).

use std::path::{Path, PathBuf};

use std::time::Duration;

use anyhow::{bail, Context};
use kfdo_record::kvm::KvmStatus;

use super::build::BuiltKernel;
use super::counters_vs_time;
use super::ctx::{KernelCtx, KernelOptions};
use super::judge::Contender;
use super::recipe::KernelRecipe;
use super::source::KernelSource;
use super::summary;
use super::train::KernelRecording;
use super::uml::{self, twin::twin_of};
use super::variant::{fdo_of, Fdo, PropellerRole, PROPELLER_BASE};
use crate::steps::agree::{profiles_agree, tool_name};
use crate::steps::{ProfileFile, Steps};
use crate::vocabulary::CompileProfile;

pub struct KernelOutcome {
    pub summary: String,
    pub summary_path: PathBuf,
    pub report: PathBuf,
    pub packages: Vec<PathBuf>,
}

/// Whether this run boots its kernels under KVM: asked for, an x86_64 kernel on an
/// x86_64 host, and a KVM that runs a standard guest (`kfdo_record::kvm::probe`).
fn kvm_status(o: &KernelOptions) -> KvmStatus {
    if !o.kvm {
        return KvmStatus::Absent {
            reason: "--no-kvm".into(),
        };
    }
    if !super::step_list::kvm_possible(&o.recipe) {
        return KvmStatus::Absent {
            reason: format!(
                "an {} kernel on an {} host",
                o.recipe.kernel.arch,
                std::env::consts::ARCH
            ),
        };
    }
    kfdo_record::kvm::probe(Duration::from_secs(5))
}

pub fn run(opts: KernelOptions) -> anyhow::Result<KernelOutcome> {
    let compilers: Vec<String> = {
        let mut c: Vec<String> = opts.variants.iter().map(|v| v.compiler.command()).collect();
        c.push(opts.recipe.kernel.compiler.to_string());
        c.sort();
        c.dedup();
        c
    };
    let tools: Vec<&str> = compilers.iter().map(String::as_str).collect();
    let kvm = kvm_status(&opts);
    let steps = Steps::new(
        &opts.out,
        &tools,
        &opts.kfdo_exe,
        super::step_list::step_list(&super::step_list::Shape::of(&opts, kvm.works())),
        opts.quiet,
    )?;
    let ctx = KernelCtx {
        recipe: opts.recipe.clone(),
        opts,
        steps,
        kvm,
    };
    run_steps(&ctx)
}

/// The profiles of the baseline's training run.
struct Trained {
    baseline: BuiltKernel,
    kfdo: ProfileFile,
    /// kfdo's profile of the vmlinux alone (the same file without modules): the one to
    /// hold against llvm-profgen's.
    kfdo_vmlinux: PathBuf,
    /// llvm-profgen's; None for a GCC kernel (it writes LLVM's profiles only).
    profgen: Option<ProfileFile>,
}

fn run_steps(ctx: &KernelCtx) -> anyhow::Result<KernelOutcome> {
    let r = &ctx.recipe;
    let o = &ctx.opts;
    let names: Vec<&str> = o.variants.iter().map(|v| v.name.as_str()).collect();
    ctx.say_header("kernel recipe", &r.name, &r.path, &names, &[]);
    let src = ctx.kernel_source()?;
    check_fdo_route(ctx, &src)?;
    let base = ctx.base_config(&src)?;
    let configs = o
        .variants
        .iter()
        .map(|v| ctx.variant_config(&src, &base, v))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let workload = ctx.workload_initramfs()?;
    let trained = train(ctx, &src, &configs[0], &workload)?;
    let mut notes = vec![training_note(r, &src)];
    if let Some(p) = &trained.profgen {
        // llvm-profgen reads the vmlinux only: the comparison leaves the modules out.
        notes.push(profiles_agree(
            &trained.kfdo_vmlinux,
            &p.path,
            tool_name(&ctx.opts.profgen),
        ));
    }
    let kernels = build_variants(ctx, &src, &base, &configs, &workload, &trained)?;
    for k in &kernels {
        notes.extend(k.notes.iter().cloned());
    }
    let contenders = kernels
        .iter()
        .map(|k| {
            Ok(Contender {
                initrd: ctx.variant_initramfs(&workload, k)?,
                kernel: k.clone(),
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let db = ctx.judge(&contenders)?;
    let heat = record_heat(ctx, &contenders)?;
    let mut native = if o.uml {
        native_time(ctx, &src, &workload, &trained)?
    } else {
        String::new()
    };
    let judged = counters_vs_time::Judged {
        uml: o.uml,
        kvm: ctx.kvm.why_not().is_none(),
    };
    match ctx.kvm.why_not() {
        None => {
            let boots = r.benches.iter().map(|b| ctx.boots(b)).min().unwrap_or(1);
            let db = ctx.judge_kvm(&contenders, boots)?;
            native.push_str(&summary::kvm_section(&db)?);
        }
        Some(why) => notes.push(format!(
            "real time under KVM: not measured ({why}); the times here are emulated{}",
            if o.uml {
                ", and native for the User-Mode Linux twins"
            } else {
                ""
            }
        )),
    }
    let (report, spans) = ctx.kernel_report(&db, &heat)?;
    judged.write(&ctx.dir(""))?;
    let points = counters_vs_time::points(&r.name, &ctx.dir(""), judged)?;
    let page = ctx.dir("report").join("counters-vs-time.html");
    if points.is_empty() {
        // A cached report step keeps its directory: an earlier run's page is not this one's.
        counters_vs_time::remove_page(&page)?;
    } else {
        counters_vs_time::write_page(
            &page,
            &format!("{}: counters against time", r.name),
            &points,
        )?;
        native.push_str(&counters_vs_time::section(&points, &page));
    }
    let config_diffs: Vec<(String, String)> = o
        .variants
        .iter()
        .zip(&configs)
        .skip(1)
        .map(|(v, c)| (v.name.clone(), ctx.config_diff(&src, &base.0, &c.0)))
        .collect();
    let packages = if o.packages {
        package_winner(ctx, &src, &db, &kernels, &mut notes)?
    } else {
        Vec::new()
    };
    let title = format!("{} (Linux {})", r.name, src.release);
    let summary = summary::render(
        &db,
        &title,
        &notes,
        &spans,
        &config_diffs,
        &ctx.timing_table(),
        &native,
    )?;
    let summary_path = ctx.write_summary(&summary)?;
    Ok(KernelOutcome {
        summary,
        summary_path,
        report,
        packages,
    })
}

/// `fdo = "kconfig"` needs a kernel with CONFIG_AUTOFDO_CLANG for its clang variants.
fn check_fdo_route(ctx: &KernelCtx, src: &KernelSource) -> anyhow::Result<()> {
    if fdo_of(&ctx.recipe) == Fdo::Kconfig
        && !src.has_autofdo_kconfig
        && ctx.opts.variants.iter().any(|v| v.is_clang())
    {
        bail!(
            "Linux {} has no CONFIG_AUTOFDO_CLANG (it came in 6.13), so `fdo = \"kconfig\"` \
             cannot build its AutoFDO variants; use `fdo = \"kcflags\"`, which passes the same \
             flags through KCFLAGS (see recipes/linux-6.1/recipe.toml)",
            src.release
        );
    }
    Ok(())
}

/// The baseline: built, booted with the training workload, recorded; kfdo's profile,
/// and llvm-profgen's of the same recording (the reference, and the check that the
/// two agree).
fn train(
    ctx: &KernelCtx,
    src: &KernelSource,
    config: &(PathBuf, String),
    workload: &(PathBuf, String),
) -> anyhow::Result<Trained> {
    let r = &ctx.recipe;
    let baseline = ctx.build_kernel(src, &ctx.opts.variants[0], config, None, None)?;
    let initrd = ctx.variant_initramfs(workload, &baseline)?;
    let training = ctx.record_boot(&baseline, &initrd, &r.workload.train, "training run")?;
    let gcc = r.compiler()?.gcc_major();
    let (kfdo, kfdo_vmlinux) = ctx.kernel_profile_kfdo(&baseline, &training, gcc)?;
    let profgen = match gcc {
        None => Some(ctx.kernel_profile_llvm_profgen(&baseline, &training)?),
        Some(_) => None,
    };
    Ok(Trained {
        baseline,
        kfdo,
        kfdo_vmlinux,
        profgen,
    })
}

/// What the training was, in words, for the summary.
fn training_note(r: &KernelRecipe, src: &KernelSource) -> String {
    format!(
        "Linux {} ({}), {} configuration{}; training: kfdo.run={} on the baseline, recorded \
         with kfdo's emulated LBR in the workload's window, kernel only",
        src.release,
        r.kernel.source,
        r.kernel.config,
        if r.kernel.fragments.is_empty() {
            String::new()
        } else {
            format!(
                " + {}",
                r.kernel
                    .fragments
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        r.workload.train
    )
}

/// Every kernel, the baseline first, the others built one at a time with their
/// profiles (a gcov-trained one trained first, the Propeller one from a recording of
/// the mapped kernel before it).
fn build_variants(
    ctx: &KernelCtx,
    src: &KernelSource,
    base: &(PathBuf, String),
    configs: &[(PathBuf, String)],
    workload: &(PathBuf, String),
    trained: &Trained,
) -> anyhow::Result<Vec<BuiltKernel>> {
    let r = &ctx.recipe;
    let mut kernels = vec![trained.baseline.clone()];
    for (v, config) in ctx.opts.variants.iter().zip(configs).skip(1) {
        if v.bolt {
            // parse_list puts the kernel it rewrites before this one.
            let base = kernels
                .iter()
                .find(|k| k.variant == PROPELLER_BASE)
                .context("internal: the autofdo+thinlto kernel was not built")?;
            let initrd = ctx.variant_initramfs(workload, base)?;
            let bolted = ctx.build_bolt_kernel(v, base, &initrd)?;
            kernels.push(bolted);
            continue;
        }
        let counts;
        let profile = match v.profile {
            CompileProfile::None => None,
            CompileProfile::Kfdo => Some(&trained.kfdo),
            CompileProfile::LlvmProfgen => trained.profgen.as_ref(),
            CompileProfile::Instrumented => {
                counts = ctx.train_gcov(src, base, v, workload)?;
                Some(&counts)
            }
        };
        let p = profile.map(|p| (p.path.as_path(), p.hash.as_str()));
        let propeller = match v.propeller {
            PropellerRole::Optimized => {
                // parse_list puts the mapped kernel before this one.
                let mapped = kernels
                    .iter()
                    .find(|k| k.variant == PROPELLER_BASE)
                    .context("internal: the mapped autofdo+thinlto kernel was not built")?;
                let initrd = ctx.variant_initramfs(workload, mapped)?;
                let rec = ctx.record_boot(
                    mapped,
                    &initrd,
                    &r.workload.train,
                    &format!("{PROPELLER_BASE} training run"),
                )?;
                Some(ctx.kernel_profile_propeller(mapped, &rec)?)
            }
            _ => None,
        };
        let pp = propeller
            .as_ref()
            .map(|p| (p.path.as_path(), p.hash.as_str()));
        kernels.push(ctx.build_kernel(src, v, config, p, pp)?);
    }
    Ok(kernels)
}

/// The User-Mode Linux twins of the variants that have one, built from their variants'
/// profiles and judged in native time: the summary's section.
fn native_time(
    ctx: &KernelCtx,
    src: &KernelSource,
    workload: &(PathBuf, String),
    trained: &Trained,
) -> anyhow::Result<String> {
    let base = ctx.uml_base_config(src)?;
    let mut twins = Vec::new();
    let mut no_twin = Vec::new();
    for v in &ctx.opts.variants {
        let twin = match twin_of(v) {
            Ok(t) => t,
            Err(why) => {
                no_twin.push((v.name.clone(), why));
                continue;
            }
        };
        let profile = match twin.profile {
            CompileProfile::Kfdo => Some(&trained.kfdo),
            CompileProfile::LlvmProfgen => trained.profgen.as_ref(),
            _ => None,
        };
        let p = profile.map(|p| (p.path.as_path(), p.hash.as_str()));
        twins.push(ctx.build_uml(src, &base, &twin, p)?);
    }
    // The workload's initramfs without modules: the twins have them built in.
    let db = ctx.judge_uml(&twins, workload)?;
    let coverage = if ctx
        .opts
        .variants
        .iter()
        .any(|v| v.profile == CompileProfile::Kfdo)
    {
        Some(uml::coverage::coverage(
            &trained.kfdo.path,
            &trained.baseline.dir,
            &twins[0].exe,
        )?)
    } else {
        None
    };
    uml::summary::section(
        &db,
        &uml::summary::NativeNotes {
            boots: ctx.uml_boots(),
            no_twin,
            left_out: base.left_out,
            coverage,
        },
    )
}

/// Heat maps of the first evaluation workload: the baseline and each profiled kernel,
/// recorded once more.
fn record_heat(
    ctx: &KernelCtx,
    contenders: &[Contender],
) -> anyhow::Result<Vec<(BuiltKernel, KernelRecording)>> {
    let o = &ctx.opts;
    let mut heat = Vec::new();
    if !o.heatmaps {
        return Ok(heat);
    }
    let eval = &ctx.recipe.benches[0].run;
    for c in contenders
        .iter()
        .filter(|c| c.kernel.variant == "baseline" || profiled(o, &c.kernel.variant))
    {
        let rec = ctx.record_boot(
            &c.kernel,
            &c.initrd,
            eval,
            &format!("{} evaluation", c.kernel.variant),
        )?;
        heat.push((c.kernel.clone(), rec));
    }
    Ok(heat)
}

/// The packages of the winning variant, said in `notes`.
fn package_winner(
    ctx: &KernelCtx,
    src: &KernelSource,
    db: &Path,
    kernels: &[BuiltKernel],
    notes: &mut Vec<String>,
) -> anyhow::Result<Vec<PathBuf>> {
    let Some(w) = summary::winner(db)? else {
        notes.push(
            "no variant took significantly fewer kernel branches than the baseline: no packages"
                .into(),
        );
        return Ok(Vec::new());
    };
    let k = kernels
        .iter()
        .find(|k| k.variant == w)
        .context("the winner was built")?;
    if !k.boot_args.is_empty() {
        notes.push(format!(
            "the winning variant '{w}' is not packaged: its boot image was remade from \
             llvm-bolt's vmlinux outside kbuild, which `make bindeb-pkg` would rebuild \
             from the sources (and it needs `{}` on the kernel's command line)",
            k.boot_args
        ));
        return Ok(Vec::new());
    }
    let packages = ctx.package(src, k)?;
    notes.push(format!(
        "packages of the winning variant '{w}' (fewest kernel taken branches, \
         significantly below the baseline): {}",
        packages
            .iter()
            .map(|p| p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Ok(packages)
}

/// `Some(release)` for a GCC compiler (`gcc-12`: Some(12); `gcc`: None, the one on
/// PATH), None for clang.
fn profiled(o: &KernelOptions, name: &str) -> bool {
    o.variants
        .iter()
        .any(|v| v.name == name && v.profile != CompileProfile::None)
}
