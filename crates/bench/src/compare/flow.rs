//! A whole comparison, step by step: the session begun, the timed runs, how they ended,
//! the counters, the verdict.

use std::sync::atomic::AtomicBool;

use super::counting::count_arms;
use super::request::{check, CompareError, CompareEvent, CompareOutcome, CompareRequest};
use super::session::{Session, SessionExtras};
use super::timing::{runs_failed, time_runs};
use super::verdict::{verdict, write_json, Selection};
use crate::pooling::Pooling;
use crate::runner::{CommandTrials, Ending, StopRule, Trials};
use crate::warning::Warning;

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
        CommandTrials::new(&req.arms, &req.protocol).map_err(|e| CompareError::Runner {
            source: Box::new(e),
            finished: 0,
            store: req.store.clone(),
        })?;
    compare_trials_with(req, &mut trials, stop, on_event, extras)
}

/// Runs a comparison whose runs `trials` makes (a kernel booted with a workload, say):
/// the same interleaving, store, warnings and verdict as [`compare`]. `req.arms` name
/// and describe the arms (their `command` is what the store shows); counters, if
/// `req.counters` asks for them, run the arms' commands.
pub fn compare_trials(
    req: &CompareRequest,
    trials: &mut dyn Trials,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(CompareEvent<'_>),
) -> Result<CompareOutcome, CompareError> {
    compare_trials_with(req, trials, stop, on_event, &SessionExtras::default())
}

/// [`compare_trials`], with `extras` recorded in the session.
fn compare_trials_with(
    req: &CompareRequest,
    trials: &mut dyn Trials,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(CompareEvent<'_>),
    extras: &SessionExtras,
) -> Result<CompareOutcome, CompareError> {
    check(req)?;
    let mut s = Session::open(req, extras, on_event)?;
    let (result, timed) = time_runs(req, &s, trials, stop, on_event);
    s.notes.extend(timed.other_load.clone());
    let ending = match result {
        Ok(e) => e,
        Err(e) => {
            let finished = timed.finished();
            return Err(runs_failed(req, &s, e, timed.store_error, finished)?);
        }
    };
    s.notes.extend(target_missed(&ending, req.protocol.stop));
    s.store.set_notes(s.id, &s.notes)?;
    if let Ending::Interrupted = ending {
        s.store.finish_session(s.id, "interrupted")?;
        return Ok(CompareOutcome::Interrupted(timed.kept(
            req,
            &s,
            timed.phase(req),
            0,
        )));
    }
    if let Some(interrupted) = count_arms(req, &s, &timed, stop, on_event)? {
        return Ok(interrupted);
    }
    s.store.finish_session(s.id, "complete")?;

    let (analysis, counters_from) = verdict(
        &s.store,
        &s.benchmark,
        &req.arms,
        &Selection {
            session: s.id,
            ids: &s.ids,
            identities: &s.identities,
            pooling: s.pooling,
        },
    )?;
    if let Some(path) = &req.json {
        write_json(
            path,
            &req.store,
            s.id,
            &ending,
            &analysis,
            s.pooling,
            &counters_from,
        )?;
    }
    Ok(CompareOutcome::Complete {
        session: s.id,
        ending,
        analysis: Box::new(analysis),
        counters_from,
    })
}

/// The note of an adaptive stop rule whose target the runs did not reach.
fn target_missed(ending: &Ending, stop: StopRule) -> Option<Warning> {
    let Ending::TargetMissed { half_width_pct } = ending else {
        return None;
    };
    let StopRule::Adaptive {
        target_pct,
        max_runs,
        ..
    } = stop
    else {
        return None;
    };
    Some(Warning::TargetMissed {
        target_pct,
        max_runs,
        half_width_pct: *half_width_pct,
    })
}
