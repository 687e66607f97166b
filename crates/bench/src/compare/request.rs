//! `kfdo compare` as one typed call: run the variants interleaved, store every run,
//! count each variant once, and judge them from everything stored for the benchmark.
//!
//! The caller builds a [`CompareRequest`], passes a stop flag (set it from a Ctrl-C
//! handler: finished runs are kept) and a sink for [`CompareEvent`]s (progress, and
//! the lines a user should see while it runs), and gets the verdict back.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::analysis::{self, BenchmarkAnalysis};
use crate::counters::{self, Choice, CountedRun, CounterError};
use crate::kept::{CountersKept, Kept, Phase};
use crate::pooling::{CountersOrigin, Pooling, SeriesChange};
use crate::runner::{
    self, CommandTrials, Ending, Event, Plan, RunError, RunResult, StopRule, Trials, Variant,
};
use crate::store::{Store, StoreError};
use crate::warning::Warning;
use crate::{env, identity, stats};

/// A comparison to run.
#[derive(Debug, Clone)]
pub struct CompareRequest {
    /// The commands under test; the first is the baseline.
    pub variants: Vec<Variant>,
    /// The benchmark these runs belong to (default: the first command's program name).
    /// Runs of the same benchmark and variant names in the store are pooled.
    pub benchmark: Option<String>,
    pub plan: Plan,
    pub counters: Choice,
    /// The results store (SQLite), appended to.
    pub store: PathBuf,
    /// Also write the verdict here as JSON.
    pub json: Option<PathBuf>,
}

/// What a comparison reports while it runs.
pub enum CompareEvent<'a> {
    /// Why the counter source is not the one asked for (before any run).
    CounterNote(&'a Warning),
    /// Opening upgraded the store from a version that did not record what each run
    /// ran: how many runs it held (a series of unknown program of their own).
    StoreUpgraded {
        runs: usize,
    },
    /// A command's program is not the one of its earlier runs (before any run).
    SeriesChanged(&'a SeriesChange),
    /// The comparison starts: benchmark name and runs already stored for it.
    Started {
        benchmark: &'a str,
        variants: usize,
        prior_runs: usize,
        /// The session in the store that this comparison's runs go to.
        session: i64,
    },
    Warmup {
        variant: &'a str,
        index: usize,
    },
    Run {
        variant: &'a str,
        run: &'a RunResult,
    },
    /// After each adaptive round: the widest ±% of the ratios to the baseline.
    Round {
        worst_half_width_pct: f64,
    },
    /// One counted run of a variant is about to start.
    Counting {
        variant: &'a str,
        source: &'a str,
    },
}

impl CompareEvent<'_> {
    /// The event as a plain line for a log (no terminal to draw a spinner on), with its
    /// phase ("warm-up", "timed"): finished warm-up and timed runs; `None` for the others,
    /// which callers show anyway or which say nothing new.
    pub fn progress_line(&self) -> Option<(&'static str, String)> {
        match self {
            CompareEvent::Warmup { variant, index } => Some((
                "warm-up",
                format!("warm-up run {} of '{variant}' done", index + 1),
            )),
            CompareEvent::Run { variant, run } => Some((
                "timed",
                format!(
                    "timed run {} of '{variant}': {} ({} timed run(s) done)",
                    run.index + 1,
                    crate::report::fmt_time(run.wall_s),
                    run.seq + 1
                ),
            )),
            _ => None,
        }
    }
}

/// How a comparison ended.
#[derive(Debug, Clone)]
pub enum CompareOutcome {
    /// All runs and counters done; the verdict from every stored run of the benchmark.
    Complete {
        session: i64,
        ending: Ending,
        analysis: Box<BenchmarkAnalysis>,
        /// The counters shown that were not taken in this session: where they come from.
        counters_from: Vec<CountersOrigin>,
    },
    /// The stop flag was set (or a command was ended by Ctrl-C); the session is marked
    /// interrupted and the finished runs and counters are in the store.
    Interrupted(Kept),
}

#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// The request itself is wrong; the message says what to change.
    #[error("{0}")]
    Request(String),
    #[error(transparent)]
    Counters(Box<CounterError>),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("compare stopped: the results store could not be written: {0}")]
    StoreDuringRuns(StoreError),
    /// A command failed or could not be started; the finished runs are kept.
    #[error("{source}\n({finished} finished run(s) are kept in {}; `kfdo report --store {}` shows them)", store.display(), store.display())]
    Command {
        source: Box<RunError>,
        finished: usize,
        store: PathBuf,
    },
    #[error("{finished} finished run(s) are kept in {}; `kfdo report --store {}` shows them: {source}", store.display(), store.display())]
    Runner {
        source: Box<RunError>,
        finished: usize,
        store: PathBuf,
    },
    #[error("counters failed; the timed runs are kept in {}: {source}", store.display())]
    Counting {
        source: Box<CounterError>,
        store: PathBuf,
    },
    #[error("cannot write the JSON verdict: {0}")]
    Json(String),
}

