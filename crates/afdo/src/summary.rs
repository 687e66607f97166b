//! The profile summary, computed exactly as LLVM's
//! `SampleProfileSummaryBuilder` does for a (non context-sensitive) sample
//! profile. clang reads it from extbinary profiles to decide what is hot and
//! what is cold (`ProfileSummaryInfo`), so it must match.
//!
//! - every body record of every function, inlinees included, is one count
//!   (call targets are not counts);
//! - `num_functions` and `max_function_count` (the largest head count) look
//!   at top-level functions only;
//! - the detailed summary gives, for each cutoff (parts per million of the
//!   total count), the smallest count `min_count` such that the `num_counts`
//!   largest counts add up to at least `total * cutoff / 1e6`.

use crate::model::{FunctionSamples, Profile};

/// `ProfileSummaryBuilder::DefaultCutoffs` (parts per million).
pub const DEFAULT_CUTOFFS: [u32; 16] = [
    10000, 100000, 200000, 300000, 400000, 500000, 600000, 700000, 800000, 900000, 950000, 990000,
    999000, 999900, 999990, 999999,
];

/// `ProfileSummary::Scale`.
pub const SUMMARY_SCALE: u64 = 1_000_000;

#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct SummaryEntry {
    /// Parts per million of the total count.
    pub cutoff: u32,
    pub min_count: u64,
    pub num_counts: u64,
}

#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct ProfileSummary {
    pub total_count: u64,
    /// Largest body count ("maximum block count").
    pub max_count: u64,
    /// Largest head count of a top-level function.
    pub max_function_count: u64,
    /// Number of body records ("total number of blocks").
    pub num_counts: u64,
    /// Number of top-level functions.
    pub num_functions: u64,
    pub detailed: Vec<SummaryEntry>,
}

impl ProfileSummary {
    /// The summary with LLVM's default cutoffs.
    pub fn compute(p: &Profile) -> Self {
        Self::compute_with_cutoffs(p, &DEFAULT_CUTOFFS)
    }

    /// The summary for the given cutoffs (each below 1,000,000; sorted as
    /// LLVM sorts them).
    pub fn compute_with_cutoffs(p: &Profile, cutoffs: &[u32]) -> Self {
        let mut b = Builder::default();
        for fs in p.functions.values() {
            b.num_functions += 1;
            b.max_function_count = b.max_function_count.max(fs.head_samples);
            b.add_record(fs);
        }
        // LLVM's accumulators are plain unsigned integers: they wrap.
        let mut s = ProfileSummary {
            total_count: b.total_count,
            max_count: b.max_count,
            max_function_count: b.max_function_count,
            num_counts: b.num_counts,
            num_functions: b.num_functions,
            detailed: Vec::with_capacity(cutoffs.len()),
        };
        let mut cutoffs = cutoffs.to_vec();
        cutoffs.sort_unstable();
        // LLVM keeps a count -> frequency map and walks it from the largest
        // count; a sorted vector walked in runs of equal counts is the same.
        let mut counts = b.counts;
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let mut i = 0;
        let mut seen: u64 = 0;
        let mut sum: u64 = 0;
        let mut count: u64 = 0;
        for cutoff in cutoffs {
            let desired = ((s.total_count as u128 * cutoff as u128) / SUMMARY_SCALE as u128) as u64;
            while sum < desired && i < counts.len() {
                let c = counts[i];
                let run = counts[i..].iter().take_while(|&&x| x == c).count();
                i += run;
                count = c;
                sum = sum.wrapping_add(c.wrapping_mul(run as u64));
                seen = seen.wrapping_add(run as u64);
            }
            s.detailed.push(SummaryEntry {
                cutoff,
                min_count: count,
                num_counts: seen,
            });
        }
        s
    }
}

impl Profile {
    /// The profile summary LLVM would compute for this profile.
    pub fn summary(&self) -> ProfileSummary {
        ProfileSummary::compute(self)
    }
}

#[derive(Default)]
struct Builder {
    total_count: u64,
    max_count: u64,
    max_function_count: u64,
    num_counts: u64,
    num_functions: u64,
    counts: Vec<u64>,
}

impl Builder {
    fn add_record(&mut self, fs: &FunctionSamples) {
        for rec in fs.body.values() {
            let c = rec.count;
            self.total_count = self.total_count.wrapping_add(c);
            self.max_count = self.max_count.max(c);
            self.num_counts += 1;
            self.counts.push(c);
        }
        for m in fs.callsites.values() {
            for callee in m.values() {
                self.add_record(callee);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LineLocation;

    /// Numbers printed by `llvm-profdata-19 show --sample --detailed-summary`
    /// for the same profile.
    #[test]
    fn matches_llvm_example() {
        let mut p = Profile::new();
        let b = p.function_mut("beta");
        b.add_total(200);
        b.add_body(LineLocation::new(0, 0), 200);
        let a = p.function_mut("alpha");
        a.add_total(100);
        a.add_head(1);
        a.add_body(LineLocation::new(1, 0), 100);
        let z = p.function_mut("zeta");
        z.add_total(100);
        z.add_head(5);
        z.add_body(LineLocation::new(1, 0), 50);
        z.add_body(LineLocation::new(2, 3), 20);
        z.add_body(LineLocation::new(3, 0), 30);
        z.inlinee_mut(LineLocation::new(4, 0), "abc")
            .add_body(LineLocation::new(1, 0), 3);
        let foo = z.inlinee_mut(LineLocation::new(4, 0), "foo");
        foo.add_body(LineLocation::new(1, 0), 40);
        foo.inlinee_mut(LineLocation::new(2, 0), "inner")
            .add_body(LineLocation::new(1, 0), 5);
        let s = ProfileSummary::compute(&p);
        assert_eq!(
            (
                s.total_count,
                s.max_count,
                s.max_function_count,
                s.num_counts,
                s.num_functions
            ),
            (448, 200, 5, 8, 3)
        );
        let got: Vec<(u64, u64)> = s
            .detailed
            .iter()
            .map(|e| (e.num_counts, e.min_count))
            .collect();
        let want = [
            (1, 200),
            (1, 200),
            (1, 200),
            (1, 200),
            (1, 200),
            (2, 100),
            (2, 100),
            (3, 50),
            (4, 40),
            (5, 30),
            (6, 20),
            (7, 5),
            (8, 3),
            (8, 3),
            (8, 3),
            (8, 3),
        ];
        assert_eq!(got, want);
    }
}
