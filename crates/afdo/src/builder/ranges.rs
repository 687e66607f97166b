//! From overlapping counted ranges to disjoint ones.
//!
//! Fall-through ranges overlap (a loop body is entered at different points);
//! each instruction's count is the sum over the ranges that cover it. Before
//! that, every function a range starts in gets all its address ranges added
//! with count 0, so the instructions of a sampled function that never ran get
//! an explicit zero (the compiler reads 0 as "cold", absence as "unknown").

use std::collections::BTreeMap;

/// Boundary bookkeeping: how much count begins / ends at an address.
#[derive(Default)]
struct Point {
    begin: Option<u64>,
    end: Option<u64>,
    zero_begin: bool,
    zero_end: bool,
}

/// Split inclusive `[first, last] -> count` ranges (zero counts allowed) into
/// disjoint inclusive ranges with summed counts. A gap between two ranges is
/// not a range unless a zero-count range covers it.
pub fn disjoint_ranges(
    ranges: impl IntoIterator<Item = ((u64, u64), u64)>,
) -> Vec<((u64, u64), u64)> {
    let mut points: BTreeMap<u64, Point> = BTreeMap::new();
    for ((first, last), n) in ranges {
        debug_assert!(first <= last);
        let p = points.entry(first).or_default();
        p.begin = Some(p.begin.unwrap_or(0).saturating_add(n));
        p.zero_begin |= n == 0;
        let p = points.entry(last).or_default();
        p.end = Some(p.end.unwrap_or(0).saturating_add(n));
        p.zero_end |= n == 0;
    }
    let mut out = Vec::new();
    let mut open: Option<u64> = None; // start of the range being built
    let mut zero_depth = 0i64;
    let mut count = 0u64;
    for (&addr, p) in &points {
        if let Some(b) = p.begin {
            if let Some(start) = open {
                if start < addr {
                    out.push(((start, addr - 1), count));
                }
            }
            count = count.saturating_add(b);
            open = Some(addr);
            zero_depth += p.zero_begin as i64;
        }
        if let Some(e) = p.end {
            if let Some(start) = open {
                out.push(((start, addr), count));
            }
            count = count.saturating_sub(e);
            open = addr.checked_add(1);
            zero_depth -= p.zero_end as i64;
            if count == 0 && zero_depth == 0 {
                open = None;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::disjoint_ranges;

    #[test]
    fn nested_and_touching() {
        let r = disjoint_ranges([((10, 20), 100), ((10, 30), 200)]);
        assert_eq!(r, vec![((10, 20), 300), ((21, 30), 200)]);
        let r = disjoint_ranges([((10, 20), 100), ((20, 30), 200)]);
        assert_eq!(r, vec![((10, 19), 100), ((20, 20), 300), ((21, 30), 200)]);
    }

    #[test]
    fn gaps_are_not_ranges_unless_zero_filled() {
        let r = disjoint_ranges([((10, 20), 1), ((40, 50), 2)]);
        assert_eq!(r, vec![((10, 20), 1), ((40, 50), 2)]);
        let r = disjoint_ranges([((10, 20), 1), ((40, 50), 2), ((0, 60), 0)]);
        assert_eq!(
            r,
            vec![
                ((0, 9), 0),
                ((10, 20), 1),
                ((21, 39), 0),
                ((40, 50), 2),
                ((51, 60), 0)
            ]
        );
    }
}
