//! Reading the handful of DIE attributes the symbolizer needs, with LLVM's
//! rules (DWARFDie::getAddressRanges, getLowAndHighPC, findRecursively).

use gimli::{constants as dw, AttributeValue};

use super::units::{Units, R};

/// The attributes of one DIE we care about, gathered in one pass over its
/// attribute list.
#[derive(Default)]
pub(crate) struct DieAttrs<'a> {
    pub low_pc: Option<AttributeValue<R<'a>>>,
    pub high_pc: Option<AttributeValue<R<'a>>>,
    pub ranges: Option<AttributeValue<R<'a>>>,
    pub mips_linkage_name: Option<AttributeValue<R<'a>>>,
    pub linkage_name: Option<AttributeValue<R<'a>>>,
    pub name: Option<AttributeValue<R<'a>>>,
    pub decl_line: Option<u64>,
    pub abstract_origin: Option<AttributeValue<R<'a>>>,
    pub specification: Option<AttributeValue<R<'a>>>,
    pub call_line: Option<u64>,
    pub call_column: Option<u64>,
    pub discriminator: Option<u64>,
}

impl<'a> DieAttrs<'a> {
    pub(crate) fn read(
        entry: &gimli::DebuggingInformationEntry<'_, '_, R<'a>>,
    ) -> gimli::Result<Self> {
        let mut a = DieAttrs::default();
        let mut attrs = entry.attrs();
        while let Some(attr) = attrs.next()? {
            // First occurrence wins, as with llvm's abbreviation lookup.
            let v = attr.value();
            match attr.name() {
                dw::DW_AT_low_pc => a.low_pc = a.low_pc.or(Some(v)),
                dw::DW_AT_high_pc => a.high_pc = a.high_pc.or(Some(v)),
                dw::DW_AT_ranges => a.ranges = a.ranges.or(Some(v)),
                dw::DW_AT_MIPS_linkage_name => {
                    a.mips_linkage_name = a.mips_linkage_name.or(Some(v))
                }
                dw::DW_AT_linkage_name => a.linkage_name = a.linkage_name.or(Some(v)),
                dw::DW_AT_name => a.name = a.name.or(Some(v)),
                dw::DW_AT_decl_line => a.decl_line = a.decl_line.or(attr.udata_value()),
                dw::DW_AT_abstract_origin => a.abstract_origin = a.abstract_origin.or(Some(v)),
                dw::DW_AT_specification => a.specification = a.specification.or(Some(v)),
                dw::DW_AT_call_line => a.call_line = a.call_line.or(attr.udata_value()),
                dw::DW_AT_call_column => a.call_column = a.call_column.or(attr.udata_value()),
                dw::DW_AT_GNU_discriminator => {
                    a.discriminator = a.discriminator.or(attr.udata_value())
                }
                _ => {}
            }
        }
        Ok(a)
    }

    /// llvm `DWARFDie::getAddressRanges`: low/high pc if both resolve, else
    /// DW_AT_ranges, else nothing. Appends `(low, high)` pairs to `out`;
    /// empty and inverted ranges are kept (callers filter, as llvm's do).
    pub(crate) fn ranges(
        &self,
        ctx: &Units<'a>,
        unit: &gimli::Unit<R<'a>>,
        out: &mut Vec<(u64, u64)>,
    ) -> gimli::Result<()> {
        if let Some(low) = self.low_pc {
            if let Some(low) = ctx.dwarf.attr_address(unit, low)? {
                let high = match self.high_pc {
                    Some(v @ (AttributeValue::Addr(_) | AttributeValue::DebugAddrIndex(_))) => {
                        ctx.dwarf.attr_address(unit, v)?
                    }
                    Some(v) => v.udata_value().map(|off| low.wrapping_add(off)),
                    None => None,
                };
                if let Some(high) = high {
                    out.push((low, high));
                    return Ok(());
                }
            }
        }
        if let Some(v) = self.ranges {
            if let Some(mut iter) = ctx.dwarf.attr_ranges(unit, v)? {
                while let Some(r) = iter.next()? {
                    out.push((r.begin, r.end));
                }
            }
        }
        Ok(())
    }
}