impl StopRule {
    /// The stop rule of `kfdo compare`'s options: a fixed count (default 10), or an
    /// adaptive target with bounds.
    pub fn from_options(
        runs: Option<usize>,
        ci_target: Option<f64>,
        min_runs: Option<usize>,
        max_runs: Option<usize>,
    ) -> Result<StopRule, String> {
        match (runs, ci_target) {
            (_, Some(pct)) => {
                if pct.is_nan() || pct <= 0.0 {
                    return Err(format!(
                        "--ci-target {pct}: give a positive percentage, e.g. --ci-target 1"
                    ));
                }
                let max_runs = max_runs.unwrap_or(30);
                if max_runs < 2 {
                    return Err(format!(
                        "--max-runs {max_runs}: need at least 2 runs for an interval"
                    ));
                }
                if let Some(min) = min_runs.filter(|&m| m > max_runs) {
                    return Err(format!(
                        "--min-runs {min} is more than --max-runs {max_runs}: raise --max-runs \
                         or lower --min-runs"
                    ));
                }
                Ok(StopRule::Adaptive {
                    target_pct: pct,
                    min_runs: min_runs.unwrap_or(5).clamp(2, max_runs),
                    max_runs,
                })
            }
            _ if min_runs.is_some() || max_runs.is_some() => Err(format!(
                "{} bound(s) the adaptive run count, which --ci-target PCT asks for; without it \
                 each command runs a fixed count: give --runs N instead, or add --ci-target",
                match (min_runs, max_runs) {
                    (Some(_), Some(_)) => "--min-runs and --max-runs",
                    (Some(_), None) => "--min-runs",
                    _ => "--max-runs",
                }
            )),
            (Some(0), None) => Err("--runs 0: need at least one timed run".into()),
            (Some(n), None) => Ok(StopRule::Fixed(n)),
            (None, None) => Ok(StopRule::Fixed(10)),
        }
    }
}

/// The benchmark name a command gets by default: its program's file name.
pub fn default_benchmark(cmd: &str) -> String {
    let first = cmd
        .split_whitespace()
        .find(|w| !w.contains('='))
        .unwrap_or("benchmark");
    std::path::Path::new(first)
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| first.to_string())
}

fn check(req: &CompareRequest) -> Result<(), CompareError> {
    if req.variants.is_empty() {
        return Err(CompareError::Request("no command to compare".into()));
    }
    for (i, v) in req.variants.iter().enumerate() {
        if req.variants[..i].iter().any(|w| w.name == v.name) {
            return Err(CompareError::Request(format!(
                "two commands are named '{}'; names must differ (--name)",
                v.name
            )));
        }
        if v.command.trim().is_empty() {
            return Err(CompareError::Request(format!(
                "command {} ('{}') is empty",
                i + 1,
                v.name
            )));
        }
        // The emulated counters run after every timed run: a command they cannot count
        // is found out now, not after the runs. A template's program slot is counted
        // wherever the template runs it, whatever the shell syntax around it.
        if req.counters == crate::counters::Choice::Emulated && v.program.is_none() {
            crate::counters::emulated::direct_command(&req.plan.shell.argv(&v.command))
                .map_err(|why| CompareError::Request(format!("variant '{}': {why}", v.name)))?;
        }
    }
    Ok(())
}

