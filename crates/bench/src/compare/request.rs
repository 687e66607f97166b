//! What a comparison is asked, tells while it runs, and ends with: the request (and
//! its checks), the events, the outcome and the errors.

use std::path::PathBuf;

use crate::analysis::BenchmarkAnalysis;
use crate::counters::{Choice, CounterError};
use crate::kept::Kept;
use crate::pooling::{CountersOrigin, SeriesChange};
use crate::runner::{Arm, Ending, Protocol, RunError, RunResult, StopRule};
use crate::store::StoreError;
use crate::warning::Warning;

/// A comparison to run.
#[derive(Debug, Clone)]
pub struct CompareRequest {
    /// The commands under test; the first is the baseline.
    pub arms: Vec<Arm>,
    /// The benchmark these runs belong to (default: the first command's program name).
    /// Runs of the same benchmark and variant names in the store are pooled.
    pub benchmark: Option<String>,
    pub protocol: Protocol,
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

/// The request's own errors, found before anything is stored or run.
pub(super) fn check(req: &CompareRequest) -> Result<(), CompareError> {
    if req.arms.is_empty() {
        return Err(CompareError::Request("no command to compare".into()));
    }
    for (i, v) in req.arms.iter().enumerate() {
        if req.arms[..i].iter().any(|w| w.name == v.name) {
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
            crate::counters::emulated::direct_command(&req.protocol.shell.argv(&v.command))
                .map_err(|why| CompareError::Request(format!("variant '{}': {why}", v.name)))?;
        }
    }
    Ok(())
}
