//! What every step sees: the options, the output layout, the step cache,
//! the progress display and the tools' identities; and `step`, which runs a
//! step's body only when the cache does not already hold its result.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::Context;

use crate::cache::{file_name, Cache, Done};
use crate::exec::Log;
use crate::progress::Progress;
use crate::recipe::Recipe;
use crate::variant::Variant;

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct Options {
    pub recipe: Recipe,
    pub variants: Vec<Variant>,
    /// How the training run is recorded; None is auto (which picks, and says why).
    pub method: Option<kfdo_record::hardware::Method>,
    /// `kfdo record --period`, when given.
    pub period: Option<u64>,
    /// The benchmark's counters; `Auto` here means hardware perf, else emulated.
    pub counters: kfdo_bench::counters::Choice,
    /// Timed runs per variant, overriding the recipe's.
    pub runs: Option<usize>,
    /// Output directory.
    pub out: PathBuf,
    /// The executable that holds kfdo's code (the running one): its content hash keys
    /// the steps that kfdo's own code does (conversion, report).
    pub kfdo_exe: PathBuf,
    pub cc: String,
    pub cxx: String,
    pub profdata: String,
    pub profgen: String,
    /// Independent steps (builds) run at once.
    pub jobs: usize,
    pub quiet: bool,
    /// Record the optimized build too, for the heat map of baseline vs optimized.
    pub heatmaps: bool,
}

pub struct Ctx {
    pub opts: Options,
    pub cache: Cache,
    pub progress: Progress,
    pub logs: PathBuf,
    /// `CC --version` and friends: a new compiler rebuilds everything.
    pub tool_ids: String,
    /// kfdo's version: part of the record and benchmark keys.
    pub kfdo_version: String,
    /// Content hash of the kfdo executable: part of the conversion's key.
    pub kfdo_hash: String,
}

/// Tool versions, as one string for keys.
pub fn tool_identity(tools: &[&str]) -> anyhow::Result<String> {
    let mut id = String::new();
    for t in tools {
        let out = Command::new(t).arg("--version").output().map_err(|e| {
            anyhow::anyhow!(
                "cannot run {t}: {e} (install it, e.g. bash scripts/install-deps.sh, or point kfdo optimize at another with --cc/--cxx)"
            )
        })?;
        id.push_str(t);
        id.push('\n');
        id.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    Ok(id)
}

impl Ctx {
    pub fn new(opts: Options, total_steps: usize) -> anyhow::Result<Ctx> {
        let state = opts.out.join(".kfdo/steps");
        let logs = opts.out.join("logs");
        std::fs::create_dir_all(&logs)
            .with_context(|| format!("cannot create {}", logs.display()))?;
        let tool_ids = tool_identity(&[&opts.cc, &opts.cxx])?;
        let kfdo_hash = crate::cache::content_hash(&opts.kfdo_exe)?;
        Ok(Ctx {
            cache: Cache::open(&state)?,
            progress: Progress::new(total_steps, opts.quiet),
            logs,
            tool_ids,
            kfdo_version: env!("CARGO_PKG_VERSION").to_string(),
            kfdo_hash,
            opts,
        })
    }

    pub fn recipe(&self) -> &Recipe {
        &self.opts.recipe
    }

    pub fn dir(&self, rel: &str) -> PathBuf {
        self.opts.out.join(rel)
    }

    pub fn log_path(&self, step: &str) -> PathBuf {
        self.logs.join(format!("{}.log", file_name(step)))
    }

    /// Runs `body` unless the cache holds `step` with this key and its
    /// outputs intact. `body` gets the step's log and returns facts to keep.
    pub fn step(
        &self,
        step: &str,
        key: String,
        outputs: &[PathBuf],
        body: impl FnOnce(&Log) -> anyhow::Result<serde_json::Value>,
    ) -> anyhow::Result<Done> {
        if let Some(done) = self.cache.lookup(step, &key) {
            self.progress.cached(step);
            return Ok(done);
        }
        self.cache.forget(step);
        let log_path = self.log_path(step);
        let bar = self.progress.start(step, Some(&log_path));
        let log = Log::create(step, &log_path)?;
        let t0 = Instant::now();
        let facts = body(&log)?;
        let done = self
            .cache
            .save(step, &key, outputs, facts, t0.elapsed().as_secs_f64())?;
        bar.finish();
        Ok(done)
    }
}

/// Removes and recreates a step's working directory, so nothing of an
/// earlier (perhaps failed) run leaks into this one.
pub fn fresh_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot remove {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}
