//! The reports as plain text, for the terminal.

use std::fmt::Write;

use crate::diff::{DiffReport, FunctionChange};
use crate::overlap::OverlapReport;
use crate::staleness::{StaleFunction, StalenessReport};

/// A fraction as a percentage with three decimals (the precision
/// `llvm-profdata overlap` prints), or `n/a` for 0/0.
pub fn pct(x: f64) -> String {
    if x.is_nan() {
        "n/a".to_owned()
    } else {
        format!("{:.3}%", x * 100.0)
    }
}

impl OverlapReport {
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "base: {}\ntest: {}", self.base, self.test);
        let rows = [
            (
                "similarity (whole program)",
                pct(self.similarity),
                String::new(),
            ),
            (
                "samples in both",
                pct(self.sample_overlap),
                format!(
                    "base only {}, test only {}; {} base samples, {} test samples",
                    pct(self.base_unique_samples),
                    pct(self.test_unique_samples),
                    self.base_samples,
                    self.test_samples
                ),
            ),
            (
                "functions in both",
                pct(self.function_overlap),
                counts(
                    self.overlap_functions,
                    self.base_unique_functions,
                    self.test_unique_functions,
                ),
            ),
            (
                "hot functions in both",
                pct(self.hot_function_overlap),
                counts(
                    self.overlap_hot_functions,
                    self.base_unique_hot_functions,
                    self.test_unique_hot_functions,
                ),
            ),
            (
                "hot blocks in both",
                pct(self.hot_block_overlap),
                counts(
                    self.overlap_hot_blocks,
                    self.base_unique_hot_blocks,
                    self.test_unique_hot_blocks,
                ),
            ),
        ];
        for (what, v, more) in rows {
            let _ = write!(s, "  {what:<28} {v:>9}");
            if !more.is_empty() {
                let _ = write!(s, "  ({more})");
            }
            s.push('\n');
        }
        let _ = writeln!(
            s,
            "  hot from {} samples in base, {} in test (the summaries' 99% cutoff)",
            self.base_hot_threshold, self.test_hot_threshold
        );
        s
    }
}

fn counts(both: u64, base: u64, test: u64) -> String {
    format!("{both} in both, {base} base only, {test} test only")
}

fn change_rows(s: &mut String, title: &str, v: &[FunctionChange], total: usize) {
    if v.is_empty() {
        return;
    }
    let _ = writeln!(s, "{title} (top {} of {total}):", v.len());
    let _ = writeln!(s, "  {:>9} {:>9} {:>9}  function", "old", "new", "change");
    for c in v {
        let _ = writeln!(
            s,
            "  {:>9} {:>9} {:>+8.3}%  {}",
            pct(c.old_share),
            pct(c.new_share),
            c.delta * 100.0,
            c.name
        );
    }
}

impl DiffReport {
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "old: {} ({} samples)\nnew: {} ({} samples)\n{} functions in common, {} added, {} removed; whole-program similarity {}",
            self.old,
            self.old_samples,
            self.new,
            self.new_samples,
            self.common_functions,
            self.added_functions,
            self.removed_functions,
            pct(self.similarity)
        );
        change_rows(
            &mut s,
            "share of samples changed most",
            &self.changed,
            self.common_functions,
        );
        change_rows(&mut s, "added", &self.added, self.added_functions);
        change_rows(&mut s, "removed", &self.removed, self.removed_functions);
        if let Some(st) = &self.staleness {
            s.push_str(&st.to_text());
        }
        s
    }
}

fn stale_rows(s: &mut String, title: &str, v: &[StaleFunction]) {
    if v.is_empty() {
        return;
    }
    let _ = writeln!(s, "  {title}:");
    for f in v {
        let _ = write!(s, "    {:>9}  {}", pct(f.share), f.name);
        let list = |l: &[String]| {
            let mut t = l.iter().take(8).cloned().collect::<Vec<_>>().join(" ");
            if l.len() > 8 {
                let _ = write!(t, " ... ({} in all)", l.len());
            }
            t
        };
        if !f.missing_locations.is_empty() {
            let _ = write!(s, "; lines gone: {}", list(&f.missing_locations));
        }
        if !f.new_locations.is_empty() {
            let _ = write!(s, "; lines new: {}", list(&f.new_locations));
        }
        s.push('\n');
    }
}

impl StalenessReport {
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "against {}: {} of {} functions still match ({} of the samples; {} of body samples at lines that still exist); {} gone, {} stale",
            self.binary,
            self.fresh_functions + self.unchecked_functions,
            self.functions,
            pct(self.matching_share),
            pct(self.location_share),
            self.gone.len(),
            self.stale.len()
        );
        stale_rows(&mut s, "gone from the binary", &self.gone);
        stale_rows(&mut s, "stale (lines changed)", &self.stale);
        s
    }
}
