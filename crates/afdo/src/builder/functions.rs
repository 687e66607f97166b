//! The binary's functions as DWARF describes them: which address ranges each
//! one owns, and which range starts at its entry. Used to zero-fill sampled
//! functions and to recognise branches that land on a function's entry.

use super::names::canonical_name;
use rustc_hash::FxHashMap;

struct Range {
    start: u64,
    end: u64, // exclusive
    func: usize,
    is_entry: bool,
}

pub struct Functions {
    /// One entry per distinct start address (the first DWARF subprogram wins,
    /// as in llvm-profgen), sorted by start.
    ranges: Vec<Range>,
    /// Each function's ranges, `[start, end)`.
    func_ranges: Vec<Vec<(u64, u64)>>,
    names: Vec<String>,
}

impl Functions {
    /// `items`: (start, end exclusive, linkage name, is the function's entry range).
    pub fn new<'a>(items: impl IntoIterator<Item = (u64, u64, &'a str, bool)>) -> Self {
        let mut by_name: FxHashMap<&'a str, usize> = FxHashMap::default();
        let mut names = Vec::new();
        let mut func_ranges: Vec<Vec<(u64, u64)>> = Vec::new();
        let mut ranges = Vec::new();
        let mut seen_start: FxHashMap<u64, ()> = FxHashMap::default();
        for (start, end, name, is_entry) in items {
            if end <= start {
                continue;
            }
            let func = *by_name.entry(name).or_insert_with(|| {
                names.push(name.to_string());
                func_ranges.push(Vec::new());
                names.len() - 1
            });
            func_ranges[func].push((start, end));
            if seen_start.insert(start, ()).is_none() {
                ranges.push(Range {
                    start,
                    end,
                    func,
                    is_entry,
                });
            }
        }
        ranges.sort_by_key(|r| r.start);
        Self {
            ranges,
            func_ranges,
            names,
        }
    }

    fn find(&self, addr: u64) -> Option<&Range> {
        let i = self.ranges.partition_point(|r| r.start <= addr);
        let r = self.ranges.get(i.checked_sub(1)?)?;
        (addr < r.end).then_some(r)
    }

    /// All ranges of the function whose range contains `addr`.
    pub fn ranges_of_function_at(&self, addr: u64) -> &[(u64, u64)] {
        match self.find(addr) {
            Some(r) => &self.func_ranges[r.func],
            None => &[],
        }
    }

    /// The canonical name of the function whose entry is exactly `addr`.
    pub fn callee_at(&self, addr: u64) -> Option<&str> {
        let i = self.ranges.binary_search_by_key(&addr, |r| r.start).ok()?;
        let r = &self.ranges[i];
        r.is_entry.then(|| canonical_name(&self.names[r.func]))
    }
}

#[cfg(test)]
mod tests {
    use super::Functions;

    #[test]
    fn lookups() {
        let f = Functions::new([
            (0x100, 0x180, "main", true),
            (0x200, 0x240, "work.llvm.42", true),
            (0x300, 0x320, "work.llvm.42", false), // a cold split part
        ]);
        assert_eq!(f.callee_at(0x200), Some("work"));
        assert_eq!(f.callee_at(0x300), None, "not an entry");
        assert_eq!(f.callee_at(0x201), None);
        assert_eq!(
            f.ranges_of_function_at(0x310),
            &[(0x200, 0x240), (0x300, 0x320)]
        );
        assert_eq!(f.ranges_of_function_at(0x190), &[] as &[(u64, u64)]);
    }
}
