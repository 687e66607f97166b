//! `kfdo compare --tag NAME -- CMD`: measure the running kernel under a tag.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::error::TagError;
use super::keys::{KERNEL_KEY, TAG_KEY};
use super::stored::{only_tags, stored_tags};
use crate::analysis::{self, BenchmarkAnalysis};
use crate::compare::{
    self, default_benchmark, CompareEvent, CompareOutcome, CompareRequest, SessionExtras,
};
use crate::counters::Choice;
use crate::runner::{Arm, Protocol};
use crate::running_kernel::RunningKernel;
use crate::stats;
use crate::store::Store;

/// One tagged measurement: `command` run as the single variant `tag`.
#[derive(Debug, Clone)]
pub struct TagRequest {
    pub tag: String,
    pub command: String,
    /// How the kernel was built, shown in reports.
    pub flags: Option<String>,
    /// Default: the command's program name, as for `kfdo compare`.
    pub benchmark: Option<String>,
    pub protocol: Protocol,
    pub counters: Choice,
    /// The results store, created if missing, appended to.
    pub store: PathBuf,
    pub json: Option<PathBuf>,
    /// Add runs to a tag recorded on another kernel instead of refusing.
    pub force: bool,
}

#[derive(Debug, Clone)]
pub struct TagOutcome {
    pub benchmark: String,
    /// The kernel the runs were measured on.
    pub kernel: RunningKernel,
    /// Sessions the tag had before this one (their runs are pooled with these).
    pub earlier_sessions: usize,
    pub outcome: CompareOutcome,
}

/// Runs `req.command` under the tag and stores the runs with the running kernel.
/// `stop` and `on_event` are as for [`crate::compare::compare`].
pub fn record_tag(
    req: &TagRequest,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(CompareEvent<'_>),
) -> Result<TagOutcome, TagError> {
    if req.tag.trim().is_empty() {
        return Err(TagError::Request(
            "--tag needs a name, e.g. --tag base".into(),
        ));
    }
    let benchmark = req
        .benchmark
        .clone()
        .unwrap_or_else(|| default_benchmark(&req.command));
    let (kernel, unknown_id) = RunningKernel::read();

    let mut earlier_sessions = 0;
    if req.store.exists() {
        let contents = Store::open_existing(&req.store)?.load()?;
        for t in stored_tags(&contents)
            .into_iter()
            .filter(|t| t.name == req.tag)
        {
            // Any benchmark counts: the tag names the kernel, whatever ran on it.
            if let Some(other) = t.kernels.iter().find(|k| !k.same_as(&kernel)) {
                if !req.force {
                    return Err(TagError::KernelChanged {
                        store: req.store.clone(),
                        tag: req.tag.clone(),
                        stored: Box::new(other.clone()),
                        running: Box::new(kernel),
                    });
                }
            }
            if t.benchmark == benchmark {
                if t.command != req.command {
                    return Err(TagError::CommandChanged {
                        store: req.store.clone(),
                        tag: req.tag.clone(),
                        benchmark,
                        stored: t.command,
                        given: req.command.clone(),
                    });
                }
                earlier_sessions = t.sessions.len();
            }
        }
    }

    let compare_req = CompareRequest {
        arms: vec![Arm {
            flags: req.flags.clone(),
            ..Arm::new(&req.tag, &req.command)
        }],
        benchmark: Some(benchmark.clone()),
        protocol: req.protocol.clone(),
        counters: req.counters,
        store: req.store.clone(),
        // Written below, from this tag's sessions only.
        json: None,
    };
    let extras = SessionExtras {
        environment: vec![(
            KERNEL_KEY.into(),
            serde_json::to_value(&kernel).unwrap_or_default(),
        )],
        settings: vec![(TAG_KEY.into(), req.tag.clone().into())],
        notes: unknown_id.into_iter().collect(),
        ..SessionExtras::default()
    };
    let mut outcome = compare::compare_with(&compare_req, stop, on_event, &extras)?;
    if let CompareOutcome::Complete {
        session,
        ending,
        analysis,
        ..
    } = &mut outcome
    {
        // The verdict of the tag alone: the benchmark's other tags ran in other boots,
        // and their warnings are theirs.
        **analysis = tag_verdict(&req.store, &benchmark, &req.tag)?;
        if let Some(path) = &req.json {
            let doc = serde_json::json!({
                "store": req.store.display().to_string(),
                "session": session,
                "ending": ending,
                "tag": &req.tag,
                "kernel": &kernel,
                "benchmark": &**analysis,
            });
            let text =
                serde_json::to_vec_pretty(&doc).map_err(|e| TagError::Json(e.to_string()))?;
            kfdo_outfile::write_readable(path, &text).map_err(|e| TagError::Json(e.to_string()))?;
        }
    }
    Ok(TagOutcome {
        benchmark,
        kernel,
        earlier_sessions,
        outcome,
    })
}

/// The analysis of one tag's runs, from every session that recorded it.
fn tag_verdict(store: &Path, benchmark: &str, tag: &str) -> Result<BenchmarkAnalysis, TagError> {
    let contents = Store::open_existing(store)?.load()?;
    let tags = stored_tags(&contents);
    let (Some(bench), Some(t)) = (
        contents.benchmarks.iter().find(|b| b.name == benchmark),
        tags.iter()
            .find(|t| t.benchmark == benchmark && t.name == tag),
    ) else {
        return Err(TagError::Request(format!(
            "tag '{tag}' of benchmark '{benchmark}' just stored is missing from results store {}",
            store.display()
        )));
    };
    Ok(analysis::analyze_benchmark(
        &only_tags(bench, &[t]),
        stats::BOOTSTRAP_RESAMPLES,
    ))
}
