//! The tags a store holds, read back from the sessions that recorded them.

use super::keys::{KERNEL_KEY, TAG_KEY};
use crate::running_kernel::RunningKernel;
use crate::store::{Benchmark, Contents, Session, StoredVariant};

/// One tag of one benchmark.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StoredTag {
    pub benchmark: String,
    pub name: String,
    /// The command its sessions ran.
    pub command: String,
    /// The sessions that recorded it, in order.
    pub sessions: Vec<i64>,
    /// The kernels those sessions ran, distinct, in first-seen order: one, unless runs
    /// were added with `--force-tag`. A session without a kernel record is left out.
    pub kernels: Vec<RunningKernel>,
    /// Timed runs of those sessions.
    pub runs: usize,
}

impl StoredTag {
    /// The kernels as one line: "release, build-id ID; ...".
    pub fn kernels_text(&self) -> String {
        if self.kernels.is_empty() {
            return "unknown kernel".into();
        }
        let all: Vec<String> = self.kernels.iter().map(|k| k.to_string()).collect();
        all.join("; ")
    }
}

/// The tag a session recorded, if it is a tagged one.
pub(crate) fn session_tag(s: &Session) -> Option<&str> {
    s.settings.get(TAG_KEY)?.as_str()
}

fn session_kernel(s: &Session) -> Option<RunningKernel> {
    serde_json::from_value(s.environment.get(KERNEL_KEY)?.clone()).ok()
}

/// Every tag of one benchmark, in order of first session.
fn tags_of(b: &Benchmark) -> Vec<StoredTag> {
    let mut out: Vec<StoredTag> = Vec::new();
    for s in &b.sessions {
        let Some(tag) = session_tag(s) else { continue };
        let Some(variant) = b.variants.iter().find(|v| v.variant.name == tag) else {
            // A session that failed before registering its variant.
            continue;
        };
        let i = match out.iter().position(|t| t.name == tag) {
            Some(i) => i,
            None => {
                out.push(StoredTag {
                    benchmark: b.name.clone(),
                    name: tag.to_string(),
                    command: variant.variant.command.clone(),
                    sessions: Vec::new(),
                    kernels: Vec::new(),
                    runs: 0,
                });
                out.len() - 1
            }
        };
        let t = &mut out[i];
        t.sessions.push(s.id);
        t.runs += variant.runs.iter().filter(|r| r.session == s.id).count();
        if let Some(k) = session_kernel(s) {
            if !t.kernels.contains(&k) {
                t.kernels.push(k);
            }
        }
    }
    out
}

/// Every tag in the store, benchmark by benchmark.
pub fn stored_tags(c: &Contents) -> Vec<StoredTag> {
    c.benchmarks.iter().flat_map(tags_of).collect()
}

/// The tags as an error lists them: "'benchmark': A, B" per benchmark.
pub(crate) fn known_list(tags: &[StoredTag]) -> Vec<String> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for t in tags {
        match out.iter_mut().find(|(b, _)| *b == t.benchmark) {
            Some((_, names)) => names.push(t.name.clone()),
            None => out.push((t.benchmark.clone(), vec![t.name.clone()])),
        }
    }
    out.into_iter()
        .map(|(b, names)| format!("'{b}': {}", names.join(", ")))
        .collect()
}

/// `bench` with only `tags`, in that order (the first is the baseline), and only their
/// tagged sessions' runs: the ones whose kernel is known.
pub(crate) fn only_tags(bench: &Benchmark, tags: &[&StoredTag]) -> Benchmark {
    let variant = |t: &StoredTag| -> StoredVariant {
        let mut v = bench
            .variants
            .iter()
            .find(|v| v.variant.name == t.name)
            .cloned()
            .expect("a stored tag is a variant of its benchmark");
        v.runs.retain(|r| t.sessions.contains(&r.session));
        v
    };
    Benchmark {
        name: bench.name.clone(),
        variants: tags.iter().map(|t| variant(t)).collect(),
        sessions: bench
            .sessions
            .iter()
            .filter(|s| tags.iter().any(|t| t.sessions.contains(&s.id)))
            .cloned()
            .collect(),
        counter_sources: bench.counter_sources.clone(),
    }
}
