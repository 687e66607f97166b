//! The lines under a counter table that say which variants' counts are not
//! deterministic (their program ran several threads), with the spread of their counts:
//! the table's cells are then medians, and a reader must not take a difference of a
//! few counts as real.

use std::fmt::Write;

use super::figures::fmt_count;
use crate::analysis::BenchmarkAnalysis;

/// One line per variant with a labelled counter: "'mt' (emulated): not deterministic:
/// 5 threads; the cells are the median of 3 counts, which ranged: instructions
/// 29,254,215–29,538,538, ...". Plain text: each format escapes it.
pub fn notes(b: &BenchmarkAnalysis) -> Vec<String> {
    let mut out = Vec::new();
    for (i, v) in b.variants.iter().enumerate() {
        // Per source: its label and the spread of each of its rows.
        let mut by_source: Vec<(&str, &str, Vec<String>, u32)> = Vec::new();
        for row in &b.counters {
            let Some(label) = row.labels.get(i).and_then(|l| l.as_deref()) else {
                continue;
            };
            let at = match by_source.iter().position(|s| s.0 == row.source) {
                Some(p) => p,
                None => {
                    by_source.push((&row.source, label, Vec::new(), 0));
                    by_source.len() - 1
                }
            };
            if let Some(s) = row.spreads.get(i).copied().flatten() {
                let entry = &mut by_source[at];
                entry.2.push(format!(
                    "{} {}–{}",
                    row.name,
                    fmt_count(s.min),
                    fmt_count(s.max)
                ));
                entry.3 = entry.3.max(s.counts);
            }
        }
        for (source, label, ranges, counts) in by_source {
            let mut line = format!("'{}' ({source}): {label}", v.name);
            if ranges.is_empty() {
                line.push_str("; its counts differ from run to run");
            } else {
                let _ = write!(
                    line,
                    "; the cells are the median of {counts} counts, which ranged: {}",
                    ranges.join(", ")
                );
            }
            out.push(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze_benchmark;
    use crate::counters::{determinism::combine, Counter};

    #[test]
    fn only_threaded_variants_get_a_line_with_their_spread() {
        let mut b = crate::analysis::tests::synthetic(
            "b",
            &[("one", vec![1.0, 1.1]), ("mt", vec![1.0, 1.2])],
        );
        let counted = |name: &str, value: f64, threads: u32| Counter {
            threads: Some(threads),
            ..Counter::new(name, value, "emulated")
        };
        b.variants[0].counters = vec![counted("instructions", 100.0, 1)];
        b.variants[1].counters = combine(&[
            vec![counted("instructions", 1_000_000.0, 5)],
            vec![counted("instructions", 1_200_000.0, 5)],
            vec![counted("instructions", 1_100_000.0, 5)],
        ]);
        let a = analyze_benchmark(&b, 100);
        assert_eq!(
            a.counters[0].labels,
            [None, Some("not deterministic: 5 threads".to_string())]
        );
        assert_eq!(
            notes(&a),
            [
                "'mt' (emulated): not deterministic: 5 threads; the cells are the median of 3 \
              counts, which ranged: instructions 1,000,000–1,200,000"
            ]
        );
        b.variants[1].counters = vec![counted("instructions", 100.0, 1)];
        assert!(notes(&analyze_benchmark(&b, 100)).is_empty());
    }
}
