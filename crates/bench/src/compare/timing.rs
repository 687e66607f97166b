//! The timed part of a comparison: the interleaved runs, each stored as it finishes,
//! and what the session keeps when it stops early.

use std::sync::atomic::AtomicBool;

use super::request::{CompareError, CompareEvent, CompareRequest};
use super::session::Session;
use crate::env;
use crate::kept::{CountersKept, Kept, Phase};
use crate::runner::{self, Ending, Event, RunError, Trials};
use crate::store::StoreError;
use crate::warning::Warning;

/// What the timed runs left besides how they ended.
pub(super) struct Timed {
    /// Timed runs stored, per arm.
    pub done: Vec<usize>,
    pub warmups: usize,
    /// The store error that stopped the runs, if one did.
    pub store_error: Option<StoreError>,
    /// Other processes' CPU time during the runs, where it was high.
    pub other_load: Option<Warning>,
}

impl Timed {
    pub fn finished(&self) -> usize {
        self.done.iter().sum()
    }

    /// What an interrupted session kept, `counted` arms' counters taken.
    pub fn kept(&self, req: &CompareRequest, s: &Session, phase: Phase, counted: usize) -> Kept {
        Kept {
            store: req.store.clone(),
            session: s.id,
            phase,
            runs: self.finished(),
            commands_with_runs: self.done.iter().filter(|&&n| n > 0).count(),
            counters: match s.source {
                Some(_) => CountersKept::Taken {
                    taken: counted,
                    of: req.arms.len(),
                },
                None => CountersKept::NotAsked,
            },
        }
    }

    /// Where the runs were when an interruption stopped them.
    pub fn phase(&self, req: &CompareRequest) -> Phase {
        if self.warmups < req.protocol.warmup * req.arms.len() {
            Phase::Warmup
        } else {
            Phase::Timing
        }
    }
}

/// Runs the arms as the protocol says, storing every timed run as it finishes: how the
/// runs ended, and what they left.
pub(super) fn time_runs(
    req: &CompareRequest,
    s: &Session,
    trials: &mut dyn Trials,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(CompareEvent<'_>),
) -> (Result<Ending, RunError>, Timed) {
    let arms = &req.arms;
    let mut done = vec![0usize; arms.len()];
    let mut warmups = 0usize;
    let mut store_error: Option<StoreError> = None;
    let cpu0 = env::cpu_times();
    let (u0, s0) = runner::children_cpu();
    let t0 = std::time::Instant::now();
    let result = runner::run_trials(arms.len(), &req.protocol, &s.prior, stop, trials, |ev| {
        match ev {
            Event::Warmup { variant, index } => {
                warmups += 1;
                on_event(CompareEvent::Warmup {
                    variant: &arms[variant].name,
                    index,
                })
            }
            Event::Run(r) => {
                let identity = s.identities[r.variant].as_deref();
                if let Err(e) = s.store.add_run_of(s.id, s.ids[r.variant], r, identity) {
                    let msg = e.to_string();
                    store_error = Some(e);
                    return Err(msg);
                }
                done[r.variant] += 1;
                on_event(CompareEvent::Run {
                    variant: &arms[r.variant].name,
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
    let other_load = match (cpu0, env::cpu_times()) {
        (Some(a), Some(b)) => env::other_load_warning(
            b.busy_s - a.busy_s,
            (u1 - u0) + (s1 - s0),
            wall,
            env::logical_cpus(),
        ),
        _ => None,
    };
    let timed = Timed {
        done,
        warmups,
        store_error,
        other_load,
    };
    (result, timed)
}

/// The error of timed runs that failed, after the session is marked failed with its
/// notes; the store's own error where it could not be written.
pub(super) fn runs_failed(
    req: &CompareRequest,
    s: &Session,
    e: RunError,
    store_error: Option<StoreError>,
    finished: usize,
) -> Result<CompareError, CompareError> {
    s.store.set_notes(s.id, &s.notes)?;
    s.store.finish_session(s.id, "failed")?;
    if let Some(se) = store_error {
        return Ok(CompareError::StoreDuringRuns(se));
    }
    let store = req.store.clone();
    Ok(match e {
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
    })
}
