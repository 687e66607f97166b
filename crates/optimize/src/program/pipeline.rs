//! The order of the steps, and which run side by side:
//!
//! ```text
//! source -> prepare -> build baseline ----------> record training run -> profile kfdo ------------> build autofdo, autofdo+thinlto
//!                   \                                                 \-> profile llvm-profgen ---> build autofdo-llvm-profgen
//!                    \                                                \-> profile propeller ------> build propeller (relink)
//!                     \                                               \-> profile bolt -----------> build bolt (llvm-bolt)
//!                    -> build ifdo-instrumented -> train ifdo ------------------------------------> build ifdo
//! build autofdo+thinlto -> record autofdo+thinlto -> profile autofdo+thinlto+propeller -> build autofdo+thinlto+propeller
//!                                                 \-> profile autofdo+thinlto+bolt ----> build autofdo+thinlto+bolt
//! all builds -> benchmark (alone, nothing else running) -> record autofdo, the layout variants (heat maps) -> report
//! ```
//! Builds of one stage run in parallel (up to `--jobs`), and so does the
//! autofdo+thinlto chain (its build, recording, profiles and layout builds) beside
//! the other optimized builds; the benchmark runs with the machine otherwise idle.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Context;
use kfdo_bench::counters::Choice;
use kfdo_record::hardware::Method;
use rayon::prelude::*;

use super::compile::{Built, Sources};
use super::ctx::{Ctx, Options};
use super::flags::{clang_flags, propeller_flags};
use super::judge::{resolve_counters, HeatInput};
use super::postlink::{bolt_profile_lines, explain_warnings, layout_warnings, quote_warnings};
use super::train::{resolve_method, PropellerProfiles, Recording};
use crate::steps::agree::{agreement, tool_name};
use crate::steps::gcc_note::gcc_autofdo_note;
use crate::steps::ProfileFile;
use crate::vocabulary::{ProfileKind, Variant};

pub struct Outcome {
    pub report: PathBuf,
    pub summary: String,
    pub summary_path: PathBuf,
    pub gains: Vec<super::summary::Gains>,
}

/// Whether a layout variant of this kind optimizes the build `base`.
fn layout_on(o: &Options, base: Variant) -> bool {
    super::step_list::layout_on(&o.variants, base)
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
    let plan = super::step_list::step_list(&opts.shape());
    let ctx = Ctx::new(opts, plan)?;
    pool.install(|| run_steps(&ctx))
}

/// The profiles made from a recording of one build for the layout variants on top of it.
#[derive(Default)]
struct LayoutProfiles {
    propeller: Option<PropellerProfiles>,
    bolt: Option<ProfileFile>,
}

/// What every optimized build reads: the profiles of the baseline's recording.
struct Inputs<'a> {
    sources: &'a Sources,
    baseline: &'a Built,
    kfdo: Option<ProfileFile>,
    profgen: Option<ProfileFile>,
    ifdo: Option<ProfileFile>,
    /// From the baseline's recording.
    on_baseline: LayoutProfiles,
    /// `llvm-bolt --version`, when a BOLT variant is judged.
    bolt_id: Option<String>,
}

impl Ctx {
    /// The Propeller and BOLT profiles of `rec` (a recording of `built`, the build
    /// `base` names) for the layout variants on top of it, side by side.
    fn layout_profiles(
        &self,
        base: Variant,
        built: &Built,
        rec: &Recording,
    ) -> anyhow::Result<LayoutProfiles> {
        let on = |kind: ProfileKind| {
            self.opts
                .variants
                .iter()
                .copied()
                .find(|v| v.base() == Some(base) && v.profile() == kind)
        };
        let (propeller, bolt) = both(
            || match on(ProfileKind::Propeller) {
                Some(v) => self.profile_propeller(built, rec, v).map(Some),
                None => Ok(None),
            },
            || match on(ProfileKind::Bolt) {
                Some(v) => self.profile_bolt(built, rec, v).map(Some),
                None => Ok(None),
            },
        )?;
        Ok(LayoutProfiles { propeller, bolt })
    }

