//! The order of the steps, and which run side by side:
//!
//! ```text
//! source -> prepare -> build baseline ----------> record training run -> profile kfdo ------------> build autofdo, autofdo+thinlto
//!                   \                                                 \-> profile llvm-profgen ---> build autofdo-llvm-profgen
//!                    -> build ifdo-instrumented -> train ifdo ------------------------------------> build ifdo
//! all builds -> benchmark (alone, nothing else running) -> record autofdo (heat map) -> report
//! ```
//! Builds of one stage run in parallel (up to `--jobs`); the benchmark
//! runs with the machine otherwise idle.

use std::path::PathBuf;

use anyhow::Context;

use crate::compile::Built;
use crate::ctx::{Ctx, Options};
use crate::judge::{resolve_counters, HeatInput};
use crate::train::{resolve_method, ProfileFile};
use crate::variant::{ProfileKind, Variant};

pub struct Outcome {
    pub report: PathBuf,
    pub summary: String,
    pub summary_path: PathBuf,
    pub gains: Vec<crate::summary::Gains>,
}

fn count_steps(o: &Options) -> usize {
    let has = |v: Variant| o.variants.contains(&v);
    let needs_kfdo = has(Variant::Autofdo) || has(Variant::AutofdoThinlto);
    let autofdo_builds = o
        .variants
        .iter()
        .filter(|v| matches!(v.profile(), ProfileKind::Kfdo | ProfileKind::LlvmProfgen))
        .count();
    let record = autofdo_builds > 0 || o.heatmaps;
    usize::from(o.recipe.source.debian.is_some())
        + usize::from(o.recipe.source.prepare.is_some())
        + 1 // build baseline
        + if has(Variant::Ifdo) { 3 } else { 0 }
        + usize::from(record)
        + usize::from(needs_kfdo)
        + usize::from(has(Variant::AutofdoLlvmProfgen))
        + autofdo_builds
        + 1 // benchmark
        + usize::from(o.heatmaps && has(Variant::Autofdo))
        + 1 // report
}

/// Runs both closures, side by side when jobs allow, and returns both results.
fn both<A: Send, B: Send>(
    a: impl FnOnce() -> anyhow::Result<A> + Send,
    b: impl FnOnce() -> anyhow::Result<B> + Send,
) -> anyhow::Result<(A, B)> {
    let (ra, rb) = rayon::join(a, b);
    Ok((ra?, rb?))
}

pub fn run(opts: Options) -> anyhow::Result<Outcome> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.max(1))
        .build()
        .context("cannot start worker threads")?;
    let total = count_steps(&opts);
    let ctx = Ctx::new(opts, total)?;
    pool.install(|| run_steps(&ctx))
}

