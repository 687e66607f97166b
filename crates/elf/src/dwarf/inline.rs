//! Per-unit inline tree and address -> innermost subroutine map.
//!
//! This is llvm's `DWARFUnit::updateAddressDieMap` + `getInlinedChainForAddress`:
//! walk the unit's DIEs in pre-order; every DW_TAG_subprogram or
//! DW_TAG_inlined_subroutine range is inserted into an ordered map keyed by
//! its low address, splitting the entry it lands inside, so later (deeper or
//! later-sibling) DIEs win. The chain for an address is that DIE and its
//! subroutine ancestors up to and including the first DW_TAG_subprogram.
//!
//! We keep nodes only for subroutines that own a range and their subroutine
//! ancestors, so C++ member declarations cost nothing.

use std::collections::BTreeMap;
use std::sync::Arc;

use gimli::constants as dw;
use rustc_hash::FxHashMap;

use super::die::DieAttrs;
use super::units::Units;

pub(crate) const NO_PARENT: u32 = u32::MAX;

/// A subroutine DIE that can appear in an inline chain.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// `getSubroutineName(LinkageName)`; `None` is llvm's "<invalid>".
    pub name: Option<Arc<str>>,
    /// `getDeclLine()` (0 when absent).
    pub decl_line: u32,
    /// DW_AT_call_line / call_column / GNU_discriminator of this DIE: the
    /// location in its *caller* (meaningful for inlined subroutines).
    pub call_line: u32,
    pub call_column: u32,
    pub call_discriminator: u32,
    /// Nearest enclosing subroutine node, or NO_PARENT.
    pub parent: u32,
    pub is_subprogram: bool,
}

/// A DW_TAG_subprogram with address ranges (input to `function_ranges`).
pub(crate) struct SubprogramRanges {
    pub node: u32,
    pub ranges: Vec<(u64, u64)>,
}

#[derive(Default)]
pub(crate) struct InlineTree {
    pub nodes: Vec<Node>,
    /// Flattened llvm AddrDieMap: (low, high, node) sorted by low,
    /// non-overlapping by construction.
    map: Vec<(u64, u64, u32)>,
    pub subprograms: Vec<SubprogramRanges>,
}

struct Pending {
    depth: isize,
    offset: gimli::UnitOffset,
    node: Option<u32>,
}

