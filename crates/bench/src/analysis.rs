//! From stored runs to verdicts: per-variant summaries, comparisons with the
//! baseline, hyperfine-style warnings, counters side by side and geometric
//! means across benchmarks. The result is what `--json` prints and what the
//! reports render.

use std::collections::BTreeMap;

use crate::metric::Better;
use crate::stats::{self, PairComparison, Summary};
use crate::store::{Benchmark, Contents};
use crate::warning::Warning;
// The thresholds the warnings name live with them; re-exported for callers of
// `analysis::MIN_RUNS` / `analysis::SHORT_RUN_S`.
pub use crate::warning::{MIN_RUNS, SHORT_RUN_S};

/// Coefficient of variation above which a variant is called noisy.
pub const HIGH_CV_PCT: f64 = 5.0;

#[derive(Debug, Clone, serde::Serialize)]
pub struct VariantAnalysis {
    pub name: String,
    pub command: String,
    pub flags: Option<String>,
    /// Wall-clock seconds of each timed run, in run order.
    pub wall_s: Vec<f64>,
    pub wall: Option<Summary>,
    pub user_mean_s: f64,
    pub sys_mean_s: f64,
    /// Against the baseline (None for the baseline itself, or without runs).
    pub vs_baseline: Option<PairComparison>,
    /// Indices into `wall_s` of outliers.
    pub outliers: Vec<usize>,
    /// What the runs measured besides time, one entry per metric, in first-seen order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<MetricAnalysis>,
}

/// One metric of one variant: its values, their summary, and the comparison with the
/// baseline's values of the same metric.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MetricAnalysis {
    pub name: String,
    pub unit: String,
    pub better: Better,
    pub source: String,
    pub values: Vec<f64>,
    pub summary: Summary,
    /// mean(variant) / mean(baseline), with its interval and significance.
    pub vs_baseline: Option<PairComparison>,
}

impl MetricAnalysis {
    /// Whether the change against the baseline is a significant improvement (Some(true)),
    /// a significant regression (Some(false)), or neither (None).
    pub fn verdict(&self) -> Option<bool> {
        let c = self.vs_baseline.as_ref().filter(|c| c.significant)?;
        let up = c.ratio.estimate > 1.0;
        Some(up == (self.better == Better::Higher))
    }
}

/// The metrics of one variant's runs, grouped by (name, source) in first-seen order.
fn metrics_of(runs: &[crate::store::StoredRun]) -> Vec<MetricAnalysis> {
    let mut out: Vec<MetricAnalysis> = Vec::new();
    for r in runs {
        for m in &r.metrics {
            match out
                .iter_mut()
                .find(|x| x.name == m.name && x.source == m.source)
            {
                Some(x) => x.values.push(m.value),
                None => out.push(MetricAnalysis {
                    name: m.name.clone(),
                    unit: m.unit.clone(),
                    better: m.better,
                    source: m.source.clone(),
                    values: vec![m.value],
                    summary: stats::summarize(&[m.value]),
                    vs_baseline: None,
                }),
            }
        }
    }
    for m in &mut out {
        m.summary = stats::summarize(&m.values);
    }
    out
}

