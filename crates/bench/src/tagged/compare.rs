//! `kfdo compare --baseline-tag A --tag B`: judge two stored tags, runs nothing.

use std::path::PathBuf;

use super::error::TagError;
use super::stored::{known_list, only_tags, stored_tags, StoredTag};
use crate::analysis::{self, BenchmarkAnalysis};
use crate::stats;
use crate::store::{Benchmark, Contents, Store};
use crate::warning::Warning;

#[derive(Debug, Clone)]
pub struct TagCompareRequest {
    pub store: PathBuf,
    pub baseline: String,
    pub tag: String,
    /// Needed only when more than one benchmark has both tags.
    pub benchmark: Option<String>,
    /// Also write the verdict here as JSON.
    pub json: Option<PathBuf>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct TagComparison {
    pub store: PathBuf,
    pub baseline: StoredTag,
    pub tag: StoredTag,
    /// The baseline tag first; its warnings start with [`Warning::NotInterleaved`].
    pub analysis: BenchmarkAnalysis,
}

/// Loads tags `req.baseline` and `req.tag` of one benchmark and compares the second
/// with the first, as an interleaved comparison would be judged.
pub fn compare_tags(req: &TagCompareRequest) -> Result<TagComparison, TagError> {
    if req.baseline == req.tag {
        return Err(TagError::Request(format!(
            "--baseline-tag and --tag are both '{}'; compare two tags of results store {}",
            req.tag,
            req.store.display()
        )));
    }
    if !req.store.exists() {
        return Err(TagError::StoreMissing {
            store: req.store.clone(),
        });
    }
    let contents = Store::open_existing(&req.store)?.load()?;
    let tags = stored_tags(&contents);
    for name in [&req.baseline, &req.tag] {
        if !tags.iter().any(|t| &t.name == name) {
            return Err(TagError::UnknownTag {
                store: req.store.clone(),
                tag: name.clone(),
                known: known_list(&tags),
            });
        }
    }
    let bench = pick_benchmark(req, &contents, &tags)?;
    let find = |name: &str| {
        tags.iter()
            .find(|t| t.benchmark == bench.name && t.name == name)
            .cloned()
            .expect("pick_benchmark chose a benchmark with both tags")
    };
    let (a, b) = (find(&req.baseline), find(&req.tag));
    for t in [&a, &b] {
        if t.runs < 2 {
            return Err(TagError::TooFewRuns {
                store: req.store.clone(),
                tag: t.name.clone(),
                benchmark: t.benchmark.clone(),
                runs: t.runs,
            });
        }
    }

    let mut analysis =
        analysis::analyze_benchmark(&only_tags(bench, &[&a, &b]), stats::BOOTSTRAP_RESAMPLES);
    analysis.warnings.splice(0..0, tag_warnings(&a, &b));
    let done = TagComparison {
        store: req.store.clone(),
        baseline: a,
        tag: b,
        analysis,
    };
    if let Some(path) = &req.json {
        let text = serde_json::to_vec_pretty(&done).map_err(|e| TagError::Json(e.to_string()))?;
        kfdo_outfile::write_readable(path, &text).map_err(|e| TagError::Json(e.to_string()))?;
    }
    Ok(done)
}

/// The benchmark to compare in: the one asked for, or the only one with both tags.
fn pick_benchmark<'c>(
    req: &TagCompareRequest,
    contents: &'c Contents,
    tags: &[StoredTag],
) -> Result<&'c Benchmark, TagError> {
    let has =
        |b: &Benchmark, name: &str| tags.iter().any(|t| t.benchmark == b.name && t.name == name);
    let both: Vec<&Benchmark> = contents
        .benchmarks
        .iter()
        .filter(|b| has(b, &req.baseline) && has(b, &req.tag))
        .collect();
    let names = || both.iter().map(|b| format!("'{}'", b.name)).collect();
    let problem = match (&req.benchmark, both.as_slice()) {
        (Some(want), _) => match both.iter().find(|b| &b.name == want) {
            Some(b) => return Ok(b),
            None => format!(
                "benchmark '{want}' does not have both tags '{}' and '{}'",
                req.baseline, req.tag
            ),
        },
        (None, [only]) => return Ok(only),
        (None, []) => format!(
            "no benchmark has both tags '{}' and '{}'",
            req.baseline, req.tag
        ),
        (None, _) => format!(
            "{} benchmarks have both tags '{}' and '{}'",
            both.len(),
            req.baseline,
            req.tag
        ),
    };
    Err(TagError::Benchmark {
        store: req.store.clone(),
        problem,
        candidates: names(),
    })
}

/// What comparing across boots adds to the usual warnings.
fn tag_warnings(a: &StoredTag, b: &StoredTag) -> Vec<Warning> {
    let mut w = vec![Warning::NotInterleaved {
        baseline: a.name.clone(),
        tag: b.name.clone(),
    }];
    let shared = a.kernels.iter().find_map(|ka| {
        let id = ka.build_id.as_ref()?;
        b.kernels
            .iter()
            .any(|kb| kb.build_id.as_ref() == Some(id))
            .then(|| id.clone())
    });
    if let Some(build_id) = shared {
        w.push(Warning::SameKernel {
            baseline: a.name.clone(),
            tag: b.name.clone(),
            build_id,
        });
    }
    for t in [a, b] {
        if t.kernels.len() > 1 {
            w.push(Warning::TagMixesKernels {
                tag: t.name.clone(),
                kernels: t.kernels.iter().map(|k| k.to_string()).collect(),
            });
        }
    }
    w
}

impl TagComparison {
    /// The verdict as `kfdo compare --baseline-tag` prints it: each tag's kernel, then
    /// the table of an interleaved comparison.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "tags of benchmark '{}' in {}: measured in separate boots, not interleaved\n",
            self.analysis.name,
            self.store.display()
        );
        for (role, t) in [("baseline", &self.baseline), ("tag", &self.tag)] {
            out.push_str(&format!(
                "  {role:<8} '{}': kernel {}; {} run(s) in {} session(s)\n",
                t.name,
                t.kernels_text(),
                t.runs,
                t.sessions.len()
            ));
        }
        out.push_str(&crate::report::text::summary(&self.analysis));
        out
    }
}
