//! The order of the kernel steps:
//!
//! ```text
//! kernel source -> configure base -> configure VARIANT (each)
//! build initramfs
//! build baseline -> record training run -> profile kfdo ------------> build autofdo, autofdo+thinlto, ...
//!                                       \-> profile llvm-profgen ---> build autofdo-llvm-profgen
//! autofdo+thinlto (with the BB address map) -> record training run -> profile propeller
//!                                           -> build autofdo+thinlto+propeller
//! all kernels -> benchmark (boots, interleaved) -> record eval (heat maps) -> report -> packages
//! ```
//! Kernel builds run one at a time, each with all the jobs (kbuild parallelizes better
//! than two builds side by side on few cores).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::boot::Boot;
use super::build::BuiltKernel;
use super::judge::Contender;
use super::summary::{self, Span};
use super::variant::{fdo_of, Fdo, KernelProfile, PropellerRole, PROPELLER_BASE};
use super::{KernelCtx, KernelOptions};
use crate::cache::Key;
use crate::ctx::Steps;
use crate::train::ProfileFile;

pub struct KernelOutcome {
    pub summary: String,
    pub summary_path: PathBuf,
    pub report: PathBuf,
    pub packages: Vec<PathBuf>,
}

fn count_steps(o: &KernelOptions) -> usize {
    let n = o.variants.len();
    // The heat maps' recordings: the baseline's and each profiled variant's.
    let heat = if o.heatmaps {
        1 + o
            .variants
            .iter()
            .filter(|v| v.profile != KernelProfile::None)
            .count()
    } else {
        0
    };
    // With modules, each kernel's own initramfs: the baseline's for training, then one
    // per contender (the baseline's again, cached).
    let module_initramfs = if o.recipe.workload.modules.is_empty() {
        0
    } else {
        n + 1
    };
    // Propeller: the mapped kernel's training record (and its initramfs) and profile.
    let propeller = if o
        .variants
        .iter()
        .any(|v| v.propeller == PropellerRole::Optimized)
    {
        2 + usize::from(!o.recipe.workload.modules.is_empty())
    } else {
        0
    };
    // gcov kernel PGO: the instrumented kernel's configuration, build, initramfs (with
    // modules) and training run.
    let gcov = if o
        .variants
        .iter()
        .any(|v| v.profile == KernelProfile::Instrumented)
    {
        3 + usize::from(!o.recipe.workload.modules.is_empty())
    } else {
        0
    };
    // source, base config, initramfs, per variant config + build, training record,
    // 2 profiles, benchmark, heat-map recordings, report, packages
    3 + 2 * n + module_initramfs + 1 + 2 + propeller + gcov + 1 + heat + 1 + usize::from(o.packages)
}

pub fn run(opts: KernelOptions) -> anyhow::Result<KernelOutcome> {
    let compilers: Vec<String> = {
        let mut c: Vec<String> = opts.variants.iter().map(|v| v.compiler.clone()).collect();
        c.push(opts.recipe.kernel.compiler.clone());
        c.sort();
        c.dedup();
        c
    };
    let tools: Vec<&str> = compilers.iter().map(String::as_str).collect();
    let steps = Steps::new(
        &opts.out,
        &tools,
        &opts.kfdo_exe,
        count_steps(&opts),
        opts.quiet,
    )?;
    let ctx = KernelCtx {
        recipe: opts.recipe.clone(),
        opts,
        steps,
    };
    run_steps(&ctx)
}

