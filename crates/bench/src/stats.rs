//! Statistics for A/B comparisons: summaries, Welch's t-test, bootstrap
//! confidence intervals of ratios, geometric means, outliers.
//!
//! Every function here is pure (no clock, no global RNG): the bootstrap takes
//! its seed from the data, so a report regenerated from the same store prints
//! the same interval.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Mean, spread and order statistics of one variant's samples.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (n - 1 in the denominator); 0 for n < 2.
    pub stddev: f64,
    /// Coefficient of variation in percent of the mean.
    pub cv_pct: f64,
    pub min: f64,
    pub max: f64,
    /// First and third quartiles (linear interpolation, numpy's default).
    pub q1: f64,
    pub q3: f64,
}

pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance with Bessel's correction; 0 for fewer than two samples.
pub fn variance(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64
}

pub fn stddev(xs: &[f64]) -> f64 {
    variance(xs).sqrt()
}

fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Quantile of sorted data, linear interpolation between closest ranks
/// (numpy.quantile's default "linear" method, R type 7).
pub fn quantile_sorted(s: &[f64], q: f64) -> f64 {
    if s.is_empty() {
        return f64::NAN;
    }
    let h = (s.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    s[lo] + (h - lo as f64) * (s[hi] - s[lo])
}

pub fn median(xs: &[f64]) -> f64 {
    quantile_sorted(&sorted(xs), 0.5)
}

pub fn summarize(xs: &[f64]) -> Summary {
    let s = sorted(xs);
    let m = mean(xs);
    let sd = stddev(xs);
    Summary {
        n: xs.len(),
        mean: m,
        median: quantile_sorted(&s, 0.5),
        stddev: sd,
        cv_pct: if m != 0.0 { 100.0 * sd / m.abs() } else { 0.0 },
        min: s.first().copied().unwrap_or(f64::NAN),
        max: s.last().copied().unwrap_or(f64::NAN),
        q1: quantile_sorted(&s, 0.25),
        q3: quantile_sorted(&s, 0.75),
    }
}

/// Geometric mean of positive values (e.g. ratios across benchmarks).
/// NaN when empty or when any value is not positive.
pub fn geometric_mean(xs: &[f64]) -> f64 {
    if xs.is_empty() || xs.iter().any(|&x| x.is_nan() || x <= 0.0) {
        return f64::NAN;
    }
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp()
}

/// Result of Welch's unequal-variances t-test.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Welch {
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom (not rounded).
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's t-test of H0: mean(a) == mean(b), two-sided.
///
/// Degenerate inputs are answered without a distribution: two constant
/// samples give p = 1 when their means are equal and p = 0 otherwise.
/// Returns None for fewer than two samples on either side.
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (va, vb) = (variance(a) / na, variance(b) / nb);
    let diff = mean(a) - mean(b);
    let se2 = va + vb;
    if se2 <= 0.0 || !se2.is_finite() {
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let t = if diff == 0.0 {
            0.0
        } else {
            diff.signum() * f64::INFINITY
        };
        return Some(Welch {
            t,
            df: na + nb - 2.0,
            p,
        });
    }
    let t = diff / se2.sqrt();
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = (2.0 * dist.sf(t.abs())).min(1.0);
    Some(Welch { t, df, p })
}

/// Two-sided critical value of Student's t: the x with P(|T| > x) = alpha.
pub fn t_critical(alpha: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => d.inverse_cdf(1.0 - alpha / 2.0),
        Err(_) => f64::NAN,
    }
}

/// mmtests' significance rule (VMR::Stat::calc_welch_test): Welch's t with
/// the degrees of freedom rounded *down* to an integer, H0 rejected when
/// |t| > t_{k, 1 - alpha/2}. Rounding down makes it a little more
/// conservative than the p-value of [`welch_t_test`].
pub fn mmtests_rejects(w: &Welch, alpha: f64) -> bool {
    if !w.t.is_finite() {
        return w.p < alpha;
    }
    let k = w.df.floor().max(1.0);
    w.t.abs() > t_critical(alpha, k)
}

/// The mark printed beside a ratio, mmtests style: `**` rejects H0 at 1 %,
/// `*` at 5 %, nothing otherwise.
pub fn significance_mark(w: Option<&Welch>) -> &'static str {
    match w {
        Some(w) if mmtests_rejects(w, 0.01) => "**",
        Some(w) if mmtests_rejects(w, 0.05) => "*",
        _ => "",
    }
}

