//! kfdo-bench: judging builds. An A/B runner that interleaves commands,
//! statistics that say how sure a verdict is, counters (hardware `perf stat`,
//! valgrind's cachegrind, kfdo's emulated counters), a SQLite results store,
//! HTML / Markdown / text reports (with the heat maps kfdo-heatmap stores).
//!
//! Two commands live here as typed calls: [`compare::compare`] (`kfdo
//! compare`; with `--tag` / `--baseline-tag`, [`tagged::record_tag`] and
//! [`tagged::compare_tags`]: kernels measured in separate boots) and
//! [`report::write::write_report`] (`kfdo report`). Everything a comparison
//! warns about is one [`Warning`].
//!
//! Layers look down only: `stats` knows nothing of processes, `runner` nothing
//! of SQLite, `report` reads only what `store` gives it; `compare` ties runner,
//! counters and store together.
//!
//! # How a verdict is made
//!
//! - Each command runs `--warmup` times untimed, then timed runs are
//!   interleaved in rounds whose starting variant rotates (A B, B A, A B, ...),
//!   so drift (thermal, frequency, other load) and order effects hit every
//!   variant alike. Wall-clock time per run is the measure; user and system
//!   CPU time come from `getrusage(RUSAGE_CHILDREN)`.
//! - Per variant: mean, median, sample standard deviation, CV, quartiles.
//! - Per variant against the baseline (the first): the ratio of means with a
//!   95 % percentile-bootstrap interval (10,000 resamples, seeded from the data
//!   so a report is reproducible), Welch's t-test p-value (Student's t from
//!   statrs), and mmtests' mark (`*` / `**`: Welch rejects at 5 % / 1 % with
//!   the degrees of freedom rounded down). "Significant" needs both the test
//!   to reject and the interval to exclude 1; in seeded A/A simulations this
//!   is called in 3.7-4.8 % of trials (see `stats::tests`).
//! - Adaptive run count (`StopRule::Adaptive`): after each round, stop when
//!   every ratio's interval is within ±target %, between min and max runs.
//! - Across benchmarks: the geometric mean of the ratios, per variant name.
//! - Warnings say what to change: outliers (modified Z-score > 3.5), a slow
//!   cold first run, high CV, too few runs, too-short runs, a frequency
//!   governor other than `performance`, turbo, load average, and other
//!   processes' CPU time measured from /proc/stat during the runs.
//!
//! # Layers
//!
//! Each module uses only the layers below it; modules in one layer are
//! independent of each other (the `layering` test checks every `crate::` /
//! `super::` path against this list):
//!
//! 1. `metric`, `stats`, `warning`: the vocabulary (a warning names its own
//!    thresholds).
//! 2. `env` (the machine), `runner` (one run), `running_kernel`.
//! 3. `counters` (hardware and emulated counters of a run), `identity` (which program a
//!    run starts: its build-id or content hash).
//! 4. `store`: sessions on disk.
//! 5. `analysis` (stored runs to verdicts), `kept` (what an interrupted session kept).
//! 6. `counters_vs_time`: the counters' changes held against the time's (points and
//!    fits).
//! 7. `report`: HTML, Markdown and text.
//! 8. `pooling`: which stored runs form one series (it names sessions as reports do).
//! 9. `compare` (a whole A/B session).
//! 10. `tagged`: comparisons of tagged builds.
//!
//! Inside the folders the layers are tested too (each folder's `mod.rs` only
//! declares its modules and re-exports), bottom first:
//!
//! - `report/`: `escape` (HTML, Markdown, base64) and `figures` (numbers for
//!   people), then `plot` (SVG plots), `metrics` (counter tables) and `determinism`
//!   (which counts are not deterministic, and their spread), then `scatter` (counters
//!   against time, one panel per counter), then `counters_vs_time` (its tables), then
//!   `text`, `html` and `markdown`, then `write` (a report of a store), then `profiles`
//!   (a report with profile tables).
//! - `compare/`: `request` (the request and its checks, the events, the outcome and
//!   the errors), then `session` (the session begun in the store), then `timing` (the
//!   timed runs) and `verdict` (the verdict and its JSON), then `counting` (the
//!   counters of each arm), then `flow` (a whole comparison, step by step).
//! - `tagged/`: `keys` (where a tag is stored) and `error` ([`tagged::TagError`]), then
//!   `stored` (the tags a store holds), then `record` and `compare`.

pub mod analysis;
pub mod compare;
pub mod counters;
pub mod counters_vs_time;
pub mod env;
pub mod identity;
pub mod kept;
pub mod metric;
pub mod pooling;
pub mod report;
pub mod runner;
pub mod running_kernel;
pub mod stats;
pub mod store;
pub mod tagged;
pub mod warning;

pub use warning::Warning;

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
