//! A comparison's verdict: from everything stored for the benchmark that the pooling
//! lets count, the arms compared in the request's order, baseline first; and the JSON
//! of it.

use std::path::Path;

use super::request::CompareError;
use crate::analysis::{self, BenchmarkAnalysis};
use crate::pooling::{CountersOrigin, Pooling};
use crate::runner::{Arm, Ending};
use crate::stats;
use crate::store::Store;

/// Which stored runs and counters of the arms the verdict may use.
pub(super) struct Selection<'a> {
    pub session: i64,
    pub ids: &'a [i64],
    pub identities: &'a [Option<String>],
    pub pooling: Pooling,
}

/// The verdict from what is stored for `benchmark` of the series `series` says (runs
/// of the same program, or all of them, or this session's), showing only `arms`,
/// baseline first, in the given order; and where counters not taken in this session
/// come from.
pub(super) fn verdict(
    store: &Store,
    benchmark: &str,
    arms: &[Arm],
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
    let order: Vec<usize> = arms
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
        analysis.baseline = arms[0].name.clone();
        analysis::compare_with_baseline(&mut analysis.variants, stats::BOOTSTRAP_RESAMPLES);
    }
    Ok((analysis, counters_from))
}

/// Writes the verdict of session `session` of `store` as JSON to `path`.
pub(super) fn write_json(
    path: &Path,
    store: &Path,
    session: i64,
    ending: &Ending,
    analysis: &BenchmarkAnalysis,
    pooling: Pooling,
    counters_from: &[CountersOrigin],
) -> Result<(), CompareError> {
    let doc = serde_json::json!({
        "store": store.display().to_string(),
        "session": session,
        "ending": ending,
        "benchmark": analysis,
        "pooling": pooling,
        "counters_from": counters_from,
    });
    let text = serde_json::to_vec_pretty(&doc).map_err(|e| CompareError::Json(e.to_string()))?;
    kfdo_outfile::write_readable(path, &text).map_err(|e| CompareError::Json(e.to_string()))
}
