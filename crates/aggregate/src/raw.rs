//! The raw profile and its text form.
//!
//! Addresses are the binary's link-time virtual addresses ("canonical"
//! addresses: what the address would be had the binary loaded at its preferred
//! base). On disk they are written relative to the binary's preferred base,
//! exactly as `llvm-profgen --skip-symbolization` writes its unsymbolized
//! profile, so either tool can read the other's file:
//!
//! ```text
//! 2              <- number of ranges
//! 150-152:3      <- first-last instruction of a fall-through range : count
//! 1b0-258:3
//! 3              <- number of branches
//! 152->296:3     <- source->target : count
//! ```
//! Merging is exact: counts add, keyed by (start, end) and (source, target).

use crate::error::AggregateError;
use rustc_hash::FxHashMap;
use std::io::{BufRead, Write};
use std::path::Path;

/// Where a branch came from or went to when that was outside the binary
/// (llvm-profgen's `ExternalAddr`).
pub const EXTERNAL_ADDR: u64 = 1;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawProfile {
    /// Inclusive `[first, last]` instruction addresses of a fall-through run.
    pub ranges: FxHashMap<(u64, u64), u64>,
    /// Taken branches `(source, target)`; source may be [`EXTERNAL_ADDR`].
    pub branches: FxHashMap<(u64, u64), u64>,
}

impl RawProfile {
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty() && self.branches.is_empty()
    }

    #[inline]
    pub fn add_range(&mut self, first: u64, last: u64, n: u64) {
        let c = self.ranges.entry((first, last)).or_insert(0);
        *c = c.saturating_add(n);
    }

    #[inline]
    pub fn add_branch(&mut self, from: u64, to: u64, n: u64) {
        let c = self.branches.entry((from, to)).or_insert(0);
        *c = c.saturating_add(n);
    }

    /// Add `other`'s counts into `self` (the larger map is kept as the base).
    pub fn merge(&mut self, mut other: RawProfile) {
        if other.ranges.len() > self.ranges.len() {
            std::mem::swap(&mut self.ranges, &mut other.ranges);
        }
        if other.branches.len() > self.branches.len() {
            std::mem::swap(&mut self.branches, &mut other.branches);
        }
        for ((a, b), n) in other.ranges {
            self.add_range(a, b, n);
        }
        for ((a, b), n) in other.branches {
            self.add_branch(a, b, n);
        }
    }

    /// Sum of all range counts (the number of fall-through runs seen).
    pub fn range_total(&self) -> u64 {
        self.ranges.values().fold(0u64, |a, &b| a.saturating_add(b))
    }

    pub fn branch_total(&self) -> u64 {
        self.branches
            .values()
            .fold(0u64, |a, &b| a.saturating_add(b))
    }

    /// Write the unsymbolized text form, addresses relative to `base`
    /// (the binary's preferred base), entries sorted as llvm-profgen sorts them.
    pub fn write_text(&self, w: &mut dyn Write, base: u64) -> std::io::Result<()> {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, w);
        write_section(&mut out, &self.ranges, base, "-")?;
        write_section(&mut out, &self.branches, base, "->")?;
        out.flush()
    }

    /// Read the unsymbolized text form written by [`RawProfile::write_text`] or
    /// by `llvm-profgen --skip-symbolization`; addresses are relative to `base`.
    pub fn read_text(path: &Path, base: u64) -> Result<RawProfile, AggregateError> {
        let file = std::fs::File::open(path).map_err(|source| AggregateError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
        let mut p = RawProfile::default();
        let mut lines = LineReader {
            r: &mut reader,
            path,
            line_no: 0,
            buf: String::new(),
        };
        lines.read_section(base, "-", &mut p.ranges)?;
        lines.read_section(base, "->", &mut p.branches)?;
        if let Some(extra) = lines.next_line()? {
            let what = if extra.starts_with('[') {
                "context-sensitive (CS) raw profiles are not supported".to_string()
            } else {
                format!("unexpected trailing line `{extra}`")
            };
            return Err(lines.syntax(what));
        }
        Ok(p)
    }
}

fn write_section(
    out: &mut impl Write,
    map: &FxHashMap<(u64, u64), u64>,
    base: u64,
    sep: &str,
) -> std::io::Result<()> {
    let mut items: Vec<_> = map.iter().map(|(&k, &v)| (k, v)).collect();
    items.sort_unstable_by_key(|&(k, _)| k);
    writeln!(out, "{}", items.len())?;
    for ((a, b), n) in items {
        writeln!(
            out,
            "{:x}{sep}{:x}:{n}",
            a.wrapping_sub(base),
            b.wrapping_sub(base)
        )?;
    }
    Ok(())
}