/// Compares every variant after the first with the first (times and metrics).
pub fn compare_with_baseline(variants: &mut [VariantAnalysis], resamples: usize) {
    let Some((base, rest)) = variants.split_first_mut() else {
        return;
    };
    base.vs_baseline = None;
    for m in &mut base.metrics {
        m.vs_baseline = None;
    }
    for v in rest {
        v.vs_baseline = stats::compare_pair(&base.wall_s, &v.wall_s, resamples);
        for m in &mut v.metrics {
            m.vs_baseline = base
                .metrics
                .iter()
                .find(|b| b.name == m.name && b.source == m.source)
                .and_then(|b| stats::compare_pair(&b.values, &m.values, resamples));
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct CounterRow {
    pub name: String,
    pub source: String,
    /// One value per variant (None where that variant has no such counter).
    pub values: Vec<Option<f64>>,
    /// Per variant: "not deterministic: N threads" where its program ran several
    /// threads, so that its value is one draw among many (`counters::determinism`).
    pub labels: Vec<Option<String>>,
    /// Per variant: the lowest and highest of its counts, where it was counted several
    /// times (its value is then their median).
    pub spreads: Vec<Option<crate::counters::Spread>>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchmarkAnalysis {
    pub name: String,
    pub baseline: String,
    pub variants: Vec<VariantAnalysis>,
    pub counters: Vec<CounterRow>,
    pub counter_sources: Vec<String>,
    #[serde(serialize_with = "crate::warning::serialize_with_messages")]
    pub warnings: Vec<Warning>,
    /// (session id, status) of every session that added runs.
    pub sessions: Vec<(i64, String)>,
    /// Environment of the latest session.
    pub environment: serde_json::Value,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct GeoMean {
    /// Variant name (matched by name across benchmarks).
    pub variant: String,
    /// Geometric mean of mean(variant) / mean(baseline) over benchmarks.
    pub ratio: f64,
    pub benchmarks: usize,
    /// The ratio's 95 % bootstrap interval (every benchmark's runs resampled).
    pub interval: Option<stats::Interval>,
    /// A difference worth a verdict: the interval excludes 1 and at least one benchmark
    /// differs significantly by itself (a mean of noise is no difference).
    pub significant: bool,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Analysis {
    pub benchmarks: Vec<BenchmarkAnalysis>,
    pub geomeans: Vec<GeoMean>,
}

fn variant_warnings(v: &VariantAnalysis, first_seq_is_first: bool, w: &mut Vec<Warning>) {
    let variant = || v.name.clone();
    let Some(s) = &v.wall else {
        w.push(Warning::NoRuns { variant: variant() });
        return;
    };
    if s.n < MIN_RUNS {
        w.push(Warning::TooFewRuns {
            variant: variant(),
            runs: s.n,
        });
    }
    if s.mean < SHORT_RUN_S {
        w.push(Warning::ShortRuns {
            variant: variant(),
            mean_s: s.mean,
        });
    }
    if !v.outliers.is_empty() {
        let slow_first = first_seq_is_first && v.outliers.contains(&0) && v.wall_s[0] >= s.max;
        if slow_first {
            w.push(Warning::ColdFirstRun {
                variant: variant(),
                first_s: v.wall_s[0],
                median_s: s.median,
            });
        }
        let others = v.outliers.len() - usize::from(slow_first);
        if others > 0 {
            w.push(Warning::Outliers {
                variant: variant(),
                outliers: others,
                runs: s.n,
            });
        }
    }
    if s.cv_pct > HIGH_CV_PCT {
        w.push(Warning::HighVariance {
            variant: variant(),
            cv_pct: s.cv_pct,
        });
    }
}

pub fn analyze_benchmark(b: &Benchmark, resamples: usize) -> BenchmarkAnalysis {
    let mut variants: Vec<VariantAnalysis> = b
        .variants
        .iter()
        .map(|sv| {
            let wall_s: Vec<f64> = sv.runs.iter().map(|r| r.wall_s).collect();
            let n = sv.runs.len().max(1) as f64;
            VariantAnalysis {
                name: sv.variant.name.clone(),
                command: sv.variant.command.clone(),
                flags: sv.variant.flags.clone(),
                wall: (!wall_s.is_empty()).then(|| stats::summarize(&wall_s)),
                user_mean_s: sv.runs.iter().map(|r| r.user_s).sum::<f64>() / n,
                sys_mean_s: sv.runs.iter().map(|r| r.sys_s).sum::<f64>() / n,
                vs_baseline: None,
                outliers: stats::outliers(&wall_s),
                metrics: metrics_of(&sv.runs),
                wall_s,
            }
        })
        .collect();
    compare_with_baseline(&mut variants, resamples);

    let mut warnings = Vec::new();
    // The first run of the first session is the cold one.
    let first_session = b.sessions.first().map(|s| s.id);
    for (v, sv) in variants.iter().zip(&b.variants) {
        let first_is_first = sv
            .runs
            .first()
            .map(|r| Some(r.session) == first_session)
            .unwrap_or(false);
        variant_warnings(v, first_is_first, &mut warnings);
    }
    for s in &b.sessions {
        for n in &s.notes {
            if !warnings.contains(n) {
                warnings.push(n.clone());
            }
        }
        let session = s.id;
        match s.status.as_str() {
            "interrupted" => warnings.push(Warning::SessionInterrupted { session }),
            "running" => warnings.push(Warning::SessionUnfinished { session }),
            "failed" => warnings.push(Warning::SessionFailed { session }),
            _ => {}
        }
    }

    // Counters: one row per (name, source), in first-seen order.
    let mut counters: Vec<CounterRow> = Vec::new();
    for (i, sv) in b.variants.iter().enumerate() {
        for c in &sv.counters {
            let row = match counters
                .iter_mut()
                .position(|r| r.name == c.name && r.source == c.source)
            {
                Some(p) => &mut counters[p],
                None => {
                    counters.push(CounterRow {
                        name: c.name.clone(),
                        source: c.source.clone(),
                        values: vec![None; b.variants.len()],
                        labels: vec![None; b.variants.len()],
                        spreads: vec![None; b.variants.len()],
                    });
                    counters.last_mut().unwrap()
                }
            };
            row.values[i] = Some(c.value);
            row.labels[i] = c.determinism_label();
            row.spreads[i] = c.spread;
        }
    }

    BenchmarkAnalysis {
        name: b.name.clone(),
        baseline: variants.first().map(|v| v.name.clone()).unwrap_or_default(),
        variants,
        counters,
        counter_sources: b.counter_sources.clone(),
        warnings,
        sessions: b
            .sessions
            .iter()
            .map(|s| (s.id, s.status.clone()))
            .collect(),
        environment: b
            .sessions
            .last()
            .map(|s| s.environment.clone())
            .unwrap_or(serde_json::Value::Null),
    }
}

/// One benchmark's part in a geometric mean: its ratio, whether it differs
/// significantly, and the baseline's and the variant's times.
type Part<'a> = (f64, bool, &'a [f64], &'a [f64]);

/// Geometric mean of each non-baseline variant's ratio across the
/// benchmarks where it appears (matched by name), with its interval and significance.
pub fn geomeans(benchmarks: &[BenchmarkAnalysis], resamples: usize) -> Vec<GeoMean> {
    let mut by_name: BTreeMap<String, Vec<Part>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for b in benchmarks {
        let Some(base) = b.variants.first() else {
            continue;
        };
        for v in b.variants.iter().skip(1) {
            if let Some(c) = &v.vs_baseline {
                if !by_name.contains_key(&v.name) {
                    order.push(v.name.clone());
                }
                by_name.entry(v.name.clone()).or_default().push((
                    c.ratio.estimate,
                    c.significant,
                    &base.wall_s,
                    &v.wall_s,
                ));
            }
        }
    }
    order
        .into_iter()
        .map(|name| {
            let parts = &by_name[&name];
            let rs: Vec<f64> = parts.iter().map(|p| p.0).collect();
            let pairs: Vec<(&[f64], &[f64])> = parts.iter().map(|p| (p.2, p.3)).collect();
            let seed = pairs
                .iter()
                .fold(0u64, |h, (a, b)| h.rotate_left(7) ^ stats::data_seed(a, b));
            let interval = stats::bootstrap_geomean_ratio_ci(&pairs, 0.95, resamples, seed);
            let significant =
                parts.iter().any(|p| p.1) && interval.as_ref().is_some_and(|i| !i.contains(1.0));
            GeoMean {
                ratio: stats::geometric_mean(&rs),
                benchmarks: rs.len(),
                interval,
                significant,
                variant: name,
            }
        })
        .collect()
}

/// A variant's UnixBench-style index over the benchmarks that measured one metric.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SuiteIndex {
    pub variant: String,
    /// Geometric mean of mean(variant) / mean(baseline) over `benchmarks`, with its 95 %
    /// bootstrap interval.
    pub index: stats::Interval,
    pub benchmarks: Vec<String>,
}

/// Each variant's index over the benchmarks in which it and the baseline measured the
/// metric `chosen` picks (one per benchmark, e.g. the workload's operations per second).
pub fn suite_index(
    benchmarks: &[BenchmarkAnalysis],
    chosen: impl Fn(&MetricAnalysis) -> bool,
    resamples: usize,
) -> Vec<SuiteIndex> {
    // Per variant: each benchmark's name, baseline values and variant values.
    type PerBench = (String, Vec<f64>, Vec<f64>);
    let mut by_variant: Vec<(String, Vec<PerBench>)> = Vec::new();
    for b in benchmarks {
        let Some(base) = b.variants.first() else {
            continue;
        };
        let Some(base_m) = base.metrics.iter().find(|m| chosen(m)) else {
            continue;
        };
        for v in b.variants.iter().skip(1) {
            let Some(m) = v.metrics.iter().find(|m| chosen(m)) else {
                continue;
            };
            let entry = match by_variant.iter_mut().find(|(n, _)| *n == v.name) {
                Some(e) => e,
                None => {
                    by_variant.push((v.name.clone(), Vec::new()));
                    by_variant.last_mut().unwrap()
                }
            };
            entry
                .1
                .push((b.name.clone(), base_m.values.clone(), m.values.clone()));
        }
    }
    by_variant
        .into_iter()
        .filter_map(|(variant, per_bench)| {
            let pairs: Vec<(&[f64], &[f64])> = per_bench
                .iter()
                .map(|(_, a, b)| (a.as_slice(), b.as_slice()))
                .collect();
            let seed = per_bench.iter().fold(0u64, |h, (_, a, b)| {
                h.rotate_left(7) ^ stats::data_seed(a, b)
            });
            let index = stats::bootstrap_geomean_ratio_ci(&pairs, 0.95, resamples, seed)?;
            Some(SuiteIndex {
                variant,
                index,
                benchmarks: per_bench.into_iter().map(|(n, _, _)| n).collect(),
            })
        })
        .collect()
}

pub fn analyze(c: &Contents, resamples: usize) -> Analysis {
    let benchmarks: Vec<BenchmarkAnalysis> = c
        .benchmarks
        .iter()
        .map(|b| analyze_benchmark(b, resamples))
        .collect();
    Analysis {
        geomeans: geomeans(&benchmarks, resamples),
        benchmarks,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::runner::Arm;
    use crate::store::{Session, StoredRun, StoredVariant};

    pub(crate) fn synthetic(name: &str, times: &[(&str, Vec<f64>)]) -> Benchmark {
        Benchmark {
            name: name.into(),
            variants: times
                .iter()
                .enumerate()
                .map(|(i, (n, ts))| StoredVariant {
                    id: i as i64,
                    variant: Arm::new(n.to_string(), format!("./{n}")),
                    runs: ts
                        .iter()
                        .enumerate()
                        .map(|(j, &t)| StoredRun {
                            session: 1,
                            seq: j as i64,
                            wall_s: t,
                            user_s: t,
                            sys_s: 0.0,
                            started_unix: 0.0,
                            metrics: Vec::new(),
                        })
                        .collect(),
                    counters: vec![],
                })
                .collect(),
            sessions: vec![Session {
                id: 1,
                benchmark: name.into(),
                started_unix: 0.0,
                status: "complete".into(),
                environment: serde_json::Value::Null,
                settings: serde_json::Value::Null,
                notes: vec![],
            }],
            counter_sources: vec![],
        }
    }

    #[test]
    fn geomean_across_benchmarks() {
        let b1 = synthetic("one", &[("base", vec![1.0; 6]), ("new", vec![0.5; 6])]);
        let b2 = synthetic(
            "two",
            &[("base", vec![2.0; 6]), ("new", vec![2.0 * 1.28; 6])],
        );
        let a = analyze(
            &Contents {
                benchmarks: vec![b1, b2],
                heatmaps: vec![],
            },
            1000,
        );
        assert_eq!(a.geomeans.len(), 1);
        // sqrt(0.5 * 1.28) = 0.8
        assert!((a.geomeans[0].ratio - 0.8).abs() < 1e-12);
        assert_eq!(a.geomeans[0].benchmarks, 2);
    }

    /// A noisy benchmark 15 % faster on average but not significantly: its geometric
    /// mean is no verdict either ("no significant difference", not "1.15× faster").
    #[test]
    fn a_geomean_of_no_significant_difference_is_not_called_faster() {
        let base = vec![1.0, 1.6, 0.5, 1.4, 0.6, 1.3, 0.7, 0.9];
        let new: Vec<f64> = base.iter().rev().map(|t| t * 0.85).collect();
        let b = synthetic("noisy", &[("base", base), ("new", new)]);
        let a = analyze(
            &Contents {
                benchmarks: vec![b],
                heatmaps: vec![],
            },
            1000,
        );
        assert!(
            !a.benchmarks[0].variants[1]
                .vs_baseline
                .as_ref()
                .unwrap()
                .significant
        );
        let g = &a.geomeans[0];
        assert!((g.ratio - 0.85).abs() < 1e-9, "{g:?}");
        assert!(!g.significant, "{g:?}");
        let md = crate::report::markdown::render(&a, &[], "t", "g");
        let row = md.lines().find(|l| l.starts_with("| new | 1 |")).unwrap();
        assert!(row.ends_with("| no significant difference |"), "{row}");
        let html = crate::report::html::render(&a, &[], "t", "g");
        let geo = &html[html.find("<strong>geometric mean</strong>").unwrap()..];
        let geo = &geo[..geo.find("</tr>").unwrap()];
        assert!(geo.contains("no significant difference"), "{geo}");
        assert!(!geo.contains("faster"), "{geo}");

        // Clearly faster in both benchmarks: the verdict is given.
        let sure = |n: &str| {
            synthetic(
                n,
                &[
                    ("base", vec![1.0, 1.01, 0.99, 1.0, 1.02, 0.98]),
                    ("new", vec![0.8, 0.81, 0.79, 0.8, 0.82, 0.78]),
                ],
            )
        };
        let a = analyze(
            &Contents {
                benchmarks: vec![sure("x"), sure("y")],
                heatmaps: vec![],
            },
            1000,
        );
        assert!(a.geomeans[0].significant, "{:?}", a.geomeans[0]);
        assert_eq!(
            crate::report::geomean_verdict(&a.geomeans[0]),
            "1.25× faster"
        );
    }

    #[test]
    fn warnings_for_few_runs_outliers_cold_start_and_noise() {
        let mut slow_first = vec![1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01];
        slow_first[0] = 2.0;
        let b = synthetic(
            "w",
            &[
                ("cold", slow_first),
                ("few", vec![1.0, 1.1]),
                ("noisy", vec![1.0, 1.3, 0.8, 1.2, 0.9, 1.25, 0.7]),
                ("tiny", vec![0.001; 6]),
            ],
        );
        let a = analyze_benchmark(&b, 500);
        let all = a
            .warnings
            .iter()
            .map(|w| w.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(all.contains("first run of 'cold' was much slower"), "{all}");
        assert!(all.contains("--warmup"), "{all}");
        assert!(all.contains("too few runs: 'few' has 2"), "{all}");
        assert!(all.contains("high variance: 'noisy'"), "{all}");
        assert!(all.contains("'tiny' runs for only 1.00 ms"), "{all}");
    }

    #[test]
    fn metrics_are_compared_with_the_baseline_in_their_own_direction() {
        use crate::metric::Metric;
        let mut b = synthetic("k", &[("base", vec![1.0; 8]), ("fdo", vec![1.0; 8])]);
        // fdo: 10 % more ops/s (better), 30 % more misses (worse), with a little noise.
        for (i, v) in b.variants.iter_mut().enumerate() {
            for (j, r) in v.runs.iter_mut().enumerate() {
                let noise = 1.0 + 0.002 * (j % 3) as f64;
                let (ops, miss) = if i == 0 {
                    (1000.0, 100.0)
                } else {
                    (1100.0, 130.0)
                };
                r.metrics = vec![
                    Metric::new("ops/s", ops * noise, "ops/s", Better::Higher, "workload"),
                    Metric::new("misses", miss * noise, "", Better::Lower, "emulated"),
                ];
            }
        }
        let a = analyze_benchmark(&b, 2000);
        let fdo = &a.variants[1];
        let ops = fdo.metrics.iter().find(|m| m.name == "ops/s").unwrap();
        let miss = fdo.metrics.iter().find(|m| m.name == "misses").unwrap();
        assert!((ops.vs_baseline.as_ref().unwrap().change_pct() - 10.0).abs() < 0.5);
        assert_eq!(ops.verdict(), Some(true));
        assert_eq!(miss.verdict(), Some(false));
        assert!(a.variants[0].metrics[0].vs_baseline.is_none());
        let md = crate::report::markdown::render(
            &Analysis {
                benchmarks: vec![a],
                geomeans: vec![],
            },
            &[],
            "t",
            "g",
        );
        assert!(md.contains("| ops/s (ops/s) | workload |"), "{md}");
        assert!(
            md.contains("+10.0 %") && md.contains("better") && md.contains("worse"),
            "{md}"
        );
    }
}