/// Runs the comparison of commands. `stop` is polled between runs; `on_event` sees
/// progress. Earlier runs of a command pool only with runs of the same program
/// ([`Pooling::NewSeries`]).
pub fn compare(
    req: &CompareRequest,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(CompareEvent<'_>),
) -> Result<CompareOutcome, CompareError> {
    compare_pooled(req, Pooling::NewSeries, stop, on_event)
}

/// [`compare`], with earlier runs pooled as `pooling` says.
pub fn compare_pooled(
    req: &CompareRequest,
    pooling: Pooling,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(CompareEvent<'_>),
) -> Result<CompareOutcome, CompareError> {
    let extras = SessionExtras {
        pooling,
        ..SessionExtras::default()
    };
    compare_with(req, stop, on_event, &extras)
}

/// [`compare`], with `extras` recorded in the session.
pub(crate) fn compare_with(
    req: &CompareRequest,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(CompareEvent<'_>),
    extras: &SessionExtras,
) -> Result<CompareOutcome, CompareError> {
    check(req)?;
    let mut trials =
        CommandTrials::new(&req.variants, &req.plan).map_err(|e| CompareError::Runner {
            source: Box::new(e),
            finished: 0,
            store: req.store.clone(),
        })?;
    compare_trials_with(req, &mut trials, stop, on_event, extras)
}

/// What a caller adds to the session it starts, beside the machine and the plan: a
/// tagged kernel run records the running kernel and its tag here.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionExtras {
    /// Keys added to the session's environment JSON.
    pub environment: Vec<(String, serde_json::Value)>,
    /// Keys added to the session's settings JSON.
    pub settings: Vec<(String, serde_json::Value)>,
    /// Warnings stored with the session from its start.
    pub notes: Vec<Warning>,
    /// Which earlier runs count.
    pub pooling: Pooling,
}

fn with_keys(
    mut doc: serde_json::Value,
    keys: &[(String, serde_json::Value)],
) -> serde_json::Value {
    if let Some(map) = doc.as_object_mut() {
        for (k, v) in keys {
            map.insert(k.clone(), v.clone());
        }
    }
    doc
}

/// Runs a comparison whose runs `trials` makes (a kernel booted with a workload, say):
/// the same interleaving, store, warnings and verdict as [`compare`]. `req.variants`
/// name and describe the variants (their `command` is what the store shows); counters,
/// if `req.counters` asks for them, run the variants' commands.
pub fn compare_trials(
    req: &CompareRequest,
    trials: &mut dyn Trials,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(CompareEvent<'_>),
) -> Result<CompareOutcome, CompareError> {
    compare_trials_with(req, trials, stop, on_event, &SessionExtras::default())
}

/// [`compare_trials`], with `extras` recorded in the session.
pub(crate) fn compare_trials_with(
    req: &CompareRequest,
    trials: &mut dyn Trials,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(CompareEvent<'_>),
    extras: &SessionExtras,
) -> Result<CompareOutcome, CompareError> {
    check(req)?;
    let variants = &req.variants;
    let benchmark = req
        .benchmark
        .clone()
        .unwrap_or_else(|| default_benchmark(&variants[0].command));
    // Pick the counter source up front, so a bad choice fails before any run.
    let (source, mut notes) =
        counters::select(req.counters).map_err(|e| CompareError::Counters(Box::new(e)))?;
    for n in &notes {
        on_event(CompareEvent::CounterNote(n));
    }

    let store = Store::open(&req.store)?;
    if let Some(runs) = store.upgraded_runs().filter(|&n| n > 0) {
        on_event(CompareEvent::StoreUpgraded { runs });
    }
    let identities: Vec<Option<String>> = variants
        .iter()
        .map(|v| identity::of_variant(v, &req.plan))
        .collect();
    let environment = env::capture(env!("CARGO_PKG_VERSION"));
    let settings = serde_json::json!({
        "plan": &req.plan,
        "counters": format!("{:?}", req.counters),
        "variants": variants,
    });
    let session = store.begin_session(
        &benchmark,
        &with_keys(
            serde_json::to_value(&environment).unwrap_or_default(),
            &extras.environment,
        ),
        &with_keys(settings, &extras.settings),
    )?;
    let ids: Vec<i64> = variants
        .iter()
        .map(|v| store.variant(&benchmark, v))
        .collect::<Result<_, _>>()?;
    let pooling = extras.pooling;
    let mut prior: Vec<Vec<f64>> = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        let identity = identities[i].as_deref();
        let series = store.series(ids[i])?;
        if let Some(change) = SeriesChange::find(v, identity, &series, pooling) {
            on_event(CompareEvent::SeriesChanged(&change));
        }
        prior.push(match pooling {
            Pooling::Pool => store.wall_times(ids[i])?,
            Pooling::Fresh => Vec::new(),
            Pooling::NewSeries => store.wall_times_of(ids[i], identity, 0)?,
        });
    }
    on_event(CompareEvent::Started {
        benchmark: &benchmark,
        variants: variants.len(),
        prior_runs: prior.iter().map(|p| p.len()).sum(),
        session,
    });
    notes.extend(extras.notes.iter().cloned());
    notes.extend(env::setup_warnings(&environment));
    store.set_notes(session, &notes)?;

    let mut done = vec![0usize; variants.len()];
    let mut warmups = 0usize;
    let mut store_error: Option<StoreError> = None;
    let cpu0 = env::cpu_times();
    let (u0, s0) = runner::children_cpu();
    let t0 = std::time::Instant::now();
    let result = runner::run_trials(variants.len(), &req.plan, &prior, stop, trials, |ev| {
        match ev {
            Event::Warmup { variant, index } => {
                warmups += 1;
                on_event(CompareEvent::Warmup {
                    variant: &variants[variant].name,
                    index,
                })
            }
            Event::Run(r) => {
                let identity = identities[r.variant].as_deref();
                if let Err(e) = store.add_run_of(session, ids[r.variant], r, identity) {
                    let msg = e.to_string();
                    store_error = Some(e);
                    return Err(msg);
                }
                done[r.variant] += 1;
                on_event(CompareEvent::Run {
                    variant: &variants[r.variant].name,
                    run: r,
                });
            }
            Event::Round { half_width_pct, .. } => {
                let worst = half_width_pct
                    .iter()
                    .skip(if half_width_pct.len() > 1 { 1 } else { 0 })
                    .cloned()
                    .fold(0.0, f64::max);
                on_event(CompareEvent::Round {
                    worst_half_width_pct: worst,
                });
            }
        }
        Ok(())
    });
    let wall = t0.elapsed().as_secs_f64();
    let (u1, s1) = runner::children_cpu();
    let finished: usize = done.iter().sum();
    let kept = |phase: Phase, counted: usize| Kept {
        store: req.store.clone(),
        session,
        phase,
        runs: finished,
        commands_with_runs: done.iter().filter(|&&n| n > 0).count(),
        counters: match source {
            Some(_) => CountersKept::Taken {
                taken: counted,
                of: variants.len(),
            },
            None => CountersKept::NotAsked,
        },
    };

    if let (Some(a), Some(b)) = (cpu0, env::cpu_times()) {
        if let Some(w) = env::other_load_warning(
            b.busy_s - a.busy_s,
            (u1 - u0) + (s1 - s0),
            wall,
            env::logical_cpus(),
        ) {
            notes.push(w);
        }
    }

    let ending = match result {
        Ok(e) => e,
        Err(e) => {
            store.set_notes(session, &notes)?;
            store.finish_session(session, "failed")?;
            if let Some(se) = store_error {
                return Err(CompareError::StoreDuringRuns(se));
            }
            let store = req.store.clone();
            return Err(match e {
                RunError::Failed { .. } | RunError::Spawn { .. } => CompareError::Command {
                    source: Box::new(e),
                    finished,
                    store,
                },
                other => CompareError::Runner {
                    source: Box::new(other),
                    finished,
                    store,
                },
            });
        }
    };

    match &ending {
        Ending::Interrupted => {
            store.set_notes(session, &notes)?;
            store.finish_session(session, "interrupted")?;
            let phase = if warmups < req.plan.warmup * variants.len() {
                Phase::Warmup
            } else {
                Phase::Timing
            };
            return Ok(CompareOutcome::Interrupted(kept(phase, 0)));
        }
        Ending::TargetMissed { half_width_pct } => {
            if let StopRule::Adaptive {
                target_pct,
                max_runs,
                ..
            } = req.plan.stop
            {
                notes.push(Warning::TargetMissed {
                    target_pct,
                    max_runs,
                    half_width_pct: *half_width_pct,
                });
            }
        }
        Ending::Done | Ending::TargetReached => {}
    }
    store.set_notes(session, &notes)?;

    // Counters: one extra run per variant under the counter (a few where one count would
    // not be deterministic). The source's sentence is stored first in the general form
    // that holds whatever happens, then replaced by what holds of these counts.
    if let Some(src) = &source {
        store.add_counter_source(session, src.name(), &src.describe())?;
        let mut counted: Vec<(&str, Vec<crate::counters::Counter>)> = Vec::new();
        for (i, v) in variants.iter().enumerate() {
            if stop.load(Ordering::SeqCst) {
                store.finish_session(session, "interrupted")?;
                return Ok(CompareOutcome::Interrupted(kept(Phase::Counting, i)));
            }
            on_event(CompareEvent::Counting {
                variant: &v.name,
                source: src.name(),
            });
            match src.measure(&CountedRun::of(v, &req.plan)) {
                Ok(cs) => {
                    store.add_counters_of(session, ids[i], &cs, identities[i].as_deref())?;
                    counted.push((&v.name, cs));
                }
                // Ctrl-C reaches the counted command too (the terminal signals the whole
                // process group), maybe before the handler has set `stop`.
                Err(CounterError::Interrupted { .. }) => {
                    store.finish_session(session, "interrupted")?;
                    return Ok(CompareOutcome::Interrupted(kept(Phase::Counting, i)));
                }
                Err(_) if stop.load(Ordering::SeqCst) => {
                    store.finish_session(session, "interrupted")?;
                    return Ok(CompareOutcome::Interrupted(kept(Phase::Counting, i)));
                }
                Err(source) => {
                    store.finish_session(session, "failed")?;
                    return Err(CompareError::Counting {
                        source: Box::new(source),
                        store: req.store.clone(),
                    });
                }
            }
        }
        let pairs: Vec<(&str, &[crate::counters::Counter])> =
            counted.iter().map(|(n, cs)| (*n, cs.as_slice())).collect();
        store.set_counter_source(session, src.name(), &src.describe_counted(&pairs))?;
    }
    store.finish_session(session, "complete")?;

    let (analysis, counters_from) = verdict(
        &store,
        &benchmark,
        variants,
        &Selection {
            session,
            ids: &ids,
            identities: &identities,
            pooling,
        },
    )?;
    if let Some(path) = &req.json {
        let doc = serde_json::json!({
            "store": req.store.display().to_string(),
            "session": session,
            "ending": ending,
            "benchmark": analysis,
            "pooling": pooling,
            "counters_from": counters_from,
        });
        let text =
            serde_json::to_vec_pretty(&doc).map_err(|e| CompareError::Json(e.to_string()))?;
        kfdo_outfile::write_readable(path, &text).map_err(|e| CompareError::Json(e.to_string()))?;
    }
    Ok(CompareOutcome::Complete {
        session,
        ending,
        analysis: Box::new(analysis),
        counters_from,
    })
}

/// Which stored runs and counters of the variants the verdict may use.
struct Selection<'a> {
    session: i64,
    ids: &'a [i64],
    identities: &'a [Option<String>],
    pooling: Pooling,
}

/// The verdict from what is stored for `benchmark` of the series `series` says (runs
/// of the same program, or all of them, or this session's), showing only `variants`,
/// baseline first, in the given order; and where counters not taken in this session
/// come from.
fn verdict(
    store: &Store,
    benchmark: &str,
    variants: &[Variant],
    series: &Selection<'_>,
) -> Result<(BenchmarkAnalysis, Vec<CountersOrigin>), CompareError> {
    let contents = store.load()?;
    let mut bench = contents
        .benchmarks
        .into_iter()
        .find(|b| b.name == benchmark)
        .ok_or_else(|| {
            CompareError::Request("the benchmark just stored is missing from the store".into())
        })?;
    let mut counters_from = Vec::new();
    for sv in &mut bench.variants {
        let Some(i) = series.ids.iter().position(|&id| id == sv.id) else {
            continue;
        };
        let identity = series.identities[i].as_deref();
        let of_run = store.run_identities(sv.id)?;
        sv.runs.retain(|r| match series.pooling {
            Pooling::Pool => true,
            Pooling::Fresh => r.session == series.session,
            Pooling::NewSeries => {
                of_run.get(&(r.session, r.seq)).map(|x| x.as_deref()) == Some(identity)
            }
        });
        let counted = match series.pooling {
            // The latest counters of the variant, whatever it ran.
            Pooling::Pool => store.latest_counters(sv.id)?,
            _ => store.counters_of(sv.id, identity)?,
        }
        .filter(|c| series.pooling != Pooling::Fresh || c.session == series.session);
        sv.counters = match counted {
            Some(c) => {
                if c.session != series.session && !c.counters.is_empty() {
                    counters_from.push(CountersOrigin {
                        variant: sv.variant.name.clone(),
                        session: c.session,
                        started_unix: c.started_unix,
                    });
                }
                c.counters
            }
            None => Vec::new(),
        };
    }
    let mut analysis = analysis::analyze_benchmark(&bench, stats::BOOTSTRAP_RESAMPLES);
    let order: Vec<usize> = variants
        .iter()
        .filter_map(|v| analysis.variants.iter().position(|a| a.name == v.name))
        .collect();
    if order.first() != Some(&0) {
        // The stored baseline is another variant: compare against ours.
        let picked: Vec<_> = order
            .iter()
            .map(|&i| analysis.variants[i].clone())
            .collect();
        analysis.variants = picked;
        analysis.baseline = variants[0].name.clone();
        analysis::compare_with_baseline(&mut analysis.variants, stats::BOOTSTRAP_RESAMPLES);
    }
    Ok((analysis, counters_from))
}
