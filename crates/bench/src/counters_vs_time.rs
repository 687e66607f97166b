//! The counter model held against time: for every variant of every benchmark, the
//! change of each emulated counter against the baseline beside the change of a
//! measured time, and per counter how far its changes predict the time's (Pearson's and
//! Spearman's correlation, the least-squares slope, and how often the counter moved the
//! way a significant time change went).
//!
//! The points come from one store (a program's runs: wall time and the counter rows,
//! deterministic unless labelled otherwise) or from two (a kernel's emulated counters booted under QEMU, its time
//! from the User-Mode Linux twins or KVM), paired by benchmark.

use statrs::statistics::{Data, OrderStatistics, RankTieBreaker, Statistics};

use crate::analysis::{Analysis, BenchmarkAnalysis};
use crate::stats::PairComparison;

/// A counter change smaller than this (percent) counts as no move when signs are
/// compared: the model's own rounding, not a prediction.
pub const FLAT_PCT: f64 = 0.5;

/// A measured time's change against the baseline.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TimeChange {
    /// What was timed: "wall time", "UML kernel user CPU (native time)", ...
    pub measure: String,
    pub pct: f64,
    pub lo_pct: f64,
    pub hi_pct: f64,
    pub p: Option<f64>,
    pub significant: bool,
    /// The time is not the target's own (a cross build timed under QEMU): shown, but
    /// left out of the fits.
    pub emulated: bool,
}

impl TimeChange {
    pub fn from_comparison(measure: &str, c: &PairComparison, emulated: bool) -> TimeChange {
        TimeChange {
            measure: measure.to_string(),
            pct: c.change_pct(),
            lo_pct: (c.ratio.lo - 1.0) * 100.0,
            hi_pct: (c.ratio.hi - 1.0) * 100.0,
            p: c.welch.as_ref().map(|w| w.p),
            significant: c.significant,
            emulated,
        }
    }

    /// The change of the time per operation from a rate's comparison: 1 / ratio, the
    /// interval's bounds swapped.
    pub fn from_rate(measure: &str, c: &PairComparison) -> TimeChange {
        let per_op = |r: f64| (1.0 / r - 1.0) * 100.0;
        TimeChange {
            pct: per_op(c.ratio.estimate),
            lo_pct: per_op(c.ratio.hi),
            hi_pct: per_op(c.ratio.lo),
            ..TimeChange::from_comparison(measure, c, false)
        }
    }
}

/// One variant of one benchmark: its time change and its counters' changes.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Point {
    /// The recipe or store the point comes from.
    pub group: String,
    pub benchmark: String,
    pub variant: String,
    pub time: TimeChange,
    /// (counter, change in percent against the baseline).
    pub counters: Vec<(String, f64)>,
}

impl Point {
    pub fn counter(&self, name: &str) -> Option<f64> {
        self.counters
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }
}

/// How far one counter's changes predict the time's, over the points with real time.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CounterFit {
    pub counter: String,
    /// Points with both a real time change and this counter.
    pub n: usize,
    /// Pearson's r (None below 3 points or when either side does not vary).
    pub pearson: Option<f64>,
    /// Spearman's rank correlation, ties averaged.
    pub spearman: Option<f64>,
    /// Least-squares slope: time change (points of percent) per point of counter change.
    pub slope: Option<f64>,
    /// Of the points whose time changed significantly, how many had this counter move
    /// (by at least [`FLAT_PCT`]) the same way.
    pub agree: usize,
    pub significant: usize,
    /// Why the fit means nothing, when it does not: too few points, no significant time
    /// change to explain, or a correlation that chance gives as often as not.
    pub caveat: Option<String>,
}

/// Below this many points a correlation is not worth reading at all.
pub const MIN_FIT_POINTS: usize = 5;

/// Two-sided p of Pearson's r over `n` points (Student's t with n - 2 degrees of freedom).
fn pearson_p(r: f64, n: usize) -> Option<f64> {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    if n < 3 || !r.is_finite() {
        return None;
    }
    let df = (n - 2) as f64;
    if r.abs() >= 1.0 {
        return Some(0.0);
    }
    let t = r * (df / (1.0 - r * r)).sqrt();
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(2.0 * (1.0 - dist.cdf(t.abs())))
}