/// mmtests' `sdiff`: the difference of means in units of the pooled
/// standard deviation sqrt((s_a² + s_b²) / 2) (an effect size, Cohen's d
/// with equal weights). 0 when both samples are constant and equal.
pub fn effect_size(a: &[f64], b: &[f64]) -> f64 {
    let diff = mean(b) - mean(a);
    let pooled = ((variance(a) + variance(b)) / 2.0).sqrt();
    if pooled == 0.0 {
        return if diff == 0.0 {
            0.0
        } else {
            diff.signum() * f64::INFINITY
        };
    }
    diff / pooled
}

/// A confidence interval around a point estimate.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Interval {
    pub estimate: f64,
    pub lo: f64,
    pub hi: f64,
    /// Confidence level, e.g. 0.95.
    pub level: f64,
}

impl Interval {
    /// Half the width, in percent of the estimate: the "±" people read.
    pub fn half_width_pct(&self) -> f64 {
        if self.estimate == 0.0 {
            return f64::INFINITY;
        }
        100.0 * (self.hi - self.lo) / 2.0 / self.estimate.abs()
    }
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }
}

/// A seed derived from the data so that the bootstrap of the same samples
/// always gives the same interval (FNV-1a over the bit patterns).
pub fn data_seed(a: &[f64], b: &[f64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for x in a.iter().chain([f64::NAN].iter()).chain(b.iter()) {
        for byte in x.to_bits().to_le_bytes() {
            h ^= byte as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// Percentile-bootstrap confidence interval of mean(b) / mean(a): each
/// resample draws |a| values from a and |b| values from b with replacement
/// (the two samples are independent, as interleaved runs of two commands
/// are). The estimate is the plain ratio of the sample means.
pub fn bootstrap_ratio_ci(
    a: &[f64],
    b: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let ma = mean(a);
    if ma == 0.0 {
        return None;
    }
    let estimate = mean(b) / ma;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples.max(1) {
        let sa: f64 = (0..a.len()).map(|_| a[rng.gen_range(0..a.len())]).sum();
        let sb: f64 = (0..b.len()).map(|_| b[rng.gen_range(0..b.len())]).sum();
        let ra = sa / a.len() as f64;
        if ra != 0.0 {
            ratios.push((sb / b.len() as f64) / ra);
        }
    }
    Some(percentile_interval(estimate, ratios, level))
}

/// The percentile interval at `level` of bootstrap `resampled` values around `estimate`.
fn percentile_interval(estimate: f64, mut resampled: Vec<f64>, level: f64) -> Interval {
    resampled.sort_by(f64::total_cmp);
    let alpha = 1.0 - level;
    Interval {
        estimate,
        lo: quantile_sorted(&resampled, alpha / 2.0),
        hi: quantile_sorted(&resampled, 1.0 - alpha / 2.0),
        level,
    }
}

/// A UnixBench-style index: the geometric mean, over several workloads, of mean(b) /
/// mean(a) per workload (`pairs`: each workload's baseline and variant samples), with a
/// percentile-bootstrap interval (each resample draws every sample of every workload
/// again, with replacement, as [`bootstrap_ratio_ci`] does for one).
pub fn bootstrap_geomean_ratio_ci(
    pairs: &[(&[f64], &[f64])],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    if pairs.is_empty() || pairs.iter().any(|(a, b)| a.is_empty() || b.is_empty()) {
        return None;
    }
    let ratios: Vec<f64> = pairs.iter().map(|(a, b)| mean(b) / mean(a)).collect();
    if ratios.iter().any(|r| !r.is_finite() || *r <= 0.0) {
        return None;
    }
    let estimate = geometric_mean(&ratios);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let draw = |xs: &[f64], rng: &mut ChaCha8Rng| {
        (0..xs.len())
            .map(|_| xs[rng.gen_range(0..xs.len())])
            .sum::<f64>()
            / xs.len() as f64
    };
    let mut indices = Vec::with_capacity(resamples);
    for _ in 0..resamples.max(1) {
        let mut log_sum = 0.0;
        let mut ok = true;
        for (a, b) in pairs {
            let r = draw(b, &mut rng) / draw(a, &mut rng);
            ok &= r.is_finite() && r > 0.0;
            log_sum += r.ln();
        }
        if ok {
            indices.push((log_sum / pairs.len() as f64).exp());
        }
    }
    Some(percentile_interval(estimate, indices, level))
}

/// Default number of bootstrap resamples for reports.
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// The full comparison of one variant (b) against the baseline (a).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PairComparison {
    /// mean(b) / mean(a) with its 95 % bootstrap interval.
    pub ratio: Interval,
    pub welch: Option<Welch>,
    /// mmtests-style mark: "", "*" or "**".
    pub mark: &'static str,
    /// Difference of means in pooled standard deviations (mmtests' sdiff).
    pub effect_size: f64,
    /// Significant: the t-test rejects at 5 % (mmtests rule) *and* the
    /// bootstrap interval excludes 1. Requiring both keeps the false-alarm
    /// rate at or below 5 % for small, skewed samples, where the percentile
    /// bootstrap alone is too narrow and the t-test alone is fooled by
    /// outliers.
    pub significant: bool,
}

impl PairComparison {
    /// Change of b relative to a in percent (negative: b is smaller).
    pub fn change_pct(&self) -> f64 {
        (self.ratio.estimate - 1.0) * 100.0
    }
}

pub fn compare_pair(a: &[f64], b: &[f64], resamples: usize) -> Option<PairComparison> {
    let ratio = bootstrap_ratio_ci(a, b, 0.95, resamples, data_seed(a, b))?;
    let welch = welch_t_test(a, b);
    let mark = significance_mark(welch.as_ref());
    let significant = !mark.is_empty() && !ratio.contains(1.0);
    Some(PairComparison {
        ratio,
        welch,
        mark,
        effect_size: effect_size(a, b),
        significant,
    })
}

/// Indices of outliers by the modified Z-score of Iglewicz and Hoaglin:
/// |0.6745 (x - median) / MAD| > 3.5. Robust for the small samples
/// benchmarks have; nothing is flagged when the MAD is 0.
pub fn outliers(xs: &[f64]) -> Vec<usize> {
    if xs.len() < 3 {
        return Vec::new();
    }
    let med = median(xs);
    let dev: Vec<f64> = xs.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&dev);
    if mad == 0.0 {
        return Vec::new();
    }
    xs.iter()
        .enumerate()
        .filter(|(_, &x)| (0.6745 * (x - med) / mad).abs() > 3.5)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suite_index_is_the_geometric_mean_of_the_workloads_ratios() {
        // Constant samples: every resample gives the same index, sqrt(2 * 0.5) = 1.
        let (a1, b1, a2, b2) = ([10.0; 4], [20.0; 4], [8.0; 3], [4.0; 3]);
        let i = bootstrap_geomean_ratio_ci(&[(&a1, &b1), (&a2, &b2)], 0.95, 200, 1).unwrap();
        assert!((i.estimate - 1.0).abs() < 1e-12, "{i:?}");
        assert!(
            (i.lo - 1.0).abs() < 1e-12 && (i.hi - 1.0).abs() < 1e-12,
            "{i:?}"
        );
        // Noisy samples, all ratios near 1.1: the interval holds the estimate and
        // lies above 1; the same data give the same interval.
        let a = [100.0, 102.0, 98.0, 101.0, 99.0];
        let b = [110.0, 112.0, 108.0, 111.0, 109.0];
        let c = [50.0, 51.0, 49.0, 50.5, 49.5];
        let d = [55.0, 56.0, 54.0, 55.5, 54.5];
        let i = bootstrap_geomean_ratio_ci(&[(&a, &b), (&c, &d)], 0.95, 2000, 7).unwrap();
        assert!((i.estimate - 1.1).abs() < 1e-3, "{i:?}");
        assert!(
            i.lo < i.estimate && i.estimate < i.hi && i.lo > 1.05,
            "{i:?}"
        );
        assert_eq!(
            i,
            bootstrap_geomean_ratio_ci(&[(&a, &b), (&c, &d)], 0.95, 2000, 7).unwrap()
        );
        // Nothing to index, or a workload without samples.
        assert!(bootstrap_geomean_ratio_ci(&[], 0.95, 10, 1).is_none());
        assert!(bootstrap_geomean_ratio_ci(&[(&a, &[])], 0.95, 10, 1).is_none());
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    // Reference data: two sets of timings (seconds).
    const A: [f64; 8] = [1.02, 0.98, 1.05, 1.01, 0.97, 1.03, 1.00, 0.99];
    const B: [f64; 7] = [0.91, 0.95, 0.93, 0.90, 0.96, 0.92, 0.94];

    #[test]
    fn summary_matches_numpy() {
        // numpy 2.4.6: np.mean(A) = 1.00625, np.std(A, ddof=1) = 0.0266926956300783,
        // np.median(A) = 1.005, np.quantile(A, [.25, .75]) = [0.9875, 1.0225]
        let s = summarize(&A);
        assert!(close(s.mean, 1.00625, 1e-12));
        assert!(close(s.stddev, 0.0266926956300783, 1e-12), "{}", s.stddev);
        assert!(close(s.median, 1.005, 1e-12));
        assert!(close(s.q1, 0.9875, 1e-12));
        assert!(close(s.q3, 1.0225, 1e-12));
        assert!(close(s.cv_pct, 100.0 * 0.0266926956300783 / 1.00625, 1e-12));
        assert_eq!((s.min, s.max), (0.97, 1.05));
        // np.quantile([3.0, 1.0, 4.0, 1.5, 9.0], 0.1) = 1.2
        assert!(close(
            quantile_sorted(&sorted(&[3.0, 1.0, 4.0, 1.5, 9.0]), 0.1),
            1.2,
            1e-12
        ));
    }

    #[test]
    fn welch_matches_scipy() {
        // scipy 1.17.1: scipy.stats.ttest_ind(A, B, equal_var=False)
        //   statistic = 6.11019215414174, pvalue = 3.791746647162685e-05,
        //   df = 12.94175105296173
        let w = welch_t_test(&A, &B).unwrap();
        assert!(close(w.t, 6.11019215414174, 1e-12), "t={}", w.t);
        assert!(close(w.df, 12.94175105296173, 1e-12), "df={}", w.df);
        assert!(close(w.p, 3.791746647162685e-05, 1e-6), "p={}", w.p);
        // scipy.stats.ttest_ind([10, 12, 11.5, 30], [10.5, 11, 10.8, 11.2, 10.9],
        //   equal_var=False) -> statistic = 1.0562742470346909,
        //   pvalue = 0.3682974827649323, df = 3.0035977517567343
        let w = welch_t_test(&[10.0, 12.0, 11.5, 30.0], &[10.5, 11.0, 10.8, 11.2, 10.9]).unwrap();
        assert!(close(w.t, 1.0562742470346909, 1e-12));
        assert!(close(w.df, 3.0035977517567343, 1e-12));
        assert!(close(w.p, 0.3682974827649323, 1e-9), "p={}", w.p);
        assert_eq!(significance_mark(Some(&w)), "");
    }

    #[test]
    fn t_critical_matches_scipy() {
        // scipy.stats.t.ppf(0.975, 12) = 2.1788128296672284
        // scipy.stats.t.ppf(0.995, 3)  = 5.840909309733355
        // scipy.stats.t.ppf(0.975, 4.5) = 2.6589123472044034
        assert!(close(t_critical(0.05, 12.0), 2.1788128296672284, 1e-9));
        assert!(close(t_critical(0.01, 3.0), 5.840909309733355, 1e-9));
        assert!(close(t_critical(0.05, 4.5), 2.6589123472044034, 1e-9));
    }

    #[test]
    fn geometric_mean_matches_scipy() {
        // scipy.stats.gmean([0.5, 0.8, 1.1, 1.25]) = 0.861173529963367
        assert!(close(
            geometric_mean(&[0.5, 0.8, 1.1, 1.25]),
            0.861173529963367,
            1e-12
        ));
        assert!(geometric_mean(&[]).is_nan());
        assert!(geometric_mean(&[1.0, 0.0]).is_nan());
    }

    #[test]
    fn bootstrap_matches_scipy_within_monte_carlo_error() {
        // scipy 1.17.1: scipy.stats.bootstrap((A, B),
        //   lambda a, b, axis=-1: np.mean(b, axis=axis) / np.mean(a, axis=axis),
        //   vectorized=True, paired=False, method='percentile',
        //   n_resamples=200000, confidence_level=0.95, rng=np.random.default_rng(1))
        //   -> low = 0.9027729027729028, high = 0.9459119496855347
        // Different generators, so agreement within Monte Carlo error only.
        let ci = bootstrap_ratio_ci(&A, &B, 0.95, 100_000, 7).unwrap();
        assert!(close(ci.estimate, 0.9242236024844719, 1e-12));
        assert!(close(ci.lo, 0.9027729027729028, 2e-3), "lo={}", ci.lo);
        assert!(close(ci.hi, 0.9459119496855347, 2e-3), "hi={}", ci.hi);
        // Same data, same interval: the seed comes from the data.
        let a = compare_pair(&A, &B, 2000).unwrap();
        let b = compare_pair(&A, &B, 2000).unwrap();
        assert_eq!(a, b);
        assert!(a.significant);
        assert_eq!(a.mark, "**");
        assert!(a.change_pct() < -7.0);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(welch_t_test(&[1.0], &[1.0, 2.0]).is_none());
        let w = welch_t_test(&[1.0, 1.0], &[1.0, 1.0]).unwrap();
        assert_eq!(w.p, 1.0);
        let w = welch_t_test(&[1.0, 1.0], &[2.0, 2.0]).unwrap();
        assert_eq!(w.p, 0.0);
        assert_eq!(significance_mark(Some(&w)), "**");
        assert!(bootstrap_ratio_ci(&[], &[1.0], 0.95, 10, 1).is_none());
        assert!(outliers(&[1.0, 1.0, 1.0, 5.0]).is_empty()); // MAD = 0
    }

    #[test]
    fn outliers_modified_z() {
        // median 10.1, MAD 0.1: 0.6745 * 4.9 / 0.1 = 33 > 3.5
        let xs = [10.0, 10.1, 10.2, 10.1, 10.0, 15.0, 10.2];
        assert_eq!(outliers(&xs), vec![5]);
        assert!(outliers(&A).is_empty());
    }

    /// A/A: the same distribution on both sides. With seeded synthetic
    /// samples (normal, and log-normal with a slow tail as real timings
    /// have), at most 5 % of trials may be called significant.
    #[test]
    fn a_a_comparisons_are_not_significant() {
        use rand_distr_free::*;
        let mut rng = ChaCha8Rng::seed_from_u64(20240601);
        for &(n, skewed) in &[
            (5usize, false),
            (10, false),
            (30, false),
            (5, true),
            (10, true),
            (20, true),
        ] {
            let trials = 1000;
            let mut false_alarms = 0;
            let mut p_below = 0;
            for _ in 0..trials {
                let draw = |rng: &mut ChaCha8Rng| -> Vec<f64> {
                    (0..n)
                        .map(|_| {
                            let z = normal(rng);
                            if skewed {
                                1.0 * (0.05 * z).exp()
                                    + if rng.gen::<f64>() < 0.05 { 0.3 } else { 0.0 }
                            } else {
                                1.0 + 0.02 * z
                            }
                        })
                        .collect()
                };
                let a = draw(&mut rng);
                let b = draw(&mut rng);
                let c = compare_pair(&a, &b, 1000).unwrap();
                if c.significant {
                    false_alarms += 1;
                }
                if c.welch.unwrap().p < 0.05 {
                    p_below += 1;
                }
            }
            let rate = false_alarms as f64 / trials as f64;
            eprintln!("A/A n={n} skewed={skewed}: significant in {false_alarms}/{trials}, Welch p<0.05 in {p_below}/{trials}");
            assert!(
                rate <= 0.05,
                "A/A n={n} skewed={skewed}: {false_alarms}/{trials} significant"
            );
            // And the test is calibrated, not just timid: about 5 % of p-values fall below 0.05.
            assert!(
                (25..=75).contains(&p_below),
                "A/A n={n}: Welch p < 0.05 in {p_below}/{trials}"
            );
        }
    }

    /// A/B with a real 5 % difference and modest noise is found.
    #[test]
    fn a_b_difference_is_found() {
        use rand_distr_free::*;
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut found = 0;
        for _ in 0..200 {
            let a: Vec<f64> = (0..10).map(|_| 1.0 + 0.02 * normal(&mut rng)).collect();
            let b: Vec<f64> = (0..10).map(|_| 0.95 + 0.02 * normal(&mut rng)).collect();
            let c = compare_pair(&a, &b, 1000).unwrap();
            if c.significant && c.ratio.estimate < 1.0 {
                found += 1;
            }
        }
        assert!(found >= 190, "found {found}/200");
    }

    /// Box–Muller normal deviates, so the test needs no extra crate.
    mod rand_distr_free {
        use rand::Rng;
        pub fn normal<R: Rng>(rng: &mut R) -> f64 {
            let u1: f64 = rng.gen::<f64>().max(f64::MIN_POSITIVE);
            let u2: f64 = rng.gen();
            (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        }
    }
}
