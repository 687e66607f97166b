//! The units of a binary's DWARF, parsed up front (headers, abbreviations, the
//! unit DIE), and the types every other module here reads them with.

use gimli::constants as dw;
use rayon::prelude::*;

use crate::binary::Binary;
use crate::error::ElfError;

pub(crate) type R<'a> = gimli::EndianSlice<'a, gimli::RunTimeEndian>;

pub(crate) struct UnitEntry<'a> {
    /// `.debug_info` offset of the unit header.
    pub offset: u64,
    /// Offset one past the unit's last byte.
    pub end: u64,
    pub unit: gimli::Unit<R<'a>>,
    /// A compile/partial unit (type units are never looked up by address).
    pub is_compile: bool,
}

/// The DWARF sections and their units, without what is built from them later
/// (DIE trees, line tables, the address map: see `ctx`).
pub(crate) struct Units<'a> {
    pub dwarf: gimli::Dwarf<R<'a>>,
    pub units: Vec<UnitEntry<'a>>,
}

impl<'a> Units<'a> {
    pub(crate) fn load(bin: &'a Binary) -> Result<Units<'a>, ElfError> {
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
                })
            })
            .collect::<Result<_, _>>()?;

        Ok(Units { dwarf, units })
    }

    /// Index of the unit whose bytes contain `.debug_info` offset `off`.
    pub(crate) fn unit_containing(&self, off: usize) -> Option<usize> {
        let off = off as u64;
        let i = self.units.partition_point(|u| u.offset <= off);
        let i = i.checked_sub(1)?;
        (off < self.units[i].end).then_some(i)
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