/// Why a fit of `n` points, `significant` of them significant time changes, with
/// Pearson's `r`, means nothing; None when it may be read.
fn caveat(n: usize, significant: usize, r: Option<f64>) -> Option<String> {
    if n < MIN_FIT_POINTS {
        return Some(format!(
            "means nothing: {n} point(s), fewer than {MIN_FIT_POINTS}"
        ));
    }
    if significant == 0 {
        return Some("means nothing: no time change is significant, so it fits noise".into());
    }
    match r.and_then(|r| pearson_p(r, n)) {
        Some(p) if p >= 0.05 => Some(format!(
            "means nothing: r is not significant (p = {p:.2} over {n} points)"
        )),
        None => Some("means nothing: a side does not vary".into()),
        _ => None,
    }
}

/// Percent change of `v` against `base` (None where the baseline is zero or absent).
fn change_pct(base: Option<f64>, v: Option<f64>) -> Option<f64> {
    match (base, v) {
        (Some(b), Some(v)) if b != 0.0 && b.is_finite() && v.is_finite() => {
            Some((v / b - 1.0) * 100.0)
        }
        _ => None,
    }
}

/// The points of a program store: each variant's wall time against the baseline and its
/// counter rows' changes. A benchmark named as timed under an emulator ("emulated
/// time") gives points marked emulated.
pub fn program_points(group: &str, a: &Analysis) -> Vec<Point> {
    let mut out = Vec::new();
    for b in &a.benchmarks {
        let Some(base) = b.variants.iter().position(|v| v.name == b.baseline) else {
            continue;
        };
        let emulated = b.name.contains("(emulated time");
        for (i, v) in b.variants.iter().enumerate() {
            let Some(c) = v.vs_baseline.as_ref().filter(|_| i != base) else {
                continue;
            };
            let counters: Vec<(String, f64)> = b
                .counters
                .iter()
                .filter_map(|row| {
                    let base = row.values.get(base).copied().flatten();
                    let val = row.values.get(i).copied().flatten();
                    change_pct(base, val).map(|p| (row.name.clone(), p))
                })
                .collect();
            if counters.is_empty() {
                continue;
            }
            let measure = if emulated {
                "emulated time"
            } else {
                "wall time"
            };
            out.push(Point {
                group: group.to_string(),
                benchmark: b.name.clone(),
                variant: v.name.clone(),
                time: TimeChange::from_comparison(measure, c, emulated),
                counters,
            });
        }
    }
    out
}

/// Where a paired benchmark's time comes from.
#[derive(Debug, Clone, Copy)]
pub enum TimeSource<'a> {
    /// The runs' wall time.
    Wall,
    /// A metric that is a time (lower is better).
    Metric(&'a str),
    /// A rate (operations per second): its change is turned into the change of the time
    /// per operation, 1 / ratio, interval bounds swapped.
    Rate(&'a str),
}

/// The points of a benchmark whose counters are metrics of one benchmark (`counters`,
/// those of `source`) and whose time is taken from another (`time`, as `from` says),
/// variants paired by name.
pub fn paired_points(
    group: &str,
    counters: &BenchmarkAnalysis,
    source: &str,
    time: &BenchmarkAnalysis,
    from: TimeSource<'_>,
    measure: &str,
) -> Vec<Point> {
    let mut out = Vec::new();
    for tv in &time.variants {
        if tv.name == time.baseline {
            continue;
        }
        let metric = |name: &str| {
            tv.metrics
                .iter()
                .find(|m| m.name == name)
                .and_then(|m| m.vs_baseline.as_ref())
        };
        let change = match from {
            TimeSource::Wall => tv
                .vs_baseline
                .as_ref()
                .map(|c| TimeChange::from_comparison(measure, c, false)),
            TimeSource::Metric(name) => {
                metric(name).map(|c| TimeChange::from_comparison(measure, c, false))
            }
            TimeSource::Rate(name) => metric(name).map(|c| TimeChange::from_rate(measure, c)),
        };
        let Some(change) = change else { continue };
        let Some(cv) = counters.variants.iter().find(|v| v.name == tv.name) else {
            continue;
        };
        let counters: Vec<(String, f64)> = cv
            .metrics
            .iter()
            .filter(|m| m.source == source)
            .filter_map(|m| {
                m.vs_baseline
                    .as_ref()
                    .map(|c| (m.name.clone(), c.change_pct()))
            })
            .collect();
        if counters.is_empty() {
            continue;
        }
        out.push(Point {
            group: group.to_string(),
            benchmark: time.name.clone(),
            variant: tv.name.clone(),
            time: change,
            counters,
        });
    }
    out
}

/// Whether any point's time is real: where none is (a cross build timed under its
/// emulator), a report has nothing to hold the counters against.
pub fn any_real_time(points: &[Point]) -> bool {
    points.iter().any(|p| !p.time.emulated)
}

/// Every counter the points name, in first-seen order.
pub fn counter_names(points: &[Point]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (n, _) in points.iter().flat_map(|p| &p.counters) {
        if !names.contains(n) {
            names.push(n.clone());
        }
    }
    names
}

fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() < 3 {
        return None;
    }
    let (vx, vy) = (x.variance(), y.variance());
    if !(vx > 0.0 && vy > 0.0) {
        return None;
    }
    Some(x.covariance(y) / (vx * vy).sqrt())
}

