//! A comparison's session begun in the store: the counter source picked, each arm's
//! variant row and program identity, the earlier runs that count, and the notes so far.

use super::request::{default_benchmark, CompareError, CompareEvent, CompareRequest};
use crate::counters::{self, Selected};
use crate::pooling::{Pooling, SeriesChange};
use crate::store::Store;
use crate::warning::Warning;
use crate::{env, identity};

/// What a caller adds to the session it starts, beside the machine and the protocol: a
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

/// A session begun in the store, and what the runs, the counters and the verdict need.
pub(super) struct Session {
    pub store: Store,
    pub benchmark: String,
    /// The session's id in the store.
    pub id: i64,
    /// Each arm's variant row in the store, in the request's order.
    pub ids: Vec<i64>,
    /// What each arm runs (its program's build-id or content hash), where known.
    pub identities: Vec<Option<String>>,
    pub pooling: Pooling,
    /// The counter source, None where no counters were asked for.
    pub source: Selected,
    /// The session's warnings so far, stored with it.
    pub notes: Vec<Warning>,
    /// Each arm's earlier stored wall times that count towards the stop rule.
    pub prior: Vec<Vec<f64>>,
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

impl Session {
    /// Picks the counter source (so a bad choice fails before any run), opens the store,
    /// begins the session with the machine and the settings, and finds each arm's
    /// earlier runs that count.
    pub fn open(
        req: &CompareRequest,
        extras: &SessionExtras,
        on_event: &mut dyn FnMut(CompareEvent<'_>),
    ) -> Result<Session, CompareError> {
        let arms = &req.arms;
        let benchmark = req
            .benchmark
            .clone()
            .unwrap_or_else(|| default_benchmark(&arms[0].command));
        let (source, mut notes) =
            counters::select(req.counters).map_err(|e| CompareError::Counters(Box::new(e)))?;
        for n in &notes {
            on_event(CompareEvent::CounterNote(n));
        }

        let store = Store::open(&req.store)?;
        if let Some(runs) = store.upgraded_runs().filter(|&n| n > 0) {
            on_event(CompareEvent::StoreUpgraded { runs });
        }
        let identities: Vec<Option<String>> = arms
            .iter()
            .map(|v| identity::of_arm(v, &req.protocol))
            .collect();
        let environment = env::capture(env!("CARGO_PKG_VERSION"));
        // The keys are the store's: sessions written before the runner's types were
        // named Arm and Protocol read the same.
        let settings = serde_json::json!({
            "plan": &req.protocol,
            "counters": format!("{:?}", req.counters),
            "variants": arms,
        });
        let id = store.begin_session(
            &benchmark,
            &with_keys(
                serde_json::to_value(&environment).unwrap_or_default(),
                &extras.environment,
            ),
            &with_keys(settings, &extras.settings),
        )?;
        let ids: Vec<i64> = arms
            .iter()
            .map(|v| store.variant(&benchmark, v))
            .collect::<Result<_, _>>()?;
        let pooling = extras.pooling;
        let mut prior: Vec<Vec<f64>> = Vec::new();
        for (i, v) in arms.iter().enumerate() {
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
            variants: arms.len(),
            prior_runs: prior.iter().map(|p| p.len()).sum(),
            session: id,
        });
        notes.extend(extras.notes.iter().cloned());
        notes.extend(env::setup_warnings(&environment));
        store.set_notes(id, &notes)?;
        Ok(Session {
            store,
            benchmark,
            id,
            ids,
            identities,
            pooling,
            source,
            notes,
            prior,
        })
    }
}
