//! ELF symbol tables.
//!
//! `.symtab` is what llvm-profgen walks (`ObjectFile::symbols()`), both to
//! decide which bytes to disassemble and to mark function entries, so we keep
//! it complete and in file order. Names stay in the mapped file (we store
//! their offsets), so a vmlinux with 100k+ symbols costs no string copies.

use object::read::elf::ElfFile64;
use object::{Object, ObjectSymbol, SymbolSection};

#[derive(Clone, Copy, Debug)]
pub struct Symbol {
    /// `st_value` (for ET_EXEC/ET_DYN: the link-time virtual address; for ET_REL:
    /// plus its section's address in kfdo's layout).
    pub addr: u64,
    pub size: u64,
    /// Section index the symbol is defined in; `None` for undefined,
    /// absolute and common symbols (llvm: `section_end()`).
    pub section: Option<u32>,
    /// `st_info & 0xf` (STT_FUNC = 2, ...).
    pub st_type: u8,
    /// STB_GLOBAL or STB_WEAK.
    pub global: bool,
    name_start: usize,
    name_len: u32,
}

impl Symbol {
    /// The raw name bytes; `data` is the whole file (`Binary::data`), the
    /// bytes the table was loaded from.
    pub fn name<'d>(&self, data: &'d [u8]) -> &'d [u8] {
        &data[self.name_start..self.name_start + self.name_len as usize]
    }
}

#[derive(Debug, Default)]
pub struct Symbols {
    /// `.symtab` in file order (the null symbol excluded).
    symtab: Vec<Symbol>,
    /// `.dynsym` in file order, used only as a fallback for lookups by name.
    dynsym: Vec<Symbol>,
    /// Indices into `symtab` sorted by name, for `address`.
    by_name: Vec<u32>,
}

impl Symbols {
    /// Reads `.symtab` and `.dynsym` of `file`, which was parsed from `data`
    /// (the whole file: names are kept as offsets into it). Takes the parsed
    /// file rather than a `Binary` so that `Binary` can cache the result
    /// without this module depending on it.
    /// `bases`: for a relocatable object, each section's address in kfdo's layout,
    /// added to the section-relative `st_value` of the symbols defined in it.
    pub(crate) fn load(
        file: &ElfFile64<'_, object::Endianness>,
        data: &[u8],
        bases: Option<&[u64]>,
    ) -> Symbols {
        let base = data.as_ptr() as usize;
        let convert = |s: object::read::elf::ElfSymbol<
            '_,
            '_,
            object::elf::FileHeader64<object::Endianness>,
        >| {
            let name = s.name_bytes().unwrap_or(b"");
            let name_start = if name.is_empty() {
                0
            } else {
                name.as_ptr() as usize - base
            };
            let section = match s.section() {
                SymbolSection::Section(i) => u32::try_from(i.0).ok(),
                _ => None,
            };
            let raw = s.elf_symbol();
            let base = match (bases, section) {
                (Some(b), Some(i)) => b.get(i as usize).copied().unwrap_or(0),
                _ => 0,
            };
            Symbol {
                addr: s.address().wrapping_add(base),
                size: s.size(),
                section,
                st_type: raw.st_info & 0xf,
                global: s.is_global() || s.is_weak(),
                name_start,
                name_len: name.len() as u32,
            }
        };
        let symtab: Vec<Symbol> = file.symbols().map(convert).collect();
        let dynsym: Vec<Symbol> = file.dynamic_symbols().map(convert).collect();
        let mut by_name: Vec<u32> = (0..symtab.len() as u32).collect();
        by_name.sort_by(|&a, &b| {
            symtab[a as usize]
                .name(data)
                .cmp(symtab[b as usize].name(data))
        });
        Symbols {
            symtab,
            dynsym,
            by_name,
        }
    }

    /// `.symtab` symbols in file order.
    pub fn symtab(&self) -> &[Symbol] {
        &self.symtab
    }

    pub fn dynsym(&self) -> &[Symbol] {
        &self.dynsym
    }

    pub(crate) fn address(&self, data: &[u8], name: &str) -> Option<u64> {
        let name = name.as_bytes();
        let lo = self
            .by_name
            .partition_point(|&i| self.symtab[i as usize].name(data) < name);
        let hits = self.by_name[lo..]
            .iter()
            .map(|&i| &self.symtab[i as usize])
            .take_while(|s| s.name(data) == name)
            .filter(|s| s.section.is_some());
        let mut best: Option<&Symbol> = None;
        for s in hits {
            if best.is_none_or(|b| s.global && !b.global) {
                best = Some(s);
            }
        }
        best.or_else(|| {
            self.dynsym
                .iter()
                .find(|s| s.section.is_some() && s.name(data) == name)
        })
        .map(|s| s.addr)
    }
}
