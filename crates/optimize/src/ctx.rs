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
    /// The family `cc` belongs to: it picks the flags and the profile formats.
    pub compiler: crate::compiler::Compiler,
    /// `[build] target`: the architecture the builds are for, when not this machine's.
    pub target: Option<crate::target::Target>,
    pub profdata: String,
    pub profgen: String,
    /// Independent steps (builds) run at once.
    pub jobs: usize,
    pub quiet: bool,
    /// Record the optimized build too, for the heat map of baseline vs optimized.
    pub heatmaps: bool,
}

/// What every pipeline's steps share: the output directory, the step cache, the
/// progress display, the logs and the identities that key the steps.
pub struct Steps {
    pub out: PathBuf,
    pub cache: Cache,
    pub progress: Progress,
    pub logs: PathBuf,
    /// `CC --version` and friends: a new compiler rebuilds everything.
    pub tool_ids: String,
    /// kfdo's version: part of the record and benchmark keys.
    pub kfdo_version: String,
    /// Content hash of the kfdo executable: part of the conversion's key.
    pub kfdo_hash: String,
    /// Each step this run: (name, seconds it took when it ran, whether it was cached).
    pub timings: std::sync::Mutex<Vec<(String, f64, bool)>>,
}

/// The program pipeline's context: its options and the shared [`Steps`].
pub struct Ctx {
    pub opts: Options,
    pub steps: Steps,
}

impl std::ops::Deref for Ctx {
    type Target = Steps;
    fn deref(&self) -> &Steps {
        &self.steps
    }
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
        let steps = Steps::new(
            &opts.out,
            &[&opts.cc, &opts.cxx],
            &opts.kfdo_exe,
            total_steps,
            opts.quiet,
        )?;
        Ok(Ctx { opts, steps })
    }

    pub fn recipe(&self) -> &Recipe {
        &self.opts.recipe
    }
}

impl Steps {
    /// The step state and logs under `out`; `tools` are the compilers whose versions
    /// key every build.
    pub fn new(
        out: &Path,
        tools: &[&str],
        kfdo_exe: &Path,
        total_steps: usize,
        quiet: bool,
    ) -> anyhow::Result<Steps> {
        let state = out.join(".kfdo/steps");
        let logs = out.join("logs");
        std::fs::create_dir_all(&logs)
            .with_context(|| format!("cannot create {}", logs.display()))?;
        Ok(Steps {
            out: out.to_path_buf(),
            cache: Cache::open(&state)?,
            progress: Progress::new(total_steps, quiet),
            logs,
            tool_ids: tool_identity(tools)?,
            kfdo_version: env!("CARGO_PKG_VERSION").to_string(),
            kfdo_hash: crate::cache::content_hash(kfdo_exe)?,
            timings: std::sync::Mutex::new(Vec::new()),
        })
    }

    pub fn dir(&self, rel: &str) -> PathBuf {
        self.out.join(rel)
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
            self.timed(step, done.seconds, true);
            return Ok(done);
        }
        self.cache.forget(step);
        let log_path = self.log_path(step);
        let bar = self.progress.start(step, Some(&log_path));
        let log = Log::create(step, &log_path)?;
        let t0 = Instant::now();
        let facts = body(&log)?;
        let seconds = t0.elapsed().as_secs_f64();
        let done = self.cache.save(step, &key, outputs, facts, seconds)?;
        bar.finish();
        self.timed(step, seconds, false);
        Ok(done)
    }

    fn timed(&self, step: &str, seconds: f64, cached: bool) {
        if let Ok(mut t) = self.timings.lock() {
            t.push((step.to_string(), seconds, cached));
        }
    }

    /// The per-step timing table (Markdown): what ran, for how long, and what was cached.
    pub fn timing_table(&self) -> String {
        let t = self.timings.lock().map(|t| t.clone()).unwrap_or_default();
        let mut s = String::from("| step | seconds | this run |\n|:--|--:|:--|\n");
        for (name, secs, cached) in &t {
            s.push_str(&format!(
                "| {name} | {secs:.1} | {} |\n",
                if *cached {
                    "cached (time of the run that made it)"
                } else {
                    "ran"
                }
            ));
        }
        let ran: f64 = t.iter().filter(|x| !x.2).map(|x| x.1).sum();
        s.push_str(&format!("| **steps run now** | **{ran:.1}** | |\n"));
        s
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
