//! Relocatable objects (ET_REL), such as Linux kernel modules (`.ko`): their sections
//! all sit at address 0 and their debug info is only right after relocation, so kfdo
//! gives them an address layout and applies the relocations the DWARF needs.
//!
//! The layout is the one the kernel's module loader uses for a module's code: the
//! allocated executable sections first, in section-table order, each aligned, then the
//! other allocated sections (`.init*` sections are placed too, though the loader puts
//! them elsewhere and frees them). It starts at [`LAYOUT_BASE`], not 0: the aggregation
//! gives the addresses 0 and 1 to branch ends outside the profiled binary, so no code
//! may sit there. An address in a module's `.text` minus `.text`'s layout address is
//! the offset from the runtime address `/sys/module/NAME/sections/.text` shows.
//! Non-allocated sections (the debug sections themselves) stay at 0, so that a
//! relocation against `.debug_str` yields an offset.

use object::read::elf::{ElfFile64, FileHeader, SectionHeader};
use object::{elf, Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget};

/// Where the layout starts: one page in.
pub const LAYOUT_BASE: u64 = 0x1000;

/// The width in bytes of an absolute relocation of `machine`, 0 for a "none"
/// relocation, `None` for any other type.
fn absolute_width(machine: u16, r_type: u32) -> Option<usize> {
    match (machine, r_type) {
        (elf::EM_X86_64, elf::R_X86_64_NONE) => Some(0),
        (elf::EM_X86_64, elf::R_X86_64_64) => Some(8),
        (elf::EM_X86_64, elf::R_X86_64_32 | elf::R_X86_64_32S) => Some(4),
        // R_AARCH64_NONE is 0 in the current ABI, 256 in the old one.
        (elf::EM_AARCH64, elf::R_AARCH64_NONE | 256) => Some(0),
        (elf::EM_AARCH64, elf::R_AARCH64_ABS64) => Some(8),
        (elf::EM_AARCH64, elf::R_AARCH64_ABS32) => Some(4),
        _ => None,
    }
}

/// Layout address of each section, by section index (0 for non-allocated ones).
pub(crate) fn section_bases(file: &ElfFile64<'_, object::Endianness>) -> Vec<u64> {
    let endian = file.endian();
    let mut bases = vec![0u64; file.sections().count() + 1];
    let mut next = LAYOUT_BASE;
    for exec_pass in [true, false] {
        for (i, sh) in file
            .sections()
            .map(|s| (s.index().0, s.elf_section_header()))
        {
            let flags = sh.sh_flags(endian);
            if flags & u64::from(elf::SHF_ALLOC) == 0
                || (flags & u64::from(elf::SHF_EXECINSTR) != 0) != exec_pass
            {
                continue;
            }
            let align = sh.sh_addralign(endian).max(1);
            next = next.div_ceil(align) * align;
            bases[i] = next;
            next += sh.sh_size(endian);
        }
    }
    bases
}

/// Applies the relocations of the section `sec` (its contents `data`, uncompressed) to
/// `data`, with symbols placed by `bases`. Only the absolute 32- and 64-bit relocations
/// that DWARF uses (x86-64: R_X86_64_64 / _32 / _32S; aarch64: R_AARCH64_ABS64 / ABS32)
/// are expected, chosen by the file's `e_machine`; anything else is an error naming the type.
pub(crate) fn relocate(
    file: &ElfFile64<'_, object::Endianness>,
    sec: &object::read::elf::ElfSection64<'_, '_, object::Endianness>,
    bases: &[u64],
    data: &mut [u8],
) -> Result<(), String> {
    let endian = file.endian();
    let machine = file.elf_header().e_machine(endian);
    for (offset, rel) in sec.relocations() {
        let RelocationFlags::Elf { r_type } = rel.flags() else {
            continue;
        };
        let Some(width) = absolute_width(machine, r_type) else {
            return Err(format!(
                "relocation type {r_type} at offset {offset:#x} is not supported in a debug \
                 section (only R_X86_64_64 / _32 / _32S on x86-64, R_AARCH64_ABS64 / ABS32 on \
                 aarch64)"
            ));
        };
        if width == 0 {
            continue;
        }
        let symbol_value = match rel.target() {
            RelocationTarget::Symbol(idx) => {
                let sym = file
                    .symbol_by_index(idx)
                    .map_err(|e| format!("relocation at offset {offset:#x}: {e}"))?;
                let base = sym
                    .section_index()
                    .map_or(0, |s| bases.get(s.0).copied().unwrap_or(0));
                base.wrapping_add(sym.elf_symbol().st_value.get(endian))
            }
            RelocationTarget::Section(s) => bases.get(s.0).copied().unwrap_or(0),
            _ => 0,
        };
        let value = symbol_value.wrapping_add(rel.addend() as u64);
        let at = usize::try_from(offset).unwrap_or(usize::MAX);
        let Some(slot) = data.get_mut(at..at.saturating_add(width)) else {
            return Err(format!(
                "relocation at offset {offset:#x} lies outside the section ({} bytes)",
                data.len()
            ));
        };
        if width == 8 {
            slot.copy_from_slice(&value.to_le_bytes());
        } else {
            slot.copy_from_slice(&(value as u32).to_le_bytes());
        }
    }
    Ok(())
}