    /// Builds variant `v` (not the baseline). A layout variant is made from `base`, the
    /// build it optimizes, and `layout`, the profiles of that build's recording.
    fn make(
        &self,
        v: Variant,
        inp: &Inputs<'_>,
        base: Option<&Built>,
        layout: &LayoutProfiles,
    ) -> anyhow::Result<Built> {
        let r = self.recipe();
        let opt = &r.build.opt;
        let missing = || format!("internal: the profile step of {} did not run", v.name());
        match v.profile() {
            ProfileKind::None => anyhow::bail!("internal: the baseline is not an optimized build"),
            ProfileKind::Kfdo | ProfileKind::LlvmProfgen | ProfileKind::Instrumented
                if !v.is_layout() =>
            {
                let p = match v.profile() {
                    ProfileKind::Kfdo => inp.kfdo.as_ref(),
                    ProfileKind::LlvmProfgen => inp.profgen.as_ref(),
                    _ => inp.ifdo.as_ref(),
                }
                .with_context(missing)?;
                let (c, l) = self.variant_flags(v, Some(&p.path));
                // GCC's ifdo profile is the .gcda files, read from beside the objects.
                let seed =
                    (self.opts.compiler.is_gcc() && v == Variant::Ifdo).then_some(p.path.as_path());
                self.build_seeded(inp.sources, v.name(), c, l, &p.hash, seed)
            }
            ProfileKind::Propeller => {
                let prof = layout.propeller.as_ref().with_context(missing)?;
                let lto = v.base() == Some(Variant::AutofdoThinlto);
                // The relink reads the base's profile too (autofdo+thinlto's kfdo.afdo).
                let (afdo_path, afdo_hash) = match (lto, &inp.kfdo) {
                    (true, Some(k)) => (Some(k.path.as_path()), k.hash.as_str()),
                    (true, None) => anyhow::bail!(missing()),
                    (false, _) => (None, ""),
                };
                let (c, l) =
                    propeller_flags(clang_flags(v, opt, afdo_path), &prof.cc, &prof.ld, lto);
                let built = self.build(
                    inp.sources,
                    v.name(),
                    c,
                    l,
                    &format!("{afdo_hash}+{}", prof.hash),
                )?;
                let step = format!("build {}", v.name());
                let warnings = layout_warnings(&self.log_path(&step), &[&prof.cc, &prof.ld]);
                for w in quote_warnings(&step, &warnings) {
                    self.progress.say(format!("  warning: {w}"));
                }
                if let Some(why) = explain_warnings(&warnings) {
                    self.progress.say(format!("  {step}: {why}"));
                }
                Ok(built)
            }
            ProfileKind::Bolt => {
                let fdata = layout.bolt.as_ref().with_context(missing)?;
                let base = base.with_context(missing)?;
                let id = inp.bolt_id.as_deref().with_context(missing)?;
                let built = self.bolt(base, fdata, v, id)?;
                let log = self.log_path(&format!("build {}", v.name()));
                for line in bolt_profile_lines(&log) {
                    self.progress.say(format!("  build {}: {line}", v.name()));
                }
                let warnings = layout_warnings(&log, &[]);
                for w in quote_warnings(&format!("build {}", v.name()), &warnings) {
                    self.progress.say(format!("  warning: {w}"));
                }
                Ok(built)
            }
            _ => anyhow::bail!(missing()),
        }
    }
}

/// How the run records and counts, resolved once (auto says why it picked).
struct Setup {
    method: Method,
    counters: Choice,
    /// `llvm-bolt --version`, when a BOLT variant is judged.
    bolt_id: Option<String>,
}

/// The baseline's training run and what was made of it.
struct Trained {
    recording: Option<Recording>,
    kfdo: Option<ProfileFile>,
    profgen: Option<ProfileFile>,
    ifdo: Option<ProfileFile>,
    on_baseline: LayoutProfiles,
}

/// Every build, in the variants' order (baseline first), and the recording of
/// autofdo+thinlto when layout variants sit on top of it.
struct Builds {
    builds: Vec<(Variant, Built)>,
    thin_recording: Option<Recording>,
}

