//! The counted part of a comparison: one extra run of each arm under the counter source
//! (a few where one count would not be deterministic), stored with the session.

use std::sync::atomic::{AtomicBool, Ordering};

use super::request::{CompareError, CompareEvent, CompareOutcome, CompareRequest};
use super::session::Session;
use super::timing::Timed;
use crate::counters::{CountedRun, Counter, CounterError};
use crate::kept::Phase;

/// Counts every arm, if counters were asked for. Some outcome where the counting was
/// interrupted (the session is marked so); None when it is done.
pub(super) fn count_arms(
    req: &CompareRequest,
    s: &Session,
    timed: &Timed,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(CompareEvent<'_>),
) -> Result<Option<CompareOutcome>, CompareError> {
    let Some(src) = &s.source else {
        return Ok(None);
    };
    // The source's sentence is stored first in the general form that holds whatever
    // happens, then replaced by what holds of these counts.
    s.store
        .add_counter_source(s.id, src.name(), &src.describe())?;
    let interrupted = |counted: usize| -> Result<Option<CompareOutcome>, CompareError> {
        s.store.finish_session(s.id, "interrupted")?;
        Ok(Some(CompareOutcome::Interrupted(timed.kept(
            req,
            s,
            Phase::Counting,
            counted,
        ))))
    };
    let mut counted: Vec<(&str, Vec<Counter>)> = Vec::new();
    for (i, v) in req.arms.iter().enumerate() {
        if stop.load(Ordering::SeqCst) {
            return interrupted(i);
        }
        on_event(CompareEvent::Counting {
            variant: &v.name,
            source: src.name(),
        });
        match src.measure(&CountedRun::of(v, &req.protocol)) {
            Ok(cs) => {
                s.store
                    .add_counters_of(s.id, s.ids[i], &cs, s.identities[i].as_deref())?;
                counted.push((&v.name, cs));
            }
            // Ctrl-C reaches the counted command too (the terminal signals the whole
            // process group), maybe before the handler has set `stop`.
            Err(CounterError::Interrupted { .. }) => return interrupted(i),
            Err(_) if stop.load(Ordering::SeqCst) => return interrupted(i),
            Err(source) => {
                s.store.finish_session(s.id, "failed")?;
                return Err(CompareError::Counting {
                    source: Box::new(source),
                    store: req.store.clone(),
                });
            }
        }
    }
    let pairs: Vec<(&str, &[Counter])> =
        counted.iter().map(|(n, cs)| (*n, cs.as_slice())).collect();
    s.store
        .set_counter_source(s.id, src.name(), &src.describe_counted(&pairs))?;
    Ok(None)
}