struct LineReader<'a, R: BufRead> {
    r: &'a mut R,
    path: &'a Path,
    line_no: usize,
    buf: String,
}

impl<R: BufRead> LineReader<'_, R> {
    fn syntax(&self, what: String) -> AggregateError {
        AggregateError::RawSyntax {
            path: self.path.to_path_buf(),
            line: self.line_no,
            what,
        }
    }

    /// The next non-empty line, trimmed; `None` at end of file.
    fn next_line(&mut self) -> Result<Option<String>, AggregateError> {
        loop {
            self.buf.clear();
            let n = self
                .r
                .read_line(&mut self.buf)
                .map_err(|source| AggregateError::Io {
                    path: self.path.to_path_buf(),
                    source,
                })?;
            if n == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            let t = self.buf.trim();
            if !t.is_empty() {
                return Ok(Some(t.to_string()));
            }
        }
    }

    fn read_section(
        &mut self,
        base: u64,
        sep: &str,
        map: &mut FxHashMap<(u64, u64), u64>,
    ) -> Result<(), AggregateError> {
        let kind = if sep == "-" { "range" } else { "branch" };
        let Some(line) = self.next_line()? else {
            return Err(self.syntax(format!(
                "file ends where the number of {kind} lines was expected"
            )));
        };
        let n: u64 = line.parse().map_err(|_| {
            self.syntax(format!(
                "expected the number of {kind} lines, found `{line}`"
            ))
        })?;
        for _ in 0..n {
            let Some(line) = self.next_line()? else {
                return Err(self.syntax(format!("file ends before all {n} {kind} lines were read")));
            };
            let parsed = (|| {
                let (pair, count) = line.rsplit_once(':')?;
                let (a, b) = pair.split_once(sep)?;
                // "a-b" must not match "a->b" as a range: '>' makes the hex parse fail.
                let a = u64::from_str_radix(a, 16).ok()?;
                let b = u64::from_str_radix(b, 16).ok()?;
                Some((a, b, count.parse::<u64>().ok()?))
            })();
            let Some((a, b, c)) = parsed else {
                let shape = if sep == "-" {
                    "start-end:count"
                } else {
                    "from->to:count"
                };
                return Err(
                    self.syntax(format!("expected a {kind} line `{shape}`, found `{line}`"))
                );
            };
            let e = map
                .entry((a.wrapping_add(base), b.wrapping_add(base)))
                .or_insert(0);
            *e = e.saturating_add(c);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RawProfile {
        let mut p = RawProfile::default();
        p.add_range(0x1150, 0x1152, 3);
        p.add_range(0x11b0, 0x1258, 3);
        p.add_branch(EXTERNAL_ADDR, 0x1150, 3);
        p.add_branch(0x1258, 0x11b0, 6);
        p
    }

    #[test]
    fn text_round_trip_and_llvm_profgen_layout() {
        let p = sample();
        let mut out = Vec::new();
        p.write_text(&mut out, 0x1000).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "2\n150-152:3\n1b0-258:3\n2\nfffffffffffff001->150:3\n258->1b0:6\n"
        );
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("raw.txt");
        std::fs::write(&f, &text).unwrap();
        assert_eq!(RawProfile::read_text(&f, 0x1000).unwrap(), p);
    }

    #[test]
    fn merge_adds_counts_exactly() {
        let mut a = sample();
        a.merge(sample());
        assert_eq!(a.ranges[&(0x11b0, 0x1258)], 6);
        assert_eq!(a.branches[&(0x1258, 0x11b0)], 12);
        assert_eq!(a.ranges.len(), 2);
    }

    #[test]
    fn bad_lines_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bad.txt");
        std::fs::write(&f, "1\n150-152:3\n1\n258-1b0:6\n").unwrap();
        let e = RawProfile::read_text(&f, 0).unwrap_err().to_string();
        assert!(
            e.contains("bad.txt:4") && e.contains("from->to:count"),
            "{e}"
        );
        std::fs::write(&f, "2\n150-152:3\n").unwrap();
        let e = RawProfile::read_text(&f, 0).unwrap_err().to_string();
        assert!(e.contains("before all 2 range lines"), "{e}");
    }
}
