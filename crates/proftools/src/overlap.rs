//! The similarity of two sample profiles, with the definitions of
//! `llvm-profdata overlap --sample` (its `SampleOverlapAggregator`), so the
//! figures agree with LLVM's to the digits it prints.
//!
//! - A block is one body record (line offset + discriminator). Its similarity
//!   in a function is `1 - |b/B - t/T|`, b and t its counts, B and T the
//!   function's body-sample sums (inlinees included) in base and test.
//! - A function's internal similarity is `(2 - sum of (1 - block
//!   similarity)) / 2` over the blocks in either profile, walking matched
//!   inlinees recursively (their blocks measured against the top-level B, T);
//!   an inlinee present on one side only counts as one block holding all its
//!   samples.
//! - A function's similarity weighs that by `1 - |B/PB - T/PT|` (PB, PT the
//!   profiles' sums); the whole-program similarity adds each function's
//!   similarity times its average weight `(B/PB + T/PT) / 2`. Functions on one
//!   side only add 0.
//! - Hot means at least the 99% cutoff's minimum count of the profile's own
//!   summary (`getHotCountThreshold`); a function is hot when its largest
//!   block is.
//! - Call targets (the sample profile's value profile) take no part in LLVM's
//!   sample overlap, so none here either.

use kfdo_afdo::{FunctionSamples, Profile, ProfileSummary};
use serde::Serialize;

use crate::walk::{body_stats, BodyStats};

/// LLVM rounds accumulated similarities within this of 0 or 1 to 0 or 1.
const EPSILON: f64 = 0.000005;
/// The summary cutoff that defines "hot" (parts per million).
const HOT_CUTOFF: u32 = 990_000;

/// The figures, as fractions in [0, 1] (NaN where LLVM divides 0 by 0).
#[derive(Clone, Debug, Default, Serialize)]
pub struct OverlapReport {
    pub base: String,
    pub test: String,
    pub similarity: f64,
    pub sample_overlap: f64,
    pub base_unique_samples: f64,
    pub test_unique_samples: f64,
    pub base_samples: u64,
    pub test_samples: u64,
    pub function_overlap: f64,
    pub overlap_functions: u64,
    pub base_unique_functions: u64,
    pub test_unique_functions: u64,
    pub hot_function_overlap: f64,
    pub overlap_hot_functions: u64,
    pub base_unique_hot_functions: u64,
    pub test_unique_hot_functions: u64,
    pub hot_block_overlap: f64,
    pub overlap_hot_blocks: u64,
    pub base_unique_hot_blocks: u64,
    pub test_unique_hot_blocks: u64,
    pub base_hot_threshold: u64,
    pub test_hot_threshold: u64,
    /// Every function of either profile, heaviest in base first.
    pub functions: Vec<FunctionOverlap>,
}

/// One function's figures (LLVM prints these for `--function` and cutoffs).
#[derive(Clone, Debug, Default, Serialize)]
pub struct FunctionOverlap {
    pub name: String,
    pub in_base: bool,
    pub in_test: bool,
    /// Share of the base (test) profile's samples.
    pub base_weight: f64,
    pub test_weight: f64,
    pub similarity: f64,
    pub sample_overlap: f64,
    pub base_unique: f64,
    pub test_unique: f64,
    pub base_samples: u64,
    pub test_samples: u64,
}

/// The hot threshold of a profile: the minimum count of its 99% cutoff.
pub fn hot_threshold(p: &Profile) -> u64 {
    let s = ProfileSummary::compute(p);
    s.detailed
        .iter()
        .find(|e| e.cutoff >= HOT_CUTOFF)
        .map_or(0, |e| e.min_count)
}

#[derive(Default)]
struct Counts {
    overlap: u64,
    base: u64,
    test: u64,
    union: u64,
}

/// Sample tallies of one matched function (LLVM's per-function stats).
#[derive(Default)]
struct FuncTally {
    base_sum: u64,
    test_sum: u64,
    overlap: u64,
    union: u64,
    base_unique: u64,
    test_unique: u64,
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Both,
    Base,
    Test,
}

struct Aggregator {
    base_hot: u64,
    test_hot: u64,
    hot_blocks: Counts,
}

impl Aggregator {
    fn hot_block(&mut self, b: u64, t: u64, n: u64) {
        let (bh, th) = (b >= self.base_hot, t >= self.test_hot);
        if !bh && !th {
            return;
        }
        self.hot_blocks.union += n;
        self.hot_blocks.base += if bh { n } else { 0 };
        self.hot_blocks.test += if th { n } else { 0 };
        self.hot_blocks.overlap += if bh && th { n } else { 0 };
    }

    fn frac(n: u64, of: u64) -> f64 {
        if of > 0 {
            n as f64 / of as f64
        } else {
            0.0
        }
    }

