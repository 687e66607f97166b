//! What every pipeline's steps share: the output layout, the step cache, the
//! progress display and the tools' identities; and `step`, which runs a step's
//! body only when the cache does not already hold its result.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::Context;

use super::cache::{file_name, Cache, Done};
use super::exec::Log;
use super::planned::StepList;
use super::progress::Progress;

/// What every pipeline's steps share: the output directory, the step cache, the
/// progress display, the logs and the identities that key the steps.
pub struct Steps {
    pub out: PathBuf,
    /// The run's steps: progress counts them, and no other step runs.
    pub plan: StepList,
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
    pub timings: std::sync::Mutex<Vec<Timing>>,
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
    /// key every build; `plan` the steps this run may take.
    pub fn new(
        out: &Path,
        tools: &[&str],
        kfdo_exe: &Path,
        plan: StepList,
        quiet: bool,
    ) -> anyhow::Result<Steps> {
        let state = out.join(".kfdo/steps");
        let logs = out.join("logs");
        std::fs::create_dir_all(&logs)
            .with_context(|| format!("cannot create {}", logs.display()))?;
        Ok(Steps {
            out: out.to_path_buf(),
            cache: Cache::open(&state)?,
            progress: Progress::new(plan.len(), quiet),
            plan,
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
        if !self.plan.contains(step) {
            anyhow::bail!(
                "internal error: step '{step}' is not in this run's plan ({}); please report \
                 it with the command line",
                self.plan.names().join(", ")
            );
        }
        if let Some(done) = self.cache.lookup(step, &key) {
            super::interrupt::cached(step);
            self.progress.cached(step);
            self.timed(step, &done, true);
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
        self.timed(step, &done, false);
        Ok(done)
    }

    fn timed(&self, step: &str, done: &Done, cached: bool) {
        if let Ok(mut t) = self.timings.lock() {
            t.push(Timing {
                step: step.to_string(),
                seconds: done.seconds,
                cached,
                peak_kib: done.facts[PEAK_KIB].as_u64(),
            });
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
        let memory = t.iter().any(|x| x.peak_kib.is_some());
        let mut s = if memory {
            String::from("| step | seconds | peak memory | this run |\n|:--|--:|--:|:--|\n")
        } else {
            String::from("| step | seconds | this run |\n|:--|--:|:--|\n")
        };
        for x in &t {
            let peak = match (memory, x.peak_kib) {
                (false, _) => String::new(),
                (true, Some(k)) => format!(" {:.0} MiB |", k as f64 / 1024.0),
                (true, None) => " – |".into(),
            };
            s.push_str(&format!(
                "| {} | {:.1} |{peak} {} |\n",
                x.step,
                x.seconds,
                if x.cached {
                    "cached (time of the run that made it)"
                } else {
                    "ran"
                }
            ));
        }
        let ran: f64 = t.iter().filter(|x| !x.cached).map(|x| x.seconds).sum();
        let gap = if memory { " |" } else { "" };
        s.push_str(&format!("| **steps run now** | **{ran:.1}** |{gap} |\n"));
        s
    }
}

/// The fact a step records when it measured its main tool's peak resident memory
/// (KiB); the timing table shows it.
pub const PEAK_KIB: &str = "peak_kib";

/// One step of the run: how long it took, whether this run ran it, and its main tool's
/// peak memory where the step measured it.
#[derive(Debug, Clone)]
pub struct Timing {
    pub step: String,
    pub seconds: f64,
    pub cached: bool,
    pub peak_kib: Option<u64>,
}

/// Removes and recreates a step's working directory, so nothing of an
/// earlier (perhaps failed) run leaks into this one.
pub fn fresh_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot remove {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}
