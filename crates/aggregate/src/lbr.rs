//! One sample's branch stack to range and branch counts, by llvm-profgen's rules.
//!
//! LBR records come newest first. Between two consecutive records the CPU ran
//! straight from the older record's target to the newer record's source: that
//! is a fall-through range. The rules (llvm-profgen's PerfReader, matched so
//! profiles agree):
//! - an address outside the binary's code becomes [`EXTERNAL_ADDR`];
//! - a record both of whose ends are external is dropped before pairing;
//! - a branch is counted when its target is code;
//! - a range is counted when both ends are code, start <= end, and no direct
//!   jump lies inside it (such "ranges" come from duplicated or stale records).
//!
//! Validity of a range depends only on its two ends, so it is checked once per
//! distinct range in [`finish_ranges`] instead of once per occurrence.

use crate::code::CodeMap;
use crate::raw::{RawProfile, EXTERNAL_ADDR};

/// Add one LBR stack (newest first, `(from, to)` in canonical addresses) to `p`.
/// Ranges are recorded unvalidated; call [`finish_ranges`] once at the end.
#[inline]
pub fn add_lbr_stack(
    p: &mut RawProfile,
    code: &CodeMap,
    entries: impl Iterator<Item = (u64, u64)>,
    repeat: u64,
) {
    add_classified_stack(
        p,
        entries.map(|(from, to)| {
            (
                code.is_code(from).then_some(from),
                code.is_code(to).then_some(to),
            )
        }),
        repeat,
    );
}

/// [`add_lbr_stack`] with each end already looked up: `Some(address)` when it is code.
#[inline]
pub fn add_classified_stack(
    p: &mut RawProfile,
    entries: impl Iterator<Item = (Option<u64>, Option<u64>)>,
    repeat: u64,
) {
    // `end` is the newer record's source: where the fall-through run stopped.
    let mut end: Option<u64> = None;
    for (from, to) in entries {
        if from.is_none() && to.is_none() {
            continue;
        }
        let src = from.unwrap_or(EXTERNAL_ADDR);
        if let Some(to) = to {
            p.add_branch(src, to, repeat);
            if let Some(e) = end {
                p.add_range(to, e, repeat);
            }
        }
        end = from;
    }
}

/// A sample without a branch stack: the sampled instruction alone, as
/// `llvm-profgen --leading-ip-only` counts it.
#[inline]
pub fn add_ip(p: &mut RawProfile, code: &CodeMap, ip: u64, repeat: u64) {
    if code.is_code(ip) {
        p.add_range(ip, ip, repeat);
    }
}

/// Drop the impossible ranges collected by [`add_lbr_stack`]; returns how many
/// range counts were dropped (reported to the user as a data-quality figure).
pub fn finish_ranges(p: &mut RawProfile, code: &CodeMap) -> u64 {
    let mut dropped = 0u64;
    p.ranges.retain(|&(a, b), n| {
        let ok = code.is_valid_fall_through(a, b);
        if !ok {
            dropped = dropped.saturating_add(*n);
        }
        ok
    });
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    // The example worked through by hand against llvm-profgen-19 (see the
    // conformance tests for the real thing): a loop back-edge 0x1258->0x11b0
    // twice, an earlier `jle` 0x1152->0x1296, and an entry from outside.
    fn code() -> CodeMap {
        let insns = [
            0x1150, 0x1152, 0x1158, 0x11b0, 0x1250, 0x1258, 0x1296, 0x12a0,
        ];
        CodeMap::new(&insns, &[0x12a0])
    }

    #[test]
    fn pairs_records_like_llvm_profgen() {
        let c = code();
        let mut p = RawProfile::default();
        let stack = [
            (0x1258, 0x11b0),
            (0x1258, 0x11b0),
            (0x1152, 0x1296),
            (0x7fff_0000, 0x1150),
        ];
        for _ in 0..3 {
            add_lbr_stack(&mut p, &c, stack.iter().copied(), 1);
        }
        let dropped = finish_ranges(&mut p, &c);
        assert_eq!(dropped, 3, "0x1296..0x1258 runs backwards");
        let mut ranges: Vec<_> = p.ranges.iter().map(|(&k, &v)| (k, v)).collect();
        ranges.sort();
        assert_eq!(ranges, vec![((0x1150, 0x1152), 3), ((0x11b0, 0x1258), 3)]);
        assert_eq!(p.branches[&(EXTERNAL_ADDR, 0x1150)], 3);
        assert_eq!(p.branches[&(0x1258, 0x11b0)], 6);
        assert_eq!(p.branches[&(0x1152, 0x1296)], 3);
    }

    #[test]
    fn external_to_external_records_are_skipped_before_pairing() {
        let c = code();
        let mut p = RawProfile::default();
        // newest: 0x1258->0x11b0, then a library-internal branch, then 0x1152->0x1158.
        let stack = [
            (0x1258, 0x11b0),
            (0x7f00_0000, 0x7f00_0010),
            (0x1152, 0x1158),
        ];
        add_lbr_stack(&mut p, &c, stack.iter().copied(), 1);
        finish_ranges(&mut p, &c);
        assert_eq!(p.ranges.get(&(0x1158, 0x1258)), Some(&1));
    }

    #[test]
    fn ranges_across_a_direct_jump_are_dropped() {
        let c = code();
        let mut p = RawProfile::default();
        // newest 0x12a0->0x1150, older 0x1250->0x1296: the run 0x1296..0x12a0
        // ends at the jmp itself, which is fine.
        add_lbr_stack(
            &mut p,
            &c,
            [(0x12a0, 0x1150), (0x1250, 0x1296)].into_iter(),
            1,
        );
        // a run from 0x1158 to 0x12a8 would have passed the jmp at 0x12a0.
        p.add_range(0x1158, 0x12a8, 1);
        assert_eq!(finish_ranges(&mut p, &c), 1);
        assert!(p.ranges.contains_key(&(0x1296, 0x12a0)));
        assert!(!p.ranges.contains_key(&(0x1158, 0x12a8)));
    }

    #[test]
    fn ip_only_counts_instruction_starts() {
        let c = code();
        let mut p = RawProfile::default();
        add_ip(&mut p, &c, 0x11b0, 2);
        add_ip(&mut p, &c, 0x11b1, 2);
        assert_eq!(p.ranges.len(), 1);
        assert_eq!(p.ranges[&(0x11b0, 0x11b0)], 2);
    }
}
