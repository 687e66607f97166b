//! Sorted runs of (key, count): how a merge adds counts up without a hash map.
//!
//! The contract sorts every file by (kind, from, to), so each file is already a sorted
//! run. A key packs into one `u128` whose integer order is that order (kind in the top
//! 2 bits, `from` and `to` in 63 bits each: both are offsets >= 0), and runs merge
//! linearly, reading and writing memory in order, several at once on all cores.
//! Counts add in `u64` and refuse to pass `i64::MAX`: every count is >= 0, so a sum
//! that passes it stays past it, and the merged file could not hold it.

use crate::schema::RowKind;

/// One key: kind, from, to, in their sort order.
pub type Key = u128;

const KIND_SHIFT: u32 = 126;
const FROM_SHIFT: u32 = 63;
const LOW_63: u128 = (1 << 63) - 1;

/// Packs a key; `from` and `to` must be >= 0 (the reader checked).
pub fn key(kind: RowKind, from: i64, to: i64) -> Key {
    debug_assert!(from >= 0 && to >= 0);
    let k = match kind {
        RowKind::Branch => 0u128,
        RowKind::Ip => 1,
        RowKind::Range => 2,
    };
    (k << KIND_SHIFT) | ((from as u128) << FROM_SHIFT) | (to as u128)
}

/// Unpacks a key made by [`key`].
pub fn unkey(k: Key) -> (RowKind, i64, i64) {
    let kind = match k >> KIND_SHIFT {
        0 => RowKind::Branch,
        1 => RowKind::Ip,
        _ => RowKind::Range,
    };
    (
        kind,
        ((k >> FROM_SHIFT) & LOW_63) as i64,
        (k & LOW_63) as i64,
    )
}

/// A count passed `i64::MAX` at this key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow(pub Key);

/// Keys strictly increasing, each with its count (> 0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Run {
    pub keys: Vec<Key>,
    pub counts: Vec<u64>,
}

fn add(a: u64, b: u64, at: Key) -> Result<u64, Overflow> {
    a.checked_add(b)
        .filter(|&s| s <= i64::MAX as u64)
        .ok_or(Overflow(at))
}

impl Run {
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// A run from pairs in any order, equal keys added (a file that keeps the contract
    /// is already sorted, and this is one pass over it).
    pub fn from_pairs(mut keys: Vec<Key>, mut counts: Vec<u64>) -> Result<Run, Overflow> {
        debug_assert_eq!(keys.len(), counts.len());
        if keys.windows(2).all(|w| w[0] < w[1]) {
            return Ok(Run { keys, counts });
        }
        let mut pairs: Vec<(Key, u64)> = keys.drain(..).zip(counts.drain(..)).collect();
        pairs.sort_unstable_by_key(|p| p.0);
        for (k, c) in pairs {
            match keys.last() {
                Some(&last) if last == k => {
                    let sum = counts.last_mut().expect("a count per key");
                    *sum = add(*sum, c, k)?;
                }
                _ => {
                    keys.push(k);
                    counts.push(c);
                }
            }
        }
        Ok(Run { keys, counts })
    }

    /// Two runs into one, in one linear pass.
    pub fn merge(a: Run, b: Run) -> Result<Run, Overflow> {
        if a.is_empty() {
            return Ok(b);
        }
        if b.is_empty() {
            return Ok(a);
        }
        let mut keys = Vec::with_capacity(a.len() + b.len());
        let mut counts = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            let (ka, kb) = (a.keys[i], b.keys[j]);
            if ka < kb {
                keys.push(ka);
                counts.push(a.counts[i]);
                i += 1;
            } else if kb < ka {
                keys.push(kb);
                counts.push(b.counts[j]);
                j += 1;
            } else {
                keys.push(ka);
                counts.push(add(a.counts[i], b.counts[j], ka)?);
                i += 1;
                j += 1;
            }
        }
        keys.extend_from_slice(&a.keys[i..]);
        counts.extend_from_slice(&a.counts[i..]);
        keys.extend_from_slice(&b.keys[j..]);
        counts.extend_from_slice(&b.counts[j..]);
        Ok(Run { keys, counts })
    }

    /// Many runs into one: halves merged side by side (rayon), then the two halves.
    pub fn merge_all(mut runs: Vec<Run>) -> Result<Run, Overflow> {
        match runs.len() {
            0 => Ok(Run::default()),
            1 => Ok(runs.pop().expect("one run")),
            n => {
                let right = runs.split_off(n / 2);
                let (a, b) = rayon::join(|| Run::merge_all(runs), || Run::merge_all(right));
                Run::merge(a?, b?)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn key_order_is_kind_from_to_order() {
        let tuples = [
            (RowKind::Branch, 0, 0),
            (RowKind::Branch, 0, i64::MAX),
            (RowKind::Branch, 1, 0),
            (RowKind::Branch, i64::MAX, i64::MAX),
            (RowKind::Ip, 0, 0),
            (RowKind::Ip, 5, 5),
            (RowKind::Range, 0, 1),
            (RowKind::Range, i64::MAX, 0),
        ];
        for w in tuples.windows(2) {
            assert!(w[0] < w[1]);
            assert!(
                key(w[0].0, w[0].1, w[0].2) < key(w[1].0, w[1].1, w[1].2),
                "{w:?}"
            );
        }
        for t in tuples {
            assert_eq!(unkey(key(t.0, t.1, t.2)), t);
        }
    }

    /// The merge of random runs equals a plain map's sums.
    #[test]
    fn merge_all_equals_a_map() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut expected = std::collections::BTreeMap::<Key, u64>::new();
        let mut runs = Vec::new();
        for _ in 0..9 {
            let n = rng.gen_range(0..500);
            let keys: Vec<Key> = (0..n)
                .map(|_| key(RowKind::Range, rng.gen_range(0..300), rng.gen_range(0..3)))
                .collect();
            let counts: Vec<u64> = (0..n).map(|_| rng.gen_range(1..1000)).collect();
            for (k, c) in keys.iter().zip(&counts) {
                *expected.entry(*k).or_default() += c;
            }
            runs.push(Run::from_pairs(keys, counts).unwrap());
        }
        let merged = Run::merge_all(runs).unwrap();
        assert!(merged.keys.windows(2).all(|w| w[0] < w[1]));
        let got: Vec<(Key, u64)> = merged.keys.into_iter().zip(merged.counts).collect();
        assert_eq!(got, expected.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn sums_past_int64_are_refused_with_their_key() {
        let k = key(RowKind::Branch, 4, 8);
        let big = i64::MAX as u64 - 1;
        let a = Run::from_pairs(vec![k], vec![big]).unwrap();
        let b = Run::from_pairs(vec![k], vec![2]).unwrap();
        assert_eq!(Run::merge(a, b), Err(Overflow(k)));
        assert_eq!(
            Run::from_pairs(vec![k, k], vec![big, 1]).unwrap().counts,
            vec![big + 1]
        );
        assert_eq!(Run::from_pairs(vec![k, k], vec![big, 2]), Err(Overflow(k)));
    }
}
