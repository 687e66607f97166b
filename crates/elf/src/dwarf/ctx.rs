//! The DWARF of a binary ready for address lookups: its units, the address ->
//! unit map, and per unit the inline tree and line table, each built only when
//! an address in that unit is first asked about.

use std::ops::Deref;
use std::sync::OnceLock;

use super::die;
use super::inline::InlineTree;
use super::line::LineTable;
use super::units::Units;
use crate::binary::Binary;
use crate::error::ElfError;

/// What is built lazily for one unit.
#[derive(Default)]
struct UnitCache {
    tree: OnceLock<InlineTree>,
    lines: OnceLock<LineTable>,
}

pub(crate) struct DwarfCtx<'a> {
    parsed: Units<'a>,
    /// One per unit, in the order of `units`.
    caches: Vec<UnitCache>,
    /// llvm DWARFDebugAranges: sorted, non-overlapping (low, high, unit index).
    aranges: Vec<(u64, u64, usize)>,
}

/// The parsed units (`ctx.dwarf`, `ctx.units`, `ctx.resolve(..)`) are read through
/// the context, which only adds the lazily built parts.
impl<'a> Deref for DwarfCtx<'a> {
    type Target = Units<'a>;

    fn deref(&self) -> &Units<'a> {
        &self.parsed
    }
}

impl<'a> DwarfCtx<'a> {
    pub(crate) fn load(bin: &'a Binary) -> Result<DwarfCtx<'a>, ElfError> {
        let parsed = Units::load(bin)?;
        let caches = parsed.units.iter().map(|_| UnitCache::default()).collect();
        let mut ctx = DwarfCtx {
            parsed,
            caches,
            aranges: Vec::new(),
        };
        ctx.aranges = ctx.build_aranges();
        Ok(ctx)
    }

    /// llvm `DWARFDebugAranges::generate` + `construct`: ranges from
    /// `.debug_aranges`, plus the unit DIE's ranges for every compile unit
    /// not described there; overlaps are resolved by the sweep below.
    fn build_aranges(&self) -> Vec<(u64, u64, usize)> {
        // (address, is_start, unit offset)
        let mut endpoints: Vec<(u64, bool, u64)> = Vec::new();
        let mut described: rustc_hash::FxHashSet<u64> = Default::default();
        let push = |lo: u64, hi: u64, cu: u64, endpoints: &mut Vec<(u64, bool, u64)>| {
            if lo < hi {
                endpoints.push((lo, true, cu));
                endpoints.push((hi, false, cu));
            }
        };
        let mut headers = self.dwarf.debug_aranges.headers();
        while let Ok(Some(h)) = headers.next() {
            let cu = h.debug_info_offset().0 as u64;
            described.insert(cu);
            let mut entries = h.entries();
            while let Ok(Some(e)) = entries.next() {
                push(
                    e.address(),
                    e.address().wrapping_add(e.length()),
                    cu,
                    &mut endpoints,
                );
            }
        }
        let mut ranges = Vec::new();
        for u in self.units.iter().filter(|u| u.is_compile) {
            if described.contains(&u.offset) {
                continue;
            }
            let mut cursor = u.unit.entries();
            let Ok(Some((_, root))) = cursor.next_dfs() else {
                continue;
            };
            ranges.clear();
            let ok = die::DieAttrs::read(root)
                .and_then(|a| a.ranges(self, &u.unit, &mut ranges))
                .is_ok();
            if ok {
                for &(lo, hi) in &ranges {
                    push(lo, hi, u.offset, &mut endpoints);
                }
            }
        }
        endpoints.sort_by_key(|e| e.0);

        // Sweep: a multiset of the units live between consecutive endpoints;
        // each gap goes to the live unit with the lowest offset, or extends
        // the previous range if its unit is still live.
        let mut live: std::collections::BTreeMap<u64, usize> = Default::default();
        let mut out: Vec<(u64, u64, u64)> = Vec::new();
        let mut prev = u64::MAX;
        for &(addr, is_start, cu) in &endpoints {
            if prev < addr && !live.is_empty() {
                match out.last_mut() {
                    Some(last) if last.1 == prev && live.contains_key(&last.2) => last.1 = addr,
                    _ => out.push((prev, addr, *live.keys().next().expect("non-empty"))),
                }
            }
            if is_start {
                *live.entry(cu).or_default() += 1;
            } else if let Some(n) = live.get_mut(&cu) {
                *n -= 1;
                if *n == 0 {
                    live.remove(&cu);
                }
            }
            prev = addr;
        }
        out.into_iter()
            .filter_map(|(lo, hi, cu)| {
                // llvm getCompileUnitForOffset: the unit containing the offset,
                // which must be a compile unit.
                let ui = self.unit_containing(cu as usize)?;
                self.units[ui].is_compile.then_some((lo, hi, ui))
            })
            .collect()
    }

    /// llvm `getCompileUnitForCodeAddress`.
    pub(crate) fn unit_for_addr(&self, addr: u64) -> Option<usize> {
        let i = self.aranges.partition_point(|r| r.0 <= addr);
        let r = self.aranges.get(i.checked_sub(1)?)?;
        (addr < r.1).then_some(r.2)
    }

    pub(crate) fn tree(&self, ui: usize) -> &InlineTree {
        self.caches[ui]
            .tree
            .get_or_init(|| InlineTree::build(self, ui).unwrap_or_default())
    }

    pub(crate) fn lines(&self, ui: usize) -> &LineTable {
        self.caches[ui]
            .lines
            .get_or_init(|| LineTable::build(&self.units[ui].unit).unwrap_or_default())
    }
}