fn run_steps(ctx: &Ctx) -> anyhow::Result<Outcome> {
    let o = &ctx.opts;
    let setup = set_up(ctx)?;
    let src = ctx.fetch_source()?;
    let sources = ctx.prepare(&src)?;
    let (baseline, instrumented) = build_baseline(ctx, &sources)?;
    let trained = train(ctx, &baseline, instrumented.as_ref(), setup.method)?;
    let mut notes = Vec::new();
    let profiles = match (&trained.kfdo, &trained.profgen) {
        (Some(k), Some(l)) => Some(agreement(&k.path, &l.path, tool_name(&o.profgen))),
        _ => None,
    };
    if let Some(a) = &profiles {
        notes.push(a.note.clone());
    }
    if let Some(p) = &trained.on_baseline.propeller {
        notes.push(format!(
            "propeller: kfdo's Propeller profiles of the baseline: {}",
            p.summary
        ));
    }
    let recording = trained.recording.clone();
    let inputs = Inputs {
        sources: &sources,
        baseline: &baseline,
        kfdo: trained.kfdo,
        profgen: trained.profgen,
        ifdo: trained.ifdo,
        on_baseline: trained.on_baseline,
        bolt_id: setup.bolt_id,
    };
    let built = build_optimized(ctx, &inputs, setup.method, &mut notes)?;
    build_notes(ctx, &mut notes);
    // Judged alone on the machine.
    let db = ctx.bench(&built.builds, setup.counters)?;
    let heat = record_heat(ctx, &built, recording, setup.method)?;
    let report = ctx.report(&db, &heat)?;
    let time_label = o.target.as_ref().map(|t| t.time_label());
    let (mut summary, gains) = super::summary::summarize(
        &report.join("kfdo.db"),
        &ctx.recipe().name,
        &notes,
        time_label.as_deref(),
        profiles.as_ref().is_some_and(|a| a.equal),
    )?;
    if let Some(against) = &o.against {
        let this = super::llvm_compare::Run {
            llvm: o.llvm(),
            store: &report.join("kfdo.db"),
        };
        let other = super::llvm_compare::Run {
            llvm: against.llvm,
            store: &against.out.join("report/kfdo.db"),
        };
        summary.push_str(&super::llvm_compare::section(&this, &other, &against.out)?);
    }
    std::fs::write(
        o.out.join("summary.json"),
        serde_json::to_vec_pretty(&gains)?,
    )?;
    let summary_path = ctx.write_summary(&summary)?;
    Ok(Outcome {
        report,
        summary,
        summary_path,
        gains,
    })
}

/// Resolves the recording method and the counters (a cross build runs only under
/// QEMU: emulated recording and counters), refuses layout variants without branch
/// stacks, and says what the run will do.
fn set_up(ctx: &Ctx) -> anyhow::Result<Setup> {
    let o = &ctx.opts;
    let r = ctx.recipe();
    let ((method, why), (counters, counters_note)) = match &o.target {
        Some(t) => (t.method(o.method)?, (t.counters(o.counters)?, None)),
        None => (resolve_method(o.method), resolve_counters(o.counters)),
    };
    let layout: Vec<Variant> = o
        .variants
        .iter()
        .copied()
        .filter(|v| v.is_layout())
        .collect();
    if method == Method::Ip {
        if let Some(v) = layout.first() {
            anyhow::bail!(
                "--variants {}: Propeller and BOLT lay code out by taken branches, and the \
                 training run would be recorded with --method ip (no branch stacks); record \
                 with --method emulated (or lbr/brs/... where the machine has it)",
                v.name()
            );
        }
    }
    if method == Method::Ip && !o.llvm().differences().profgen_leading_ip_only {
        if let Some(v) = o
            .variants
            .iter()
            .find(|v| v.profile() == ProfileKind::LlvmProfgen)
        {
            anyhow::bail!(
                "--variants {}: the training run would be recorded with --method ip (no branch \
                 stacks), and {}'s llvm-profgen has no --leading-ip-only (LLVM 19's has), so it \
                 cannot convert it; leave {} out, record with branch stacks (--method \
                 emulated), or use --llvm 19",
                v.name(),
                o.llvm(),
                v.name()
            );
        }
    }
    let bolt_id = if layout.iter().any(|v| v.profile() == ProfileKind::Bolt) {
        Some(crate::program::postlink::bolt_identity(ctx.opts.llvm())?)
    } else {
        None
    };
    let names: Vec<&str> = o.variants.iter().map(|v| v.name()).collect();
    ctx.say_header(
        "recipe",
        &r.name,
        &r.path,
        &names,
        &[
            format!("training recorded with --method {}", method.name()),
            format!("counters: {}", counters.name()),
        ],
    );
    for w in why.iter().chain(counters_note.iter()) {
        ctx.progress.say(format!("  {w}"));
    }
    Ok(Setup {
        method,
        counters,
        bolt_id,
    })
}

