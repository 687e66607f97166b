//! Per-function sums over a profile, shared by overlap and diff.

use kfdo_afdo::FunctionSamples;

/// The body samples of a function, inlinees included: their sum, the largest,
/// and how many reach `hot` (LLVM's `getFuncSampleStats`; call targets and
/// total/head samples are not counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BodyStats {
    pub sum: u64,
    pub max: u64,
    pub hot_blocks: u64,
}

/// [`BodyStats`] of `f` with blocks counted hot from `hot` samples on. The sum
/// wraps as LLVM's unsigned accumulator does (a profile reaching 2^64 body
/// samples is not a real one).
pub fn body_stats(f: &FunctionSamples, hot: u64) -> BodyStats {
    let mut s = BodyStats::default();
    add(f, hot, &mut s);
    s
}

fn add(f: &FunctionSamples, hot: u64, s: &mut BodyStats) {
    for rec in f.body.values() {
        s.sum = s.sum.wrapping_add(rec.count);
        s.max = s.max.max(rec.count);
        if rec.count >= hot {
            s.hot_blocks += 1;
        }
    }
    for callees in f.callsites.values() {
        for inl in callees.values() {
            add(inl, hot, s);
        }
    }
}