fn run_steps(ctx: &Ctx) -> anyhow::Result<Outcome> {
    let o = &ctx.opts;
    let r = ctx.recipe();
    let has = |v: Variant| o.variants.contains(&v);
    let (method, why) = resolve_method(o.method);
    let (counters, counters_note) = resolve_counters(o.counters);
    ctx.progress.say(format!(
        "kfdo optimize: recipe '{}' ({}) -> {}",
        r.name,
        r.path.display(),
        o.out.display()
    ));
    ctx.progress.say(format!(
        "  variants: {}; training recorded with --method {}; counters: {}; logs in {}",
        o.variants
            .iter()
            .map(|v| v.name())
            .collect::<Vec<_>>()
            .join(", "),
        method.name(),
        counters.name(),
        ctx.logs.display()
    ));
    for w in why.iter().chain(counters_note.iter()) {
        ctx.progress.say(format!("  {w}"));
    }

    let src = ctx.fetch_source()?;
    let sources = ctx.prepare(&src)?;

    // Stage 1: the baseline, and the instrumented build for ifdo.
    let (bflags, blink) = Variant::Baseline.flags(&r.build.opt, None);
    let (baseline, instrumented) = both(
        || ctx.build(&sources, "baseline", bflags, blink, ""),
        || {
            if !has(Variant::Ifdo) {
                return Ok(None);
            }
            let (c, l) = Variant::instrumented_flags(&r.build.opt);
            ctx.build(&sources, "ifdo-instrumented", c, l, "").map(Some)
        },
    )?;

    // Stage 2: record the training run; run the instrumented build.
    let wants_record = o
        .variants
        .iter()
        .any(|v| matches!(v.profile(), ProfileKind::Kfdo | ProfileKind::LlvmProfgen))
        || o.heatmaps;
    let (recording, ifdo_profile) = both(
        || {
            if wants_record {
                ctx.record(&baseline, method, "training run").map(Some)
            } else {
                Ok(None)
            }
        },
        || match &instrumented {
            Some(b) => ctx.train_instrumented(b).map(Some),
            None => Ok(None),
        },
    )?;

    // Stage 3: convert the recording, with kfdo and with llvm-profgen.
    let (kfdo_profile, profgen_profile) = both(
        || match &recording {
            Some(rec) if has(Variant::Autofdo) || has(Variant::AutofdoThinlto) => {
                ctx.profile_kfdo(&baseline, rec).map(Some)
            }
            _ => Ok(None),
        },
        || match &recording {
            Some(rec) if has(Variant::AutofdoLlvmProfgen) => {
                ctx.profile_llvm_profgen(&baseline, rec).map(Some)
            }
            _ => Ok(None),
        },
    )?;

    let mut notes = Vec::new();
    if let (Some(k), Some(l)) = (&kfdo_profile, &profgen_profile) {
        notes.push(profiles_agree(&k.path, &l.path));
    }

    // Stage 4: the optimized builds, side by side.
    let profile_for = |v: Variant| -> Option<&ProfileFile> {
        match v.profile() {
            ProfileKind::None => None,
            ProfileKind::Kfdo => kfdo_profile.as_ref(),
            ProfileKind::LlvmProfgen => profgen_profile.as_ref(),
            ProfileKind::Instrumented => ifdo_profile.as_ref(),
        }
    };
    let optimized: Vec<Variant> = o
        .variants
        .iter()
        .copied()
        .filter(|v| *v != Variant::Baseline)
        .collect();
    use rayon::prelude::*;
    let built: Vec<anyhow::Result<Built>> = optimized
        .par_iter()
        .map(|&v| {
            let p = profile_for(v).context("internal: a variant's profile step did not run")?;
            let (c, l) = v.flags(&r.build.opt, Some(&p.path));
            ctx.build(&sources, v.name(), c, l, &p.hash)
        })
        .collect();
    let mut builds = vec![(Variant::Baseline, baseline.clone())];
    for (v, b) in optimized.iter().zip(built) {
        builds.push((*v, b?));
    }

    // Stage 5: judge, alone on the machine.
    let db = ctx.bench(&builds, counters)?;

    // Stage 6: heat maps of baseline and autofdo running the training workload.
    let mut heat = Vec::new();
    if o.heatmaps {
        if let Some(rec) = &recording {
            heat.push(HeatInput {
                label: "baseline".into(),
                binary: baseline.clone(),
                perf_data: rec.perf_data.clone(),
                perf_hash: rec.hash.clone(),
            });
        }
        if let Some((_, af)) = builds.iter().find(|(v, _)| *v == Variant::Autofdo) {
            let rec = ctx.record(af, method, "autofdo (for its heat map)")?;
            heat.push(HeatInput {
                label: "autofdo".into(),
                binary: af.clone(),
                perf_data: rec.perf_data,
                perf_hash: rec.hash,
            });
        }
    }
    let report = ctx.report(&db, &heat)?;
    let (summary, gains) = crate::summary::summarize(&report.join("kfdo.db"), &r.name, &notes)?;
    let summary_path = o.out.join("summary.md");
    std::fs::write(&summary_path, &summary)
        .with_context(|| format!("cannot write {}", summary_path.display()))?;
    std::fs::write(
        o.out.join("summary.json"),
        serde_json::to_vec_pretty(&gains)?,
    )?;
    ctx.progress.say(format!(
        "kfdo optimize: finished in {}",
        ctx.progress.elapsed()
    ));
    Ok(Outcome {
        report,
        summary,
        summary_path,
        gains,
    })
}

/// Says whether kfdo's profile equals llvm-profgen-19's (they read the same
/// perf.data), and if not, how many functions differ.
pub(crate) fn profiles_agree(kfdo: &std::path::Path, profgen: &std::path::Path) -> String {
    let read = |p: &std::path::Path| kfdo_afdo::read_profile(p).map_err(|e| e.to_string());
    match (read(kfdo), read(profgen)) {
        (Ok(a), Ok(b)) if a == b => format!(
            "kfdo's profile equals llvm-profgen-19's ({} functions), so autofdo and \
             autofdo-llvm-profgen are the same build up to timing noise",
            a.functions.len()
        ),
        (Ok(a), Ok(b)) => {
            let names: std::collections::BTreeSet<&String> =
                a.functions.keys().chain(b.functions.keys()).collect();
            let differ = names
                .iter()
                .filter(|n| a.functions.get(**n) != b.functions.get(**n))
                .count();
            format!(
                "kfdo's profile differs from llvm-profgen-19's in {differ} of {} functions \
                 ({:.1} % of the functions equal)",
                names.len(),
                100.0 * (names.len() - differ) as f64 / names.len().max(1) as f64
            )
        }
        (Err(e), _) | (_, Err(e)) => format!("the two profiles could not be compared: {e}"),
    }
}