/// The baseline (with the map or the relocations a layout variant on top of it
/// reads), and beside it the instrumented build for ifdo.
fn build_baseline(ctx: &Ctx, sources: &Sources) -> anyhow::Result<(Built, Option<Built>)> {
    let (bflags, blink) = ctx.variant_flags(Variant::Baseline, None);
    both(
        || ctx.build(sources, "baseline", bflags, blink, ""),
        || {
            if !ctx.opts.variants.contains(&Variant::Ifdo) {
                return Ok(None);
            }
            let (c, l) = ctx.instrumented_flags();
            ctx.build(sources, "ifdo-instrumented", c, l, "").map(Some)
        },
    )
}

/// Records the baseline's training run (beside it, the instrumented build's) and
/// converts the recording, with kfdo and with llvm-profgen, and into the layout
/// profiles of the variants on top of the baseline.
fn train(
    ctx: &Ctx,
    baseline: &Built,
    instrumented: Option<&Built>,
    method: Method,
) -> anyhow::Result<Trained> {
    let o = &ctx.opts;
    let has = |v: Variant| o.variants.contains(&v);
    let wants_record = super::step_list::records_training(&o.variants, o.heatmaps);
    let (recording, ifdo) = both(
        || {
            if wants_record {
                ctx.record(baseline, method, "training run").map(Some)
            } else {
                Ok(None)
            }
        },
        || match instrumented {
            Some(b) if o.compiler.is_gcc() => ctx.train_instrumented_gcc(b).map(Some),
            Some(b) => ctx.train_instrumented(b).map(Some),
            None => Ok(None),
        },
    )?;
    let ((kfdo, profgen), on_baseline) = both(
        || {
            both(
                || match &recording {
                    Some(rec) if has(Variant::Autofdo) || has(Variant::AutofdoThinlto) => {
                        ctx.profile_kfdo(baseline, rec).map(Some)
                    }
                    _ => Ok(None),
                },
                || match &recording {
                    Some(rec) if has(Variant::AutofdoLlvmProfgen) => {
                        ctx.profile_llvm_profgen(baseline, rec).map(Some)
                    }
                    _ => Ok(None),
                },
            )
        },
        || match &recording {
            Some(rec) if layout_on(o, Variant::Baseline) => {
                ctx.layout_profiles(Variant::Baseline, baseline, rec)
            }
            _ => Ok(LayoutProfiles::default()),
        },
    )?;
    Ok(Trained {
        recording,
        kfdo,
        profgen,
        ifdo,
        on_baseline,
    })
}

/// The optimized builds, side by side; beside them the autofdo+thinlto chain when
/// layout variants sit on top of it (its build, its recording, their profiles and
/// builds).
fn build_optimized(
    ctx: &Ctx,
    inputs: &Inputs<'_>,
    method: Method,
    notes: &mut Vec<String>,
) -> anyhow::Result<Builds> {
    let o = &ctx.opts;
    let chain = layout_on(o, Variant::AutofdoThinlto);
    let direct: Vec<Variant> = o
        .variants
        .iter()
        .copied()
        .filter(|v| *v != Variant::Baseline)
        .filter(|v| {
            !(chain && (*v == Variant::AutofdoThinlto || v.base() == Some(Variant::AutofdoThinlto)))
        })
        .collect();
    let (direct_built, chain_out) = both(
        || {
            Ok(direct
                .par_iter()
                .map(|&v| ctx.make(v, inputs, Some(inputs.baseline), &inputs.on_baseline))
                .collect::<Vec<anyhow::Result<Built>>>())
        },
        || {
            if !chain {
                return Ok(None);
            }
            let none = LayoutProfiles::default();
            let thin = ctx.make(Variant::AutofdoThinlto, inputs, None, &none)?;
            let rec = ctx.record(&thin, method, "autofdo+thinlto (training run)")?;
            let profiles = ctx.layout_profiles(Variant::AutofdoThinlto, &thin, &rec)?;
            let on_thin: Vec<Variant> = o
                .variants
                .iter()
                .copied()
                .filter(|v| v.base() == Some(Variant::AutofdoThinlto))
                .collect();
            let built: Vec<anyhow::Result<Built>> = on_thin
                .par_iter()
                .map(|&v| ctx.make(v, inputs, Some(&thin), &profiles))
                .collect();
            let mut out = vec![(Variant::AutofdoThinlto, thin)];
            for (v, b) in on_thin.iter().zip(built) {
                out.push((*v, b?));
            }
            Ok(Some((out, rec, profiles)))
        },
    )?;
    let mut by_variant: BTreeMap<Variant, Built> = BTreeMap::new();
    by_variant.insert(Variant::Baseline, inputs.baseline.clone());
    for (v, b) in direct.iter().zip(direct_built) {
        by_variant.insert(*v, b?);
    }
    let mut thin_recording = None;
    if let Some((built, rec, profiles)) = chain_out {
        by_variant.extend(built);
        thin_recording = Some(rec);
        if let Some(p) = &profiles.propeller {
            notes.push(format!(
                "autofdo+thinlto+propeller: kfdo's Propeller profiles of autofdo+thinlto: {}",
                p.summary
            ));
        }
    }
    Ok(Builds {
        builds: by_variant.into_iter().collect(),
        thin_recording,
    })
}