/// A DIE identified by its unit (index into `Units::units`) and offset.
pub(crate) type DieRef = (usize, gimli::UnitOffset);

/// What `findRecursively` yields for a subroutine: names and decl line,
/// following DW_AT_abstract_origin / DW_AT_specification.
#[derive(Default, Clone, Copy)]
pub(crate) struct Resolved<'a> {
    pub linkage_name: Option<&'a [u8]>,
    pub name: Option<&'a [u8]>,
    pub decl_line: Option<u64>,
}

impl<'a> Resolved<'a> {
    /// llvm `DWARFDie::getName(DINameKind::LinkageName)`.
    pub(crate) fn best_name(&self) -> Option<&'a [u8]> {
        self.linkage_name.or(self.name)
    }
}

impl<'a> Units<'a> {
    /// Resolves a reference-class attribute to a DIE, possibly in another unit.
    pub(crate) fn deref(&self, from_unit: usize, v: &AttributeValue<R<'a>>) -> Option<DieRef> {
        match *v {
            AttributeValue::UnitRef(off) => Some((from_unit, off)),
            AttributeValue::DebugInfoRef(off) => {
                let ui = self.unit_containing(off.0)?;
                let off = off.to_unit_offset(&self.units[ui].unit.header)?;
                Some((ui, off))
            }
            _ => None,
        }
    }

    fn string(&self, ui: usize, v: &Option<AttributeValue<R<'a>>>) -> Option<&'a [u8]> {
        let v = (*v)?;
        self.dwarf
            .attr_string(&self.units[ui].unit, v)
            .ok()
            .map(|s| s.slice())
    }

    /// llvm `findRecursively`, done once for the three attribute groups we
    /// need: a LIFO worklist seeded with the DIE, each visited DIE pushing its
    /// abstract origin and then its specification (if not yet seen). Each
    /// group takes the first DIE in that visiting order that has it, which
    /// is what three separate llvm walks would return.
    pub(crate) fn resolve(&self, start: DieRef, start_attrs: &DieAttrs<'a>) -> Resolved<'a> {
        let mut out = Resolved::default();
        let mut work: Vec<DieRef> = Vec::with_capacity(4);
        let mut seen: Vec<DieRef> = Vec::with_capacity(4);
        seen.push(start);
        let mut first = true;
        let mut cur = start;
        loop {
            let owned;
            let attrs = if first {
                start_attrs
            } else {
                let unit = &self.units[cur.0].unit;
                let Some(a) = unit.entry(cur.1).ok().and_then(|e| DieAttrs::read(&e).ok()) else {
                    match work.pop() {
                        Some(n) => {
                            cur = n;
                            continue;
                        }
                        None => break,
                    }
                };
                owned = a;
                &owned
            };
            first = false;
            if out.linkage_name.is_none() {
                // llvm asks for {DW_AT_MIPS_linkage_name, DW_AT_linkage_name}
                // in that order within one DIE.
                out.linkage_name = self
                    .string(cur.0, &attrs.mips_linkage_name)
                    .or_else(|| self.string(cur.0, &attrs.linkage_name));
            }
            if out.name.is_none() {
                out.name = self.string(cur.0, &attrs.name);
            }
            if out.decl_line.is_none() {
                out.decl_line = attrs.decl_line;
            }
            if out.linkage_name.is_some() && out.name.is_some() && out.decl_line.is_some() {
                break;
            }
            for r in [&attrs.abstract_origin, &attrs.specification] {
                if let Some(d) = r.as_ref().and_then(|v| self.deref(cur.0, v)) {
                    if !seen.contains(&d) {
                        seen.push(d);
                        work.push(d);
                    }
                }
            }
            match work.pop() {
                Some(n) => cur = n,
                None => break,
            }
        }
        out
    }
}
