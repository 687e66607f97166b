//! The steps that judge: benchmark every variant interleaved
//! (`kfdo_bench::compare`, one results store), then the report with heat maps
//! (`kfdo_heatmap`, `kfdo_bench::report`).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use kfdo_bench::compare::{CompareEvent, CompareOutcome, CompareRequest};
use kfdo_bench::counters::Choice;
use kfdo_bench::runner::{ProgramSlot, Protocol, StopRule};

use super::compile::Built;
use super::ctx::Ctx;
use crate::steps::cache::Key;
use crate::steps::fresh_dir;
use crate::vocabulary::Variant;

/// Default timed runs per variant.
pub const DEFAULT_RUNS: usize = 10;

/// A heat map to draw: a build and a recording of it.
pub struct HeatInput {
    pub label: String,
    pub binary: Built,
    pub perf_data: PathBuf,
    pub perf_hash: String,
}

/// The counter source for the benchmark: "auto" is hardware `perf stat`
/// where it works, else the emulated counters (deterministic for a
/// single-threaded benchmark, labelled where not, and far cheaper than
/// cachegrind on a long benchmark).
pub fn resolve_counters(requested: Choice) -> (Choice, Option<String>) {
    if requested != Choice::Auto {
        return (requested, None);
    }
    match kfdo_bench::counters::PerfStat::probe() {
        Ok(_) => (Choice::Perf, None),
        Err(why) => (
            Choice::Emulated,
            Some(format!("counters: {why}; using the emulated counters")),
        ),
    }
}

impl Ctx {
    /// Benchmarks all builds, interleaved, into `bench/results.db`.
    pub fn bench(&self, builds: &[(Variant, Built)], counters: Choice) -> anyhow::Result<PathBuf> {
        let r = self.recipe();
        let dir = self.dir("bench");
        let db = dir.join("results.db");
        let mut key = Key::new("benchmark")
            .add("counters", counters.name())
            .add("kfdo", &self.kfdo_version);
        for (v, b) in builds {
            key = key
                .add("variant", v.name())
                .add("binary", &b.hash)
                .add("flags", format!("{} | {}", b.cflags, b.ldflags));
            if !b.postlink.is_empty() {
                key = key.add("postlink", &b.postlink);
            }
        }
        if let Some(t) = &self.opts.target {
            key = key.add("target", &t.triple);
        }
        for b in &r.benches {
            key = key
                .add("bench", &b.name)
                .add("command", &b.command)
                .add("runs", self.runs(b).to_string());
        }
        self.step(
            "benchmark",
            key.finish(),
            std::slice::from_ref(&db),
            |log| {
                fresh_dir(&dir)?;
                let cwd = dir.join("cwd");
                std::fs::create_dir_all(&cwd)?;
                // The machine is left alone while it runs: no stop flag but the process's.
                let never = AtomicBool::new(false);
                for bench in &r.benches {
                    let template = r.expand_recipe(&bench.command);
                    // A cross build's timed runs run it under QEMU; its counters still
                    // come from the template, whose program the emulated counters run
                    // under QEMU with their plugin themselves.
                    let (timed, benchmark) = match &self.opts.target {
                        Some(t) => (t.timed_template(&template), t.bench_name(&bench.name)),
                        None => (template.clone(), bench.name.clone()),
                    };
                    let req = CompareRequest {
                        arms: builds
                            .iter()
                            .map(|(v, b)| kfdo_bench::runner::Arm {
                                flags: Some(b.flags_line()),
                                command: ProgramSlot {
                                    template: timed.clone(),
                                    path: b.binary.clone(),
                                }
                                .command_with(&b.binary),
                                ..kfdo_bench::runner::Arm::from_template(
                                    v.name(),
                                    &template,
                                    &b.binary,
                                )
                            })
                            .collect(),
                        benchmark: Some(benchmark),
                        protocol: Protocol {
                            cwd: Some(cwd.clone()),
                            env: vec![("RECIPE".into(), r.dir.display().to_string())],
                            ..Protocol::new(1, StopRule::Fixed(self.runs(bench)))
                        },
                        counters,
                        store: db.clone(),
                        json: Some(dir.join(format!("{}.json", bench.name))),
                    };
                    log.note(&format!("benchmark '{}': {}", bench.name, bench.command));
                    let outcome = kfdo_bench::compare::compare(&req, &never, &mut |ev| match ev {
                        CompareEvent::CounterNote(n) => log.say(&format!("counters: {n}")),
                        CompareEvent::Run { variant, run } => log.say(&format!(
                            "run {} of '{variant}': {:.3} s",
                            run.index + 1,
                            run.wall_s
                        )),
                        CompareEvent::Counting { variant, source } => {
                            log.say(&format!("counting '{variant}' with {source}"))
                        }
                        _ => {}
                    })
                    .map_err(|e| log.failed(e))?;
                    if let CompareOutcome::Complete { analysis, .. } = outcome {
                        log.say(kfdo_bench::report::text::summary(&analysis).trim_end());
                        for w in &analysis.warnings {
                            log.say(&format!("warning: {w}"));
                        }
                    }
                }
                Ok(serde_json::json!({}))
            },
        )?;
        Ok(db)
    }

