//! The steps that judge: benchmark every variant interleaved (`kfdo
//! compare`, one results store), then the report with heat maps (`kfdo
//! heatmap`, `kfdo report`).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use crate::cache::Key;
use crate::compile::Built;
use crate::ctx::{fresh_dir, Ctx};
use crate::exec::Stdout;
use crate::variant::Variant;

/// Default timed runs per variant.
pub const DEFAULT_RUNS: usize = 10;

/// A heat map to draw: a build and a recording of it.
pub struct HeatInput {
    pub label: String,
    pub binary: Built,
    pub perf_data: PathBuf,
    pub perf_hash: String,
}

/// The counter source for `kfdo compare`: "auto" is hardware `perf stat`
/// where it works, else the emulated counters (deterministic, and far
/// cheaper than cachegrind on a long benchmark).
pub fn resolve_counters(requested: &str) -> (String, Option<String>) {
    if requested != "auto" {
        return (requested.to_string(), None);
    }
    match kfdo_bench::counters::PerfStat::probe() {
        Ok(_) => ("perf".into(), None),
        Err(why) => (
            "emulated".into(),
            Some(format!("counters: {why}; using the emulated counters")),
        ),
    }
}

impl Ctx {
    /// Benchmarks all builds, interleaved, into `bench/results.db`.
    pub fn bench(&self, builds: &[(Variant, Built)], counters: &str) -> anyhow::Result<PathBuf> {
        let r = self.recipe();
        let dir = self.dir("bench");
        let db = dir.join("results.db");
        let mut key = Key::new("benchmark")
            .add("counters", counters)
            .add("kfdo", &self.kfdo_version);
        for (v, b) in builds {
            key = key
                .add("variant", v.name())
                .add("binary", &b.hash)
                .add("flags", format!("{} | {}", b.cflags, b.ldflags));
        }
        for b in &r.benches {
            key = key
                .add("bench", &b.name)
                .add("command", &b.command)
                .add("runs", self.runs(b).to_string());
        }
        self.step("benchmark", key.finish(), &[db.clone()], |log| {
            fresh_dir(&dir)?;
            let cwd = dir.join("cwd");
            std::fs::create_dir_all(&cwd)?;
            for bench in &r.benches {
                let mut args: Vec<OsString> = vec![
                    "compare".into(),
                    "--store".into(),
                    db.clone().into(),
                    "--benchmark".into(),
                    bench.name.clone().into(),
                    "--runs".into(),
                    self.runs(bench).to_string().into(),
                    "--counters".into(),
                    counters.into(),
                    "--json".into(),
                    dir.join(format!("{}.json", bench.name)).into(),
                ];
                for (v, b) in builds {
                    args.push("--name".into());
                    args.push(v.name().into());
                    args.push(format!("--flags=CFLAGS={} LDFLAGS={}", b.cflags, b.ldflags).into());
                }
                args.push("--".into());
                for (_, b) in builds {
                    args.push(r.expand(&bench.command, &b.binary).into());
                }
                log.run(
                    Command::new(&self.opts.kfdo)
                        .args(&args)
                        .current_dir(&cwd)
                        .env("RECIPE", &r.dir),
                    Stdout::Log,
                )?;
            }
            Ok(serde_json::json!({}))
        })?;
        Ok(db)
    }

    fn runs(&self, b: &crate::recipe::Bench) -> usize {
        self.opts.runs.or(b.runs).unwrap_or(DEFAULT_RUNS)
    }

    /// The report directory: a copy of the results with the heat maps added,
    /// rendered by `kfdo report`.
    pub fn report(&self, db: &std::path::Path, heat: &[HeatInput]) -> anyhow::Result<PathBuf> {
        let r = self.recipe();
        let dir = self.dir("report");
        let index = dir.join("index.html");
        let mut key = Key::new("report")
            .add("results", crate::cache::content_hash(db)?)
            .add("kfdo", &self.kfdo_hash);
        for h in heat {
            key = key
                .add("heat", &h.label)
                .add("binary", &h.binary.hash)
                .add("perf.data", &h.perf_hash);
        }
        self.step("report", key.finish(), &[index.clone()], |log| {
            fresh_dir(&dir)?;
            let store = dir.join("kfdo.db");
            std::fs::copy(db, &store)?;
            for h in heat {
                let png = dir.join(format!("heat-{}.png", crate::cache::file_name(&h.label)));
                let label = format!("{}: {} ({}, training run)", r.name, h.label, r.build.binary);
                self.kfdo(
                    log,
                    &[
                        "heatmap".as_ref(),
                        "--binary".as_ref(),
                        h.binary.binary.as_os_str(),
                        h.perf_data.as_os_str(),
                        "-o".as_ref(),
                        png.as_os_str(),
                        "--store".as_ref(),
                        store.as_os_str(),
                        "--label".as_ref(),
                        label.as_ref(),
                    ],
                    &dir,
                )?;
            }
            let title = format!("kfdo optimize: {}", r.name);
            self.kfdo(
                log,
                &[
                    "report".as_ref(),
                    "--store".as_ref(),
                    store.as_os_str(),
                    "-o".as_ref(),
                    dir.as_os_str(),
                    "--title".as_ref(),
                    title.as_ref(),
                ],
                &dir,
            )?;
            Ok(serde_json::json!({}))
        })?;
        Ok(dir)
    }
}