impl InlineTree {
    pub(crate) fn build(ctx: &Units<'_>, ui: usize) -> gimli::Result<InlineTree> {
        let unit = &ctx.units[ui].unit;
        let mut tree = InlineTree::default();
        let mut addr_map: BTreeMap<u64, (u64, u32)> = BTreeMap::new();
        let mut interned: FxHashMap<&[u8], Arc<str>> = FxHashMap::default();
        let mut stack: Vec<Pending> = Vec::new();
        let mut ranges: Vec<(u64, u64)> = Vec::new();

        let mut cursor = unit.entries();
        let mut depth: isize = 0;
        // A malformed DIE ends the walk but keeps what was read before it.
        while let Ok(Some((delta, entry))) = cursor.next_dfs() {
            depth += delta;
            while stack.last().is_some_and(|p| p.depth >= depth) {
                stack.pop();
            }
            let tag = entry.tag();
            if tag != dw::DW_TAG_subprogram && tag != dw::DW_TAG_inlined_subroutine {
                continue;
            }
            let offset = entry.offset();
            stack.push(Pending {
                depth,
                offset,
                node: None,
            });
            // Errors in one DIE's attributes or ranges skip that DIE, as
            // llvm consumes getAddressRanges errors.
            let Ok(attrs) = DieAttrs::read(entry) else {
                continue;
            };
            ranges.clear();
            if attrs.ranges(ctx, unit, &mut ranges).is_err() {
                ranges.clear();
            }
            if ranges.iter().all(|&(l, h)| l == h) {
                continue;
            }
            // Materialise nodes for this DIE and any ancestor subroutines
            // that do not have one yet, outermost first.
            let mut parent = NO_PARENT;
            for i in 0..stack.len() {
                if let Some(n) = stack[i].node {
                    parent = n;
                    continue;
                }
                let off = stack[i].offset;
                let is_self = i + 1 == stack.len();
                let owned;
                let a = if is_self {
                    &attrs
                } else {
                    let Some(a) = unit.entry(off).ok().and_then(|e| DieAttrs::read(&e).ok()) else {
                        continue;
                    };
                    owned = a;
                    &owned
                };
                let is_subprogram = if is_self {
                    tag == dw::DW_TAG_subprogram
                } else {
                    unit.entry(off)
                        .map(|e| e.tag() == dw::DW_TAG_subprogram)
                        .unwrap_or(false)
                };
                let r = ctx.resolve((ui, off), a);
                let name = r.best_name().map(|n| {
                    interned
                        .entry(n)
                        .or_insert_with(|| Arc::from(String::from_utf8_lossy(n).as_ref()))
                        .clone()
                });
                let idx = tree.nodes.len() as u32;
                tree.nodes.push(Node {
                    name,
                    decl_line: r.decl_line.unwrap_or(0) as u32,
                    call_line: a.call_line.unwrap_or(0) as u32,
                    call_column: a.call_column.unwrap_or(0) as u32,
                    call_discriminator: a.discriminator.unwrap_or(0) as u32,
                    parent,
                    is_subprogram,
                });
                stack[i].node = Some(idx);
                parent = idx;
            }
            let node = parent;
            for &(low, high) in &ranges {
                if low == high {
                    continue;
                }
                insert_range(&mut addr_map, low, high, node);
            }
            if tag == dw::DW_TAG_subprogram {
                tree.subprograms.push(SubprogramRanges {
                    node,
                    ranges: ranges.clone(),
                });
            }
        }
        tree.map = addr_map
            .into_iter()
            .map(|(low, (high, n))| (low, high, n))
            .collect();
        Ok(tree)
    }

    /// llvm `getSubroutineForAddress`: the innermost subroutine node at `addr`.
    pub(crate) fn lookup(&self, addr: u64) -> Option<u32> {
        let i = self.map.partition_point(|&(low, _, _)| low <= addr);
        let &(_, high, node) = self.map.get(i.checked_sub(1)?)?;
        (addr < high).then_some(node)
    }
}

/// One step of llvm's `updateAddressDieMap`, verbatim in behaviour: if the
/// new range starts inside the entry at or before it, that entry is cut to
/// end where the new one starts and, when the new range ends earlier, its
/// remainder is re-inserted after the new range.
fn insert_range(map: &mut BTreeMap<u64, (u64, u32)>, low: u64, high: u64, node: u32) {
    if let Some((&bk, &(bhigh, bnode))) = map.range(..=low).next_back() {
        if low < bhigh {
            if high < bhigh {
                map.insert(high, (bhigh, bnode));
            }
            if low > bk {
                map.get_mut(&bk).expect("key just found").0 = low;
            }
        }
    }
    map.insert(low, (high, node));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_ranges_split_the_parent() {
        let mut m = BTreeMap::new();
        insert_range(&mut m, 0x100, 0x200, 0);
        insert_range(&mut m, 0x120, 0x140, 1);
        insert_range(&mut m, 0x150, 0x160, 2);
        let flat: Vec<_> = m.into_iter().map(|(l, (h, n))| (l, h, n)).collect();
        assert_eq!(
            flat,
            vec![
                (0x100, 0x120, 0),
                (0x120, 0x140, 1),
                (0x140, 0x150, 0),
                (0x150, 0x160, 2),
                (0x160, 0x200, 0)
            ]
        );
        let t = InlineTree {
            map: flat,
            ..Default::default()
        };
        assert_eq!(t.lookup(0xff), None);
        assert_eq!(t.lookup(0x100), Some(0));
        assert_eq!(t.lookup(0x13f), Some(1));
        assert_eq!(t.lookup(0x140), Some(0));
        assert_eq!(t.lookup(0x1ff), Some(0));
        assert_eq!(t.lookup(0x200), None);
    }
}