fn ranks(v: &[f64]) -> Vec<f64> {
    Data::new(v.to_vec()).ranks(RankTieBreaker::Average)
}

/// The fit of every counter over the points with real (not emulated) time.
pub fn fits(points: &[Point]) -> Vec<CounterFit> {
    counter_names(points)
        .into_iter()
        .map(|name| {
            let pairs: Vec<(f64, f64, bool)> = points
                .iter()
                .filter(|p| !p.time.emulated)
                .filter_map(|p| {
                    p.counter(&name)
                        .map(|c| (c, p.time.pct, p.time.significant))
                })
                .collect();
            let x: Vec<f64> = pairs.iter().map(|p| p.0).collect();
            let y: Vec<f64> = pairs.iter().map(|p| p.1).collect();
            let (xs, ys) = (x.as_slice(), y.as_slice());
            let slope =
                (xs.len() >= 3 && xs.variance() > 0.0).then(|| xs.covariance(ys) / xs.variance());
            let significant: Vec<&(f64, f64, bool)> = pairs.iter().filter(|p| p.2).collect();
            let agree = significant
                .iter()
                .filter(|(c, t, _)| c.abs() >= FLAT_PCT && c.signum() == t.signum())
                .count();
            let r = pearson(&x, &y);
            CounterFit {
                counter: name,
                n: pairs.len(),
                pearson: r,
                spearman: pearson(&ranks(&x), &ranks(&y)),
                slope,
                agree,
                significant: significant.len(),
                caveat: caveat(pairs.len(), significant.len(), r),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(variant: &str, time_pct: f64, significant: bool, counters: &[(&str, f64)]) -> Point {
        Point {
            group: "g".into(),
            benchmark: "b".into(),
            variant: variant.into(),
            time: TimeChange {
                measure: "wall time".into(),
                pct: time_pct,
                lo_pct: time_pct - 1.0,
                hi_pct: time_pct + 1.0,
                p: None,
                significant,
                emulated: false,
            },
            counters: counters.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        }
    }

    /// As measured: r = −0.78 over 4 points, no time change significant. The fit says it
    /// means nothing, for each reason in turn.
    #[test]
    fn a_fit_says_when_it_means_nothing() {
        let four = [
            point("a", -1.0, false, &[("taken", 2.0)]),
            point("b", 0.5, false, &[("taken", -1.0)]),
            point("c", 0.2, false, &[("taken", 0.5)]),
            point("d", -0.3, false, &[("taken", -0.2)]),
        ];
        let f = &fits(&four)[0];
        assert!(f.pearson.is_some(), "{f:?}");
        assert_eq!(
            f.caveat.as_deref(),
            Some("means nothing: 4 point(s), fewer than 5")
        );
        let md = crate::report::counters_vs_time::markdown(&four);
        assert!(
            md.contains("| means nothing: 4 point(s), fewer than 5 |"),
            "{md}"
        );

        // Enough points, none significant.
        let noise: Vec<Point> = (0..8)
            .map(|i| point("v", i as f64 * 0.1, false, &[("taken", i as f64)]))
            .collect();
        assert_eq!(
            fits(&noise)[0].caveat.as_deref(),
            Some("means nothing: no time change is significant, so it fits noise")
        );

        // Enough points, significant changes, but r within chance.
        let scattered: Vec<Point> = [
            (1.0, -3.0),
            (2.0, 4.0),
            (3.0, -2.0),
            (4.0, 3.0),
            (5.0, -4.0),
            (6.0, 2.0),
        ]
        .iter()
        .map(|&(c, t)| point("v", t, true, &[("taken", c)]))
        .collect();
        let c = fits(&scattered)[0].caveat.clone().unwrap();
        assert!(
            c.starts_with("means nothing: r is not significant (p = "),
            "{c}"
        );

        // A real fit has none.
        let clear: Vec<Point> = (1..8)
            .map(|i| {
                point(
                    "v",
                    -(i as f64),
                    true,
                    &[("taken", -2.0 * i as f64 + (i % 2) as f64 * 0.1)],
                )
            })
            .collect();
        assert_eq!(fits(&clear)[0].caveat, None, "{:?}", fits(&clear)[0]);
    }

    #[test]
    fn a_counter_proportional_to_time_fits_exactly() {
        let pts = [
            point("a", -10.0, true, &[("taken", -20.0), ("l1i", 5.0)]),
            point("b", -5.0, true, &[("taken", -10.0), ("l1i", -3.0)]),
            point("c", 2.0, false, &[("taken", 4.0), ("l1i", 0.1)]),
        ];
        let f = fits(&pts);
        assert_eq!(f.len(), 2);
        let taken = &f[0];
        assert_eq!((taken.counter.as_str(), taken.n), ("taken", 3));
        assert!((taken.pearson.unwrap() - 1.0).abs() < 1e-12, "{taken:?}");
        assert!((taken.spearman.unwrap() - 1.0).abs() < 1e-12);
        assert!((taken.slope.unwrap() - 0.5).abs() < 1e-12);
        assert_eq!((taken.agree, taken.significant), (2, 2));
        // l1i went up where time fell: one of the two significant points disagrees.
        let l1i = &f[1];
        assert_eq!((l1i.agree, l1i.significant), (1, 2));
        assert!(l1i.pearson.unwrap() < 0.0, "{l1i:?}");
    }

    #[test]
    fn too_few_points_or_no_spread_give_no_correlation() {
        let two = [
            point("a", -1.0, true, &[("taken", -2.0)]),
            point("b", 1.0, false, &[("taken", 2.0)]),
        ];
        let f = fits(&two);
        assert_eq!((f[0].n, f[0].pearson, f[0].slope), (2, None, None));
        let flat = [
            point("a", -1.0, true, &[("taken", 0.0)]),
            point("b", 1.0, true, &[("taken", 0.0)]),
            point("c", 3.0, true, &[("taken", 0.0)]),
        ];
        let f = fits(&flat);
        assert_eq!((f[0].pearson, f[0].slope), (None, None));
        // A flat counter predicts no significant move.
        assert_eq!((f[0].agree, f[0].significant), (0, 3));
    }

    #[test]
    fn emulated_time_is_shown_but_left_out_of_the_fit() {
        let mut cross = point("x", 50.0, true, &[("taken", -90.0)]);
        cross.time.emulated = true;
        let pts = [
            point("a", -10.0, true, &[("taken", -20.0)]),
            point("b", -5.0, true, &[("taken", -10.0)]),
            point("c", 2.0, false, &[("taken", 4.0)]),
            cross,
        ];
        let f = fits(&pts);
        assert_eq!(f[0].n, 3);
        assert!((f[0].pearson.unwrap() - 1.0).abs() < 1e-12);
        assert!(any_real_time(&pts) && !any_real_time(&pts[3..]));
    }

    #[test]
    fn a_rate_becomes_the_time_per_operation() {
        let c = PairComparison {
            ratio: crate::stats::Interval {
                estimate: 1.25,
                lo: 1.0,
                hi: 2.0,
                level: 0.95,
            },
            welch: None,
            mark: "*",
            effect_size: 1.0,
            significant: true,
        };
        let t = TimeChange::from_rate("tcp_rr time per operation", &c);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(
            close(t.pct, -20.0) && close(t.lo_pct, -50.0) && close(t.hi_pct, 0.0),
            "{t:?}"
        );
        assert!(t.significant && !t.emulated);
    }

    #[test]
    fn changes_need_a_nonzero_baseline() {
        assert_eq!(change_pct(Some(200.0), Some(150.0)), Some(-25.0));
        assert_eq!(change_pct(Some(0.0), Some(1.0)), None);
        assert_eq!(change_pct(None, Some(1.0)), None);
    }
}
