//! Per-unit line table with llvm's lookup rules
//! (DWARFDebugLine::LineTable::lookupAddress / findRowInSeq).
//!
//! Sequences are kept only when non-empty with low < high and sorted by
//! their end address; an address is looked up in the first sequence whose
//! end is above it (and only that one), then the last row at or below it
//! wins, so of several rows at one address the last is used.

use super::units::R;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Row {
    pub addr: u64,
    pub line: u32,
    pub column: u32,
    pub discriminator: u32,
    /// llvm drops the line when the row's file index is not in the header.
    pub file_ok: bool,
}

#[derive(Clone, Copy, Debug)]
struct Sequence {
    low: u64,
    high: u64,
    /// Rows `first..last` of `LineTable::rows`, the end_sequence row included.
    first: u32,
    last: u32,
}

#[derive(Default)]
pub(crate) struct LineTable {
    rows: Vec<Row>,
    seqs: Vec<Sequence>,
}

impl LineTable {
    pub(crate) fn build(unit: &gimli::Unit<R<'_>>) -> gimli::Result<LineTable> {
        let mut t = LineTable::default();
        let Some(program) = unit.line_program.clone() else {
            return Ok(t);
        };
        let mut rows = program.rows();
        let mut seq_start: Option<(u64, u32)> = None;
        // A parse error keeps the rows read so far, as llvm does.
        while let Ok(Some((header, row))) = rows.next_row() {
            let idx = t.rows.len() as u32;
            if seq_start.is_none() {
                seq_start = Some((row.address(), idx));
            }
            t.rows.push(Row {
                addr: row.address(),
                line: row.line().map_or(0, |l| l.get() as u32),
                column: match row.column() {
                    gimli::ColumnType::LeftEdge => 0,
                    gimli::ColumnType::Column(c) => c.get() as u32,
                },
                discriminator: row.discriminator() as u32,
                file_ok: header.file(row.file_index()).is_some(),
            });
            if row.end_sequence() {
                let (low, first) = seq_start.take().expect("set above");
                let high = row.address();
                let last = idx + 1;
                if low < high && first < last {
                    t.seqs.push(Sequence {
                        low,
                        high,
                        first,
                        last,
                    });
                }
            }
        }
        t.seqs.sort_by_key(|s| s.high);
        Ok(t)
    }

    /// The row covering `addr`, or `None` (llvm's UnknownRowIndex).
    pub(crate) fn lookup(&self, addr: u64) -> Option<&Row> {
        let i = self.seqs.partition_point(|s| s.high <= addr);
        let s = self.seqs.get(i)?;
        if addr < s.low || addr >= s.high {
            return None;
        }
        // upper_bound over rows[first+1 .. last-1), then step back one.
        let lo = s.first as usize + 1;
        let hi = s.last as usize - 1;
        let rows = &self.rows[lo.min(hi)..hi];
        let pos = lo.min(hi) + rows.partition_point(|r| r.addr <= addr);
        self.rows.get(pos - 1)
    }
}
