//! DWARF access: units, address -> unit lookup, and the per-unit lazily
//! built inline tree and line table. Units are parsed up front (headers,
//! abbreviations, the unit DIE), the DIE trees and line programs only when an
//! address in that unit is first asked about, like gimli/addr2line.

pub(crate) mod die;
pub(crate) mod inline;
pub(crate) mod line;
pub(crate) mod producer;

use std::sync::OnceLock;

use gimli::constants as dw;
use rayon::prelude::*;

use crate::binary::Binary;
use crate::error::ElfError;
use inline::InlineTree;
use line::LineTable;

pub(crate) type R<'a> = gimli::EndianSlice<'a, gimli::RunTimeEndian>;

pub(crate) struct UnitEntry<'a> {
    /// `.debug_info` offset of the unit header.
    pub offset: u64,
    /// Offset one past the unit's last byte.
    pub end: u64,
    pub unit: gimli::Unit<R<'a>>,
    /// A compile/partial unit (type units are never looked up by address).
    pub is_compile: bool,
    tree: OnceLock<InlineTree>,
    lines: OnceLock<LineTable>,
}

pub(crate) struct DwarfCtx<'a> {
    pub dwarf: gimli::Dwarf<R<'a>>,
    pub units: Vec<UnitEntry<'a>>,
    /// llvm DWARFDebugAranges: sorted, non-overlapping (low, high, unit index).
    aranges: Vec<(u64, u64, usize)>,
}

impl<'a> DwarfCtx<'a> {
    pub(crate) fn load(bin: &'a Binary) -> Result<DwarfCtx<'a>, ElfError> {
        let path = bin.path();
        let sections = bin.debug_sections()?;
        let endian = if bin.data().get(5) == Some(&object::elf::ELFDATA2MSB) {
            gimli::RunTimeEndian::Big
        } else {
            gimli::RunTimeEndian::Little
        };
        let data = bin.data();
        let dwarf = gimli::Dwarf::load(|id| -> Result<R<'a>, gimli::Error> {
            Ok(gimli::EndianSlice::new(sections.get(data, id), endian))
        })
        .expect("loader is infallible");
        let bad = |section: &'static str, offset: u64, e: gimli::Error| ElfError::Dwarf {
            path: path.to_owned(),
            section,
            offset,
            what: e.to_string(),
        };

        let mut headers = Vec::new();
        let mut iter = dwarf.units();
        loop {
            match iter.next() {
                Ok(Some(h)) => headers.push(h),
                Ok(None) => break,
                Err(e) => {
                    let at = headers.last().map_or(0, |h: &gimli::UnitHeader<R<'a>>| {
                        h.offset().as_debug_info_offset().map_or(0, |o| o.0 as u64)
                            + h.length_including_self() as u64
                    });
                    return Err(bad(".debug_info", at, e));
                }
            }
        }
        let units: Vec<UnitEntry<'a>> = headers
            .into_par_iter()
            .map(|h| {
                let offset = h.offset().as_debug_info_offset().map_or(0, |o| o.0 as u64);
                let end = offset + h.length_including_self() as u64;
                let is_compile = matches!(
                    h.type_(),
                    gimli::UnitType::Compilation | gimli::UnitType::Partial
                );
                match h.type_() {
                    gimli::UnitType::Skeleton(_) | gimli::UnitType::SplitCompilation(_) => {
                        return Err(ElfError::SplitDwarf {
                            path: path.to_owned(),
                            offset,
                            dwo: String::new(),
                        })
                    }
                    _ => {}
                }
                let unit = dwarf.unit(h).map_err(|e| bad(".debug_info", offset, e))?;
                if unit.dwo_id.is_some() {
                    // A DWARF 4 GNU skeleton: the real DIEs live in a .dwo file.
                    let dwo = unit_dwo_name(&dwarf, &unit).unwrap_or_default();
                    return Err(ElfError::SplitDwarf {
                        path: path.to_owned(),
                        offset,
                        dwo,
                    });
                }
                Ok(UnitEntry {
                    offset,
                    end,
                    unit,
                    is_compile,
                    tree: OnceLock::new(),
                    lines: OnceLock::new(),
                })
            })
            .collect::<Result<_, _>>()?;

        let mut ctx = DwarfCtx {
            dwarf,
            units,
            aranges: Vec::new(),
        };
        ctx.aranges = ctx.build_aranges();
        Ok(ctx)
    }

    /// Index of the unit whose bytes contain `.debug_info` offset `off`.
    pub(crate) fn unit_containing(&self, off: usize) -> Option<usize> {
        let off = off as u64;
        let i = self.units.partition_point(|u| u.offset <= off);
        let i = i.checked_sub(1)?;
        (off < self.units[i].end).then_some(i)
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
        self.units[ui]
            .tree
            .get_or_init(|| InlineTree::build(self, ui).unwrap_or_default())
    }

    pub(crate) fn lines(&self, ui: usize) -> &LineTable {
        self.units[ui]
            .lines
            .get_or_init(|| LineTable::build(&self.units[ui].unit).unwrap_or_default())
    }
}

fn unit_dwo_name<'a>(dwarf: &gimli::Dwarf<R<'a>>, unit: &gimli::Unit<R<'a>>) -> Option<String> {
    let mut cursor = unit.entries();
    let (_, root) = cursor.next_dfs().ok()??;
    let v = root
        .attr_value(dw::DW_AT_dwo_name)
        .ok()
        .flatten()
        .or_else(|| root.attr_value(dw::DW_AT_GNU_dwo_name).ok().flatten())?;
    let s = dwarf.attr_string(unit, v).ok()?;
    Some(String::from_utf8_lossy(s.slice()).into_owned())
}