fn run_steps(ctx: &KernelCtx) -> anyhow::Result<KernelOutcome> {
    let r = &ctx.recipe;
    let o = &ctx.opts;
    ctx.progress.say(format!(
        "kfdo optimize: kernel recipe '{}' ({}) -> {}",
        r.name,
        r.path.display(),
        o.out.display()
    ));
    ctx.progress.say(format!(
        "  variants: {}; logs in {}",
        o.variants
            .iter()
            .map(|v| v.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        ctx.logs.display()
    ));

    let src = ctx.kernel_source()?;
    if fdo_of(r) == Fdo::Kconfig
        && !src.has_autofdo_kconfig
        && o.variants.iter().any(|v| v.is_clang())
    {
        bail!(
            "Linux {} has no CONFIG_AUTOFDO_CLANG (it came in 6.13), so `fdo = \"kconfig\"` \
             cannot build its AutoFDO variants; use `fdo = \"kcflags\"`, which passes the same \
             flags through KCFLAGS (see recipes/linux-6.1/recipe.toml)",
            src.release
        );
    }
    let base = ctx.base_config(&src)?;
    let mut configs = Vec::new();
    for v in &o.variants {
        configs.push(ctx.variant_config(&src, &base, v)?);
    }
    let workload = ctx.workload_initramfs()?;

    // The baseline: built, booted with the training workload, recorded.
    let baseline = ctx.build_kernel(&src, &o.variants[0], &configs[0], None, None)?;
    let base_initrd = ctx.variant_initramfs(&workload, &baseline)?;
    let training = ctx.record_boot(&baseline, &base_initrd, &r.workload.train, "training run")?;

    // kfdo's profile, and llvm-profgen-19's of the same recording: the reference, and
    // the check that the two agree.
    let gcc = gcc_release(&r.kernel.compiler);
    let (kfdo_profile, kfdo_vmlinux_profile) =
        ctx.kernel_profile_kfdo(&baseline, &training, gcc)?;
    // llvm-profgen writes LLVM's profiles only, which GCC does not read.
    let profgen_profile = match gcc {
        None => Some(ctx.kernel_profile_llvm_profgen(&baseline, &training)?),
        Some(_) => None,
    };
    let mut notes = vec![format!(
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
    )];
    if let Some(p) = &profgen_profile {
        // llvm-profgen reads the vmlinux only: the comparison leaves the modules out.
        notes.push(crate::pipeline::profiles_agree(
            &kfdo_vmlinux_profile,
            &p.path,
        ));
    }

    // The other variants, one build at a time.
    let mut kernels = vec![baseline.clone()];
    for (v, config) in o.variants.iter().zip(&configs).skip(1) {
        let counts;
        let profile = match v.profile {
            KernelProfile::None => None,
            KernelProfile::Kfdo => Some(&kfdo_profile),
            KernelProfile::LlvmProfgen => profgen_profile.as_ref(),
            KernelProfile::Instrumented => {
                counts = ctx.train_gcov(&src, &base, v, &workload)?;
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
                let initrd = ctx.variant_initramfs(&workload, mapped)?;
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
        kernels.push(ctx.build_kernel(&src, v, config, p, pp)?);
    }

    for k in &kernels {
        notes.extend(k.notes.iter().cloned());
    }
    let mut contenders = Vec::new();
    for k in &kernels {
        contenders.push(Contender {
            initrd: ctx.variant_initramfs(&workload, k)?,
            kernel: k.clone(),
        });
    }
    let db = ctx.judge(&contenders)?;

    // Heat maps of the first evaluation workload: the baseline and each profiled kernel.
    let mut heat = Vec::new();
    if o.heatmaps {
        let eval = &r.benches[0].run;
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
    }
    let (report, spans) = ctx.kernel_report(&db, &heat)?;

    let config_diffs: Vec<(String, String)> = o
        .variants
        .iter()
        .zip(&configs)
        .skip(1)
        .map(|(v, c)| (v.name.clone(), ctx.config_diff(&src, &base.0, &c.0)))
        .collect();

    let mut packages = Vec::new();
    if o.packages {
        match summary::winner(&db)? {
            Some(w) => {
                let k = kernels.iter().find(|k| k.variant == w).context("the winner was built")?;
                packages = ctx.package(&src, k)?;
                notes.push(format!(
                    "packages of the winning variant '{w}' (fewest kernel taken branches, \
                     significantly below the baseline): {}",
                    packages
                        .iter()
                        .map(|p| p.file_name().unwrap_or_default().to_string_lossy().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            None => notes.push(
                "no variant took significantly fewer kernel branches than the baseline: no packages".into(),
            ),
        }
    }

    let title = format!("{} (Linux {})", r.name, src.release);
    let summary = summary::render(
        &db,
        &title,
        &notes,
        &spans,
        &config_diffs,
        &ctx.timing_table(),
    )?;
    let summary_path = o.out.join("summary.md");
    std::fs::write(&summary_path, &summary)
        .with_context(|| format!("cannot write {}", summary_path.display()))?;
    ctx.progress.say(format!(
        "kfdo optimize: finished in {}",
        ctx.progress.elapsed()
    ));
    Ok(KernelOutcome {
        summary,
        summary_path,
        report,
        packages,
    })
}

/// `Some(release)` for a GCC compiler (`gcc-12`: Some(12); `gcc`: None, the one on
/// PATH), None for clang.
fn gcc_release(compiler: &str) -> Option<Option<u32>> {
    let rest = compiler.strip_prefix("gcc")?;
    Some(rest.strip_prefix('-').and_then(|v| v.parse().ok()))
}

fn profiled(o: &KernelOptions, name: &str) -> bool {
    o.variants
        .iter()
        .any(|v| v.name == name && v.profile != KernelProfile::None)
}

/// A kernel recording (perf.data) and its content hash.
pub struct KernelRecording {
    pub perf_data: PathBuf,
    pub hash: String,
}

impl KernelCtx {
    /// Boots `k` with `run` and records its kernel branches in the workload's window.
    pub fn record_boot(
        &self,
        k: &BuiltKernel,
        initrd: &(PathBuf, String),
        run: &str,
        what: &str,
    ) -> anyhow::Result<KernelRecording> {
        let dir = self.dir(&format!("record/{}", crate::cache::file_name(what)));
        let perf_data = dir.join("perf.data");
        let period = self.opts.period.unwrap_or(kfdo_record::DEFAULT_PERIOD);
        let step = format!("record {what}");
        let key = Key::new("kernel record")
            .add("kernel", &k.hash)
            .add("initrd", &initrd.1)
            .add("run", run)
            .add("period", period.to_string())
            .add("kfdo", &self.kfdo_version)
            // What a recording holds beyond kfdo's version: module maps with pgoff from
            // the start of kfdo's section layout.
            .add("format", "module maps: pgoff from the layout's start")
            .finish();
        let done = self.step(&step, key, std::slice::from_ref(&perf_data), |log| {
            crate::ctx::fresh_dir(&dir)?;
            let booted = self
                .boot(&Boot {
                    kernel: k,
                    initrd: &initrd.0,
                    run,
                    console: dir.join("console.txt"),
                    perf_data: Some(perf_data.clone()),
                    period,
                    counters: None,
                    gcov: false,
                })
                .map_err(|e| log.failed(format!("{e:#}")))?;
            for w in &booted.outcome.warnings {
                log.say(&format!("warning: {w}"));
            }
            log.say(&format!(
                "{} kernel samples at period {period}; {}",
                booted.outcome.samples,
                booted
                    .results
                    .iter()
                    .map(|w| format!("{} {:.1} ops/s", w.name, w.ops_per_s))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            if booted.outcome.samples == 0 {
                return Err(log.fail(
                    "no kernel samples in the workload's window: is the period too long for \
                     this workload? (--period)"
                        .into(),
                ));
            }
            Ok(serde_json::json!({ "samples": booted.outcome.samples }))
        })?;
        Ok(KernelRecording {
            hash: done.hash_of(&perf_data).to_string(),
            perf_data,
        })
    }

    /// kfdo's kernel AutoFDO profile of a recording of `k`, the workload's modules
    /// included: LLVM's extbinary, or for a GCC kernel (`gcc`: its major release) GCC's
    /// gcov format; and the path of its vmlinux-only twin (the same file when there are
    /// no modules, or for GCC), the one to hold against llvm-profgen's.
    pub fn kernel_profile_kfdo(
        &self,
        k: &BuiltKernel,
        rec: &KernelRecording,
        gcc: Option<Option<u32>>,
    ) -> anyhow::Result<(ProfileFile, PathBuf)> {
        let out = self.dir(if gcc.is_some() {
            "profiles/kfdo.gcov"
        } else {
            "profiles/kfdo.afdo"
        });
        let modules: Vec<PathBuf> = self
            .recipe
            .workload
            .modules
            .iter()
            .map(|m| k.dir.join(m))
            .collect();
        let vmlinux_only = if modules.is_empty() || gcc.is_some() {
            out.clone()
        } else {
            self.dir("profiles/kfdo-vmlinux.afdo")
        };
        let key = Key::new("kernel profile kfdo")
            .add("vmlinux", &k.hash)
            .add("perf.data", &rec.hash)
            .add("modules", format!("{modules:?}"))
            .add("gcc", format!("{gcc:?}"))
            .add("kfdo", &self.kfdo_hash)
            .finish();
        let outputs = [out.clone(), vmlinux_only.clone()];
        let done = self.step("profile kfdo", key, &outputs, |log| {
            std::fs::create_dir_all(out.parent().unwrap())?;
            let inputs = vec![kfdo_convert::Input::PerfData(rec.perf_data.clone())];
            let mut req = kfdo_convert::ProfileRequest {
                kernel: true,
                modules: modules.clone(),
                ..kfdo_convert::ProfileRequest::new(&k.vmlinux, inputs.clone(), &out)
            };
            if let Some(release) = gcc {
                req.format = kfdo_convert::OutputFormat::Gcov;
                req.gcc_version = release;
            }
            let s = kfdo_convert::profile(&req, &mut |_| {}).map_err(|e| log.failed(e))?;
            let written = kfdo_afdo::read_profile(&out).map_err(|e| log.failed(e))?;
            // LLVM's flow-sensitive discriminators are what kbuild's AutoFDO flags add;
            // GCC's are its own and need no flag.
            if gcc.is_none() && super::profile_check::locations_with_discriminators(&written) == 0 {
                let _ = std::fs::remove_file(&out);
                return Err(log.fail(super::profile_check::no_discriminators(&k.vmlinux)));
            }
            log.say(&format!(
                "kfdo profile --kernel: {} samples -> {} functions, {} total",
                s.samples_in_binary(),
                s.functions,
                s.total_samples
            ));
            for m in &s.modules {
                log.say(&format!(
                    "  module {}: {} functions, {} samples",
                    m.module, m.functions, m.total_samples
                ));
            }
            if vmlinux_only != out {
                let req = kfdo_convert::ProfileRequest {
                    kernel: true,
                    ..kfdo_convert::ProfileRequest::new(&k.vmlinux, inputs, &vmlinux_only)
                };
                kfdo_convert::profile(&req, &mut |_| {}).map_err(|e| log.failed(e))?;
            }
            Ok(serde_json::json!({
                "modules": s.modules.iter().map(|m| serde_json::json!({
                    "module": m.module, "functions": m.functions, "samples": m.total_samples,
                })).collect::<Vec<_>>(),
            }))
        })?;
        Ok((
            ProfileFile {
                hash: done.hash_of(&out).to_string(),
                path: out,
            },
            vmlinux_only,
        ))
    }

    /// llvm-profgen-19's kernel profile of the same recording: the reference converter.
    pub fn kernel_profile_llvm_profgen(
        &self,
        k: &BuiltKernel,
        rec: &KernelRecording,
    ) -> anyhow::Result<ProfileFile> {
        let out = self.dir("profiles/llvm-profgen.afdo");
        let script = self.dir("profiles/perf.script");
        let key = Key::new("kernel profile llvm-profgen")
            .add("vmlinux", &k.hash)
            .add("perf.data", &rec.hash)
            .add(
                "tools",
                crate::ctx::tool_identity(&[&self.opts.profgen, "perf"])?,
            )
            .finish();
        let done = self.step(
            "profile llvm-profgen",
            key,
            std::slice::from_ref(&out),
            |log| {
                crate::train::run_llvm_profgen(
                    log,
                    &self.opts.profgen,
                    &k.vmlinux,
                    &rec.perf_data,
                    false,
                    &["--kernel"],
                    &script,
                    &out,
                )?;
                Ok(serde_json::json!({}))
            },
        )?;
        Ok(ProfileFile {
            hash: done.hash_of(&out).to_string(),
            path: out,
        })
    }

    /// The report: the results with kernel heat maps; returns it and the hot-text spans.
    fn kernel_report(
        &self,
        db: &Path,
        heat: &[(BuiltKernel, KernelRecording)],
    ) -> anyhow::Result<(PathBuf, Vec<Span>)> {
        let r = &self.recipe;
        let dir = self.dir("report");
        let index = dir.join("index.html");
        let mut key = Key::new("kernel report")
            .add("results", crate::cache::content_hash(db)?)
            .add("kfdo", &self.kfdo_hash);
        for (k, rec) in heat {
            key = key
                .add("heat", &k.variant)
                .add("kernel", &k.hash)
                .add("perf.data", &rec.hash);
        }
        let done = self.step(
            "report",
            key.finish(),
            std::slice::from_ref(&index),
            |log| {
                crate::ctx::fresh_dir(&dir)?;
                let store = dir.join("kfdo.db");
                std::fs::copy(db, &store)?;
                let mut spans = Vec::new();
                for (k, rec) in heat {
                    let png = dir.join(format!("heat-{}.png", crate::cache::file_name(&k.variant)));
                    let req = kfdo_bench::heatmap::HeatmapRequest {
                        store: Some(store.clone()),
                        label: Some(format!(
                            "{}: {} kernel ({}, evaluation workload)",
                            r.name, k.variant, r.benches[0].run
                        )),
                        ..kfdo_bench::heatmap::HeatmapRequest::new(&k.vmlinux, &rec.perf_data, &png)
                    };
                    let map = kfdo_bench::heatmap::make(&req).map_err(|e| log.failed(e))?;
                    log.say(&format!(
                        "{}: hot text span {} bytes ({} samples in text)",
                        k.variant, map.span.bytes, map.samples_in_text
                    ));
                    spans.push(serde_json::json!({
                        "variant": k.variant, "bytes": map.span.bytes,
                        "lines": map.span.lines, "samples": map.samples_in_text,
                    }));
                }
                let done = kfdo_bench::report::write::write_report(
                    &kfdo_bench::report::write::ReportRequest {
                        store,
                        output: dir.clone(),
                        title: format!("kfdo optimize: {} kernel", r.name),
                        json: None,
                    },
                )
                .map_err(|e| log.failed(e))?;
                log.say(&format!("wrote {}", done.index.display()));
                Ok(serde_json::json!({ "spans": spans }))
            },
        )?;
        let spans = done
            .facts
            .get("spans")
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .map(|s| Span {
                        variant: s["variant"].as_str().unwrap_or("").to_string(),
                        bytes: s["bytes"].as_u64().unwrap_or(0),
                        lines: s["lines"].as_u64().unwrap_or(0) as usize,
                        samples: s["samples"].as_u64().unwrap_or(0),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok((dir, spans))
    }
}