    /// One block (or one unmatched inlinee) of a matched function.
    fn unit(&mut self, mut b: u64, mut t: u64, hot_n: u64, side: Side, f: &mut FuncTally) -> f64 {
        match side {
            Side::Base => {
                t = 0;
                f.base_unique = f.base_unique.wrapping_add(b);
            }
            Side::Test => {
                b = 0;
                f.test_unique = f.test_unique.wrapping_add(t);
            }
            Side::Both => {}
        }
        f.union = f.union.wrapping_add(b.max(t));
        f.overlap = f.overlap.wrapping_add(b.min(t));
        let sim = 1.0 - (Self::frac(b, f.base_sum) - Self::frac(t, f.test_sum)).abs();
        self.hot_block(b, t, hot_n);
        1.0 - sim
    }

    fn unmatched_inlinee(&mut self, inl: &FunctionSamples, side: Side, f: &mut FuncTally) -> f64 {
        if side == Side::Base {
            let s = body_stats(inl, self.base_hot);
            self.unit(s.sum, 0, s.hot_blocks, side, f)
        } else {
            let s = body_stats(inl, self.test_hot);
            self.unit(0, s.sum, s.hot_blocks, side, f)
        }
    }

    /// Function-internal similarity of two profiles of one function.
    fn internal(&mut self, b: &FunctionSamples, t: &FunctionSamples, f: &mut FuncTally) -> f64 {
        let mut diff = 0.0;
        for (side, bv, tv) in join(&b.body, &t.body) {
            let (bc, tc) = (bv.map_or(0, |r| r.count), tv.map_or(0, |r| r.count));
            diff += self.unit(bc, tc, 1, side, f);
        }
        for (side, bs, ts) in join(&b.callsites, &t.callsites) {
            match (bs, ts) {
                (Some(bs), Some(ts)) => {
                    for (s, bi, ti) in join(bs, ts) {
                        diff += match (bi, ti) {
                            (Some(bi), Some(ti)) => 2.0 - 2.0 * self.internal(bi, ti, f),
                            (Some(x), None) | (None, Some(x)) => self.unmatched_inlinee(x, s, f),
                            (None, None) => unreachable!("join yields one side at least"),
                        };
                    }
                }
                (Some(x), None) | (None, Some(x)) => {
                    for inl in x.values() {
                        diff += self.unmatched_inlinee(inl, side, f);
                    }
                }
                (None, None) => unreachable!("join yields one side at least"),
            }
        }
        (2.0 - diff) / 2.0
    }
}

/// A sort-merge join of two ordered maps: each key once, with its side.
fn join<'a, K: Ord, V>(
    a: &'a std::collections::BTreeMap<K, V>,
    b: &'a std::collections::BTreeMap<K, V>,
) -> Vec<(Side, Option<&'a V>, Option<&'a V>)> {
    let (mut i, mut j) = (a.iter().peekable(), b.iter().peekable());
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    loop {
        let step = match (i.peek(), j.peek()) {
            (None, None) => break,
            (Some(_), None) => Side::Base,
            (None, Some(_)) => Side::Test,
            (Some(x), Some(y)) => match x.0.cmp(y.0) {
                std::cmp::Ordering::Less => Side::Base,
                std::cmp::Ordering::Greater => Side::Test,
                std::cmp::Ordering::Equal => Side::Both,
            },
        };
        match step {
            Side::Base => out.push((step, i.next().map(|x| x.1), None)),
            Side::Test => out.push((step, None, j.next().map(|x| x.1))),
            Side::Both => out.push((step, i.next().map(|x| x.1), j.next().map(|x| x.1))),
        }
    }
    out
}

fn ratio(n: u64, d: u64) -> f64 {
    n as f64 / d as f64
}

