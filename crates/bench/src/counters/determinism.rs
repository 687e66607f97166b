//! Whether a variant's counts are deterministic, and what to show when they are not.
//!
//! An exact counter (the emulated one) gives the same numbers for the same binary and
//! input only when the program runs one thread at a time: with several, how the threads
//! interleave (who spins on a lock, who waits in the kernel) changes from run to run, and
//! the counts with it. Such a variant is counted a few times; its value is the median and
//! its [`Spread`] the lowest and highest count, and every place that shows it says "not
//! deterministic: N threads" instead of claiming the counts are exact.

use super::Counter;

/// How many times a source counts a variant whose program ran several threads: an odd
/// number, so the median is one of the counts, and small, since each count is a whole
/// run under the counter.
pub const COUNTS_WHEN_THREADED: usize = 3;

/// The lowest and highest of several counts of one event.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Spread {
    pub min: f64,
    pub max: f64,
    /// How many counts.
    pub counts: u32,
}

/// "not deterministic: 4 threads" for a count of a program that ran more than one
/// thread; None for one thread, or where the threads are not known.
pub fn label(threads: Option<u32>) -> Option<String> {
    match threads {
        Some(n) if n > 1 => Some(format!("not deterministic: {n} threads")),
        _ => None,
    }
}

/// Whether any of these counts comes from a program that ran several threads.
pub fn threaded(counters: &[Counter]) -> bool {
    counters.iter().any(|c| c.threads.is_some_and(|n| n > 1))
}

/// The most threads any of these counts' programs ran, where known.
pub fn most_threads(counters: &[Counter]) -> Option<u32> {
    counters.iter().filter_map(|c| c.threads).max()
}

/// Several counts of one variant as one: each event (by name and source, in the first
/// count's order) gets the median as its value, the lowest and highest as its spread,
/// and the most threads any count saw. An event missing from some count is combined
/// over the counts that have it.
pub fn combine(counts: &[Vec<Counter>]) -> Vec<Counter> {
    let Some(first) = counts.first() else {
        return Vec::new();
    };
    first
        .iter()
        .map(|c| {
            let same: Vec<&Counter> = counts
                .iter()
                .filter_map(|one| {
                    one.iter()
                        .find(|x| x.name == c.name && x.source == c.source)
                })
                .collect();
            let mut values: Vec<f64> = same.iter().map(|x| x.value).collect();
            values.sort_by(f64::total_cmp);
            let n = values.len();
            let median = if n % 2 == 1 {
                values[n / 2]
            } else {
                (values[n / 2 - 1] + values[n / 2]) / 2.0
            };
            Counter {
                name: c.name.clone(),
                value: median,
                source: c.source.clone(),
                threads: same.iter().filter_map(|x| x.threads).max(),
                spread: Some(Spread {
                    min: values[0],
                    max: values[n - 1],
                    counts: n as u32,
                }),
            }
        })
        .collect()
}

/// What can be said of counted variants (name, counts) as a whole.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// Every count is of a program that ran one thread at a time.
    Deterministic,
    /// These variants (name, threads, how many counts) ran several threads.
    NotDeterministic(Vec<(String, u32, u32)>),
    /// Some counts do not say how many threads their program ran (and none ran several).
    Unknown,
}

/// The [`Claim`] these counted variants support.
pub fn claim(counted: &[(&str, &[Counter])]) -> Claim {
    let threaded: Vec<(String, u32, u32)> = counted
        .iter()
        .filter(|(_, cs)| threaded(cs))
        .map(|(name, cs)| {
            let counts = cs
                .iter()
                .filter_map(|c| c.spread.map(|s| s.counts))
                .max()
                .unwrap_or(1);
            (name.to_string(), most_threads(cs).unwrap_or(0), counts)
        })
        .collect();
    if !threaded.is_empty() {
        return Claim::NotDeterministic(threaded);
    }
    let known = counted
        .iter()
        .all(|(_, cs)| !cs.is_empty() && cs.iter().all(|c| c.threads.is_some()));
    if known && !counted.is_empty() {
        Claim::Deterministic
    } else {
        Claim::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(name: &str, value: f64, threads: u32) -> Counter {
        Counter {
            threads: Some(threads),
            ..Counter::new(name, value, "emulated")
        }
    }

    #[test]
    fn only_several_threads_are_labelled() {
        assert_eq!(
            label(Some(4)).as_deref(),
            Some("not deterministic: 4 threads")
        );
        assert_eq!(label(Some(1)), None);
        assert_eq!(label(None), None);
        assert_eq!(
            counted("instructions", 1.0, 2)
                .determinism_label()
                .as_deref(),
            Some("not deterministic: 2 threads")
        );
    }

    #[test]
    fn several_counts_give_the_median_and_the_spread() {
        let counts = vec![
            vec![counted("instructions", 355.0, 5), counted("taken", 9.5, 5)],
            vec![counted("instructions", 353.0, 5), counted("taken", 9.3, 5)],
            vec![counted("instructions", 354.0, 4), counted("taken", 9.6, 4)],
        ];
        let c = combine(&counts);
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].name.as_str(), c[0].value), ("instructions", 354.0));
        assert_eq!(
            c[0].spread,
            Some(Spread {
                min: 353.0,
                max: 355.0,
                counts: 3
            })
        );
        assert_eq!(c[0].threads, Some(5));
        assert_eq!(c[1].value, 9.5);
        assert!(threaded(&c));
        let two = combine(&counts[..2]);
        assert_eq!(two[0].value, 354.0);
        assert!(combine(&[]).is_empty());
    }

    #[test]
    fn the_claim_needs_every_count_single_threaded() {
        let one = [counted("instructions", 1.0, 1)];
        let many = combine(&[
            vec![counted("instructions", 1.0, 4)],
            vec![counted("instructions", 2.0, 4)],
            vec![counted("instructions", 3.0, 4)],
        ]);
        assert_eq!(claim(&[("a", &one), ("b", &one)]), Claim::Deterministic);
        assert_eq!(
            claim(&[("a", &one), ("mt", &many)]),
            Claim::NotDeterministic(vec![("mt".into(), 4, 3)])
        );
        let unknown = [Counter::new("instructions", 1.0, "emulated")];
        assert_eq!(claim(&[("a", &one), ("b", &unknown)]), Claim::Unknown);
        assert_eq!(claim(&[]), Claim::Unknown);
    }
}