/// What the builds' logs say that the summary should: GCC's AutoFDO warnings, BOLT's
/// profile lines and the layout warnings.
fn build_notes(ctx: &Ctx, notes: &mut Vec<String>) {
    let o = &ctx.opts;
    if o.compiler.is_gcc() && o.variants.contains(&Variant::Autofdo) {
        notes.extend(gcc_autofdo_note(&ctx.log_path("build autofdo")));
    }
    for v in o.variants.iter().filter(|v| v.is_layout()) {
        let log = ctx.log_path(&format!("build {}", v.name()));
        let files: Vec<PathBuf> = match v.profile() {
            ProfileKind::Propeller => {
                let (cc, ld) =
                    kfdo_convert::propeller_paths(&ctx.dir(&format!("profiles/{}", v.name())));
                vec![cc, ld]
            }
            _ => Vec::new(),
        };
        let files: Vec<&std::path::Path> = files.iter().map(PathBuf::as_path).collect();
        for line in bolt_profile_lines(&log) {
            notes.push(format!("{}: {line}", v.name()));
        }
        let warnings = layout_warnings(&log, &files);
        for w in quote_warnings(&format!("build {}", v.name()), &warnings) {
            notes.push(format!("warning: {w}"));
        }
        notes.extend(explain_warnings(&warnings));
    }
}

/// Heat maps of every build with a recording of the training workload: the
/// baseline's and autofdo+thinlto's recordings exist; autofdo and the layout variants
/// are recorded for theirs.
fn record_heat(
    ctx: &Ctx,
    built: &Builds,
    recording: Option<Recording>,
    method: Method,
) -> anyhow::Result<Vec<HeatInput>> {
    let mut heat = Vec::new();
    if !ctx.opts.heatmaps {
        return Ok(heat);
    }
    let to_record: Vec<&(Variant, Built)> = built
        .builds
        .iter()
        .filter(|(v, _)| *v == Variant::Autofdo || v.is_layout())
        .collect();
    let recorded: Vec<anyhow::Result<Recording>> = to_record
        .par_iter()
        .map(|(v, b)| ctx.record(b, method, &format!("{} (for its heat map)", v.name())))
        .collect();
    let mut recs: BTreeMap<Variant, Recording> = BTreeMap::new();
    for ((v, _), rec) in to_record.iter().zip(recorded) {
        recs.insert(*v, rec?);
    }
    if let Some(rec) = recording {
        recs.insert(Variant::Baseline, rec);
    }
    if let Some(rec) = built.thin_recording.clone() {
        recs.insert(Variant::AutofdoThinlto, rec);
    }
    for (v, b) in &built.builds {
        if let Some(rec) = recs.remove(v) {
            heat.push(HeatInput {
                label: v.name().into(),
                binary: b.clone(),
                perf_data: rec.perf_data,
                perf_hash: rec.hash,
            });
        }
    }
    Ok(heat)
}