/// Overlap of `base` and `test`; `names` are the files, for the report and
/// the error when a profile has no samples.
pub fn overlap_profiles(
    base: &Profile,
    test: &Profile,
    names: (&std::path::Path, &std::path::Path),
) -> Result<OverlapReport, crate::error::ToolError> {
    let mut ag = Aggregator {
        base_hot: hot_threshold(base),
        test_hot: hot_threshold(test),
        hot_blocks: Counts::default(),
    };
    let bstats = function_stats(base, ag.base_hot);
    let tstats = function_stats(test, ag.test_hot);
    let psum = |s: &std::collections::BTreeMap<&str, BodyStats>| {
        s.values().fold(0u64, |a, x| a.wrapping_add(x.sum))
    };
    let (pb, pt) = (psum(&bstats), psum(&tstats));
    for (sum, path) in [(pb, names.0), (pt, names.1)] {
        if sum == 0 {
            return Err(crate::error::ToolError::NoSamples {
                path: path.to_owned(),
            });
        }
    }
    let mut r = OverlapReport {
        base: names.0.display().to_string(),
        test: names.1.display().to_string(),
        base_samples: pb,
        test_samples: pt,
        base_hot_threshold: ag.base_hot,
        test_hot_threshold: ag.test_hot,
        ..Default::default()
    };
    let (mut overlap_s, mut union_s, mut bu_s, mut tu_s) = (0u64, 0u64, 0u64, 0u64);
    for (side, bf, tf) in join(&base.functions, &test.functions) {
        let name = bf.or(tf).map(|f| f.name.clone()).unwrap_or_default();
        let (bs, ts) = (bstats.get(name.as_str()), tstats.get(name.as_str()));
        let mut fo = FunctionOverlap {
            name,
            in_base: bf.is_some(),
            in_test: tf.is_some(),
            base_samples: bs.map_or(0, |s| s.sum),
            test_samples: ts.map_or(0, |s| s.sum),
            ..Default::default()
        };
        let (wb, wt) = (ratio(fo.base_samples, pb), ratio(fo.test_samples, pt));
        fo.base_weight = wb;
        fo.test_weight = wt;
        match (side, bf, tf) {
            (Side::Both, Some(b), Some(t)) => {
                r.overlap_functions += 1;
                let mut tally = FuncTally {
                    base_sum: fo.base_samples,
                    test_sum: fo.test_samples,
                    ..Default::default()
                };
                let mut fis = ag.internal(b, t, &mut tally);
                if fis.abs() < EPSILON {
                    fis = 0.0;
                }
                fo.similarity = fis * (1.0 - (wb - wt).abs());
                r.similarity += fo.similarity * (wb / 2.0 + wt / 2.0);
                overlap_s = overlap_s.wrapping_add(tally.overlap);
                union_s = union_s.wrapping_add(tally.union);
                bu_s = bu_s.wrapping_add(tally.base_unique);
                tu_s = tu_s.wrapping_add(tally.test_unique);
                fo.sample_overlap = if tally.union > 0 {
                    ratio(tally.overlap, tally.union)
                } else {
                    0.0
                };
                fo.base_unique = Aggregator::frac(tally.base_unique, tally.base_sum);
                fo.test_unique = Aggregator::frac(tally.test_unique, tally.test_sum);
            }
            (_, Some(_), None) => {
                let s = bs.copied().unwrap_or_default();
                r.base_unique_functions += 1;
                bu_s = bu_s.wrapping_add(s.sum);
                union_s = union_s.wrapping_add(s.sum);
                ag.hot_block(s.sum, 0, s.hot_blocks);
                fo.base_unique = 1.0;
            }
            (_, None, Some(_)) => {
                let s = ts.copied().unwrap_or_default();
                r.test_unique_functions += 1;
                tu_s = tu_s.wrapping_add(s.sum);
                union_s = union_s.wrapping_add(s.sum);
                ag.hot_block(0, s.sum, s.hot_blocks);
                fo.test_unique = 1.0;
            }
            _ => unreachable!("join yields one side at least"),
        }
        r.functions.push(fo);
    }
    if (r.similarity - 1.0).abs() < EPSILON {
        r.similarity = 1.0;
    }
    r.sample_overlap = ratio(overlap_s, union_s);
    r.base_unique_samples = ratio(bu_s, pb);
    r.test_unique_samples = ratio(tu_s, pt);
    let union_fns = r.overlap_functions + r.base_unique_functions + r.test_unique_functions;
    r.function_overlap = ratio(r.overlap_functions, union_fns);
    hot_functions(&mut r, &bstats, &tstats, ag.base_hot, ag.test_hot);
    let hb = &ag.hot_blocks;
    r.hot_block_overlap = ratio(hb.overlap, hb.union);
    r.overlap_hot_blocks = hb.overlap;
    r.base_unique_hot_blocks = hb.base - hb.overlap;
    r.test_unique_hot_blocks = hb.test - hb.overlap;
    r.functions.sort_by(|a, b| {
        b.base_weight
            .total_cmp(&a.base_weight)
            .then(b.test_weight.total_cmp(&a.test_weight))
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(r)
}

fn function_stats(p: &Profile, hot: u64) -> std::collections::BTreeMap<&str, BodyStats> {
    p.functions
        .iter()
        .map(|(n, f)| (n.as_str(), body_stats(f, hot)))
        .collect()
}

/// Hot functions: their largest block reaches the profile's hot threshold.
fn hot_functions(
    r: &mut OverlapReport,
    b: &std::collections::BTreeMap<&str, BodyStats>,
    t: &std::collections::BTreeMap<&str, BodyStats>,
    bh: u64,
    th: u64,
) {
    let hot = |m: &std::collections::BTreeMap<&str, BodyStats>, h: u64| -> Vec<String> {
        m.iter()
            .filter(|(_, s)| s.max >= h)
            .map(|(n, _)| n.to_string())
            .collect()
    };
    let (hb, ht) = (hot(b, bh), hot(t, th));
    let both = hb.iter().filter(|n| ht.contains(n)).count() as u64;
    r.overlap_hot_functions = both;
    r.base_unique_hot_functions = hb.len() as u64 - both;
    r.test_unique_hot_functions = ht.len() as u64 - both;
    r.hot_function_overlap = ratio(both, hb.len() as u64 + ht.len() as u64 - both);
}
