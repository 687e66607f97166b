//! What every pipeline's steps share: the output layout, the step cache, the
//! progress display and the tools' identities; and `step`, which runs a step's
//! body only when the cache does not already hold its result.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::Context;

use super::cache::{file_name, Cache, Done};
use super::exec::Log;
use super::progress::Progress;

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
            kfdo_hash: super::cache::content_hash(kfdo_exe)?,
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
            super::interrupt::cached(step);
            self.progress.cached(step);
            self.timed(step, done.seconds, true);
            return Ok(done);
        }
        self.cache.forget(step);
        let log_path = self.log_path(step);
        let bar = self.progress.start(step, Some(&log_path));
        let log = Log::create(step, &log_path)?;
        let running = super::interrupt::Running::start(step, outputs);
        let t0 = Instant::now();
        let facts = body(&log)?;
        let seconds = t0.elapsed().as_secs_f64();
        let done = self.cache.save(step, &key, outputs, facts, seconds)?;
        running.finished();
        bar.finish();
        self.timed(step, seconds, false);
        Ok(done)
    }

    fn timed(&self, step: &str, seconds: f64, cached: bool) {
        if let Ok(mut t) = self.timings.lock() {
            t.push((step.to_string(), seconds, cached));
        }
    }

    /// The run's first lines: the recipe (`what`: "recipe", "kernel recipe"), where
    /// the results go, the variants, `details` (how training is recorded...), the logs.
    pub fn say_header(
        &self,
        what: &str,
        name: &str,
        path: &Path,
        variants: &[&str],
        details: &[String],
    ) {
        self.progress.say(format!(
            "kfdo optimize: {what} '{name}' ({}) -> {}",
            path.display(),
            self.out.display()
        ));
        let mut line = format!("  variants: {}", variants.join(", "));
        for d in details {
            line.push_str("; ");
            line.push_str(d);
        }
        self.progress
            .say(format!("{line}; logs in {}", self.logs.display()));
    }

    /// Writes the verdict to `OUT/summary.md`, says the run is over, and returns the
    /// summary's path.
    pub fn write_summary(&self, summary: &str) -> anyhow::Result<PathBuf> {
        let path = self.out.join("summary.md");
        std::fs::write(&path, summary)
            .with_context(|| format!("cannot write {}", path.display()))?;
        self.progress.say(format!(
            "kfdo optimize: finished in {}",
            self.progress.elapsed()
        ));
        Ok(path)
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