    fn runs(&self, b: &super::recipe::Bench) -> usize {
        self.opts.runs.or(b.runs).unwrap_or(DEFAULT_RUNS)
    }

    /// The report directory: a copy of the results with the heat maps added,
    /// rendered by `kfdo report`.
    pub fn report(&self, db: &std::path::Path, heat: &[HeatInput]) -> anyhow::Result<PathBuf> {
        let r = self.recipe();
        let dir = self.dir("report");
        let index = dir.join("index.html");
        let mut key = Key::new("report")
            .add("results", crate::steps::cache::content_hash(db)?)
            .add("kfdo", &self.kfdo_hash);
        for h in heat {
            key = key
                .add("heat", &h.label)
                .add("binary", &h.binary.hash)
                .add("perf.data", &h.perf_hash);
        }
        self.step(
            "report",
            key.finish(),
            std::slice::from_ref(&index),
            |log| {
                fresh_dir(&dir)?;
                let store = dir.join("kfdo.db");
                std::fs::copy(db, &store)?;
                for h in heat {
                    let png = dir.join(format!(
                        "heat-{}.png",
                        crate::steps::cache::file_name(&h.label)
                    ));
                    let label =
                        format!("{}: {} ({}, training run)", r.name, h.label, r.build.binary);
                    let req = kfdo_heatmap::HeatmapRequest {
                        store: Some(store.clone()),
                        label: Some(label),
                        ..kfdo_heatmap::HeatmapRequest::new(
                            &h.binary.binary,
                            &h.perf_data,
                            &png,
                        )
                    };
                    let map = kfdo_heatmap::make(&req).map_err(|e| log.failed(e))?;
                    log.say(&format!(
                        "{}: {} samples in {}'s text (of {} recorded); hot text span ({:.0} %): {} bytes",
                        map.label,
                        kfdo_bench::report::fmt_count_int(map.samples_in_text),
                        h.binary.binary.file_name().unwrap_or_default().to_string_lossy(),
                        kfdo_bench::report::fmt_count_int(map.samples_total),
                        map.span.fraction * 100.0,
                        kfdo_bench::report::fmt_count_int(map.span.bytes)
                    ));
                }
                let done = kfdo_bench::report::write::write_report(
                    &kfdo_bench::report::write::ReportRequest {
                        store: store.clone(),
                        output: dir.clone(),
                        title: format!("kfdo optimize: {}", r.name),
                        json: None,
                    },
                )
                .map_err(|e| log.failed(e))?;
                log.say(&format!(
                    "wrote {} and {}",
                    done.index.display(),
                    done.markdown.display()
                ));
                Ok(serde_json::json!({}))
            },
        )?;
        Ok(dir)
    }
}
