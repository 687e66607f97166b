//! The functions BOLT sees in a binary (its `BinaryFunction`s), with the names its fdata
//! gives them: every `STT_FUNC` symbol of an executable section, a local one renamed
//! `NAME/N` (the N-th local symbol of that name in address order, as BOLT's name
//! resolver numbers them), one `SYMBOL@PLT` function per PLT entry, and
//! `__BOLT_PSEUDO_.plt` for the lazy-binding PLT header.

use iced_x86::{Decoder, DecoderOptions, Mnemonic, OpKind, Register};
use kfdo_elf::Binary;
use object::read::elf::{ElfFile64, SectionHeader};
use object::{
    elf, Object, ObjectSection, ObjectSymbol, ObjectSymbolTable, RelocationTarget, SymbolKind,
};
use rustc_hash::FxHashMap;

/// One function: `[addr, addr + size)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub addr: u64,
    pub size: u64,
    /// The name fdata records use.
    pub name: String,
    /// A PLT entry (no body of its own to lay out).
    pub plt: bool,
}

/// The functions of one binary, by address.
#[derive(Debug, Default)]
pub struct FunctionTable {
    funcs: Vec<Function>,
}

impl FunctionTable {
    pub fn new(bin: &Binary) -> Result<FunctionTable, String> {
        let file = ElfFile64::<object::Endianness>::parse(bin.data()).map_err(|e| e.to_string())?;
        let mut funcs = symbol_functions(&file);
        funcs.extend(plt_functions(&file));
        funcs.sort_by_key(|f| f.addr);
        // Two symbols at one address are one function (aliases): the first name stays.
        funcs.dedup_by_key(|f| f.addr);
        Ok(FunctionTable { funcs })
    }

    /// The function whose `[addr, addr + size)` holds `addr`.
    pub fn containing(&self, addr: u64) -> Option<&Function> {
        let i = self
            .funcs
            .partition_point(|f| f.addr <= addr)
            .checked_sub(1)?;
        let f = &self.funcs[i];
        (addr < f.addr + f.size).then_some(f)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Function> {
        self.funcs.iter()
    }
}

/// Symbols in BOLT's order: by address, ties in symbol-table order.
fn sorted_symbols<'d, 'f>(
    file: &'f ElfFile64<'d, object::Endianness>,
) -> Vec<object::read::elf::ElfSymbol64<'d, 'f, object::Endianness>> {
    let mut syms: Vec<_> = file
        .symbols()
        .filter(|s| {
            s.section_index().is_some()
                && !matches!(s.kind(), SymbolKind::Section | SymbolKind::File)
                && s.name_bytes().is_ok_and(|n| !n.is_empty())
        })
        .collect();
    syms.sort_by_key(|s| s.address());
    syms
}

fn symbol_functions(file: &ElfFile64<'_, object::Endianness>) -> Vec<Function> {
    let endian = file.endian();
    let syms = sorted_symbols(file);
    let mut local_count: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
    let mut out = Vec::new();
    // Where each executable section ends, for the size of a function symbol without one.
    let section_end = |idx: object::SectionIndex| {
        file.section_by_index(idx)
            .map_or(0, |s| s.address() + s.size())
    };
    let is_exec = |idx: object::SectionIndex| {
        file.section_by_index(idx).is_ok_and(|s| {
            s.elf_section_header().sh_flags(endian) & u64::from(elf::SHF_EXECINSTR) != 0
        })
    };
    for (i, s) in syms.iter().enumerate() {
        let raw = s.name_bytes().unwrap_or(b"");
        let mut name = String::from_utf8_lossy(raw).into_owned();
        if s.is_local() {
            let n = local_count.entry(raw.to_vec()).or_insert(0);
            *n += 1;
            name = format!("{name}/{n}");
        }
        let Some(sec) = s.section_index() else {
            continue;
        };
        if s.kind() != SymbolKind::Text || !is_exec(sec) {
            continue;
        }
        let mut size = s.size();
        if size == 0 {
            // Up to the next symbol of the section (or its end).
            let next = syms[i + 1..]
                .iter()
                .find(|n| n.section_index() == Some(sec) && n.address() > s.address())
                .map_or(section_end(sec), |n| n.address());
            size = next.saturating_sub(s.address());
        }
        out.push(Function {
            addr: s.address(),
            size,
            name,
            plt: false,
        });
    }
    out
}

/// One function per PLT entry whose indirect jump goes through a GOT slot a dynamic
/// relocation names: `SYMBOL@PLT`.
fn plt_functions(file: &ElfFile64<'_, object::Endianness>) -> Vec<Function> {
    let mut slot_names: FxHashMap<u64, String> = FxHashMap::default();
    if let (Some(relocs), Some(dynsym)) = (file.dynamic_relocations(), file.dynamic_symbol_table())
    {
        for (offset, r) in relocs {
            if let RelocationTarget::Symbol(idx) = r.target() {
                if let Ok(sym) = dynsym.symbol_by_index(idx) {
                    if let Ok(name) = sym.name() {
                        if !name.is_empty() {
                            slot_names.insert(offset, name.to_string());
                        }
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for sec in file.sections() {
        let name = sec.name().unwrap_or("");
        if !matches!(name, ".plt" | ".plt.sec" | ".plt.got") {
            continue;
        }
        let Ok(data) = sec.data() else { continue };
        const ENTRY: usize = 16;
        for (i, entry) in data.chunks_exact(ENTRY).enumerate() {
            let addr = sec.address() + (i * ENTRY) as u64;
            if i == 0 && name == ".plt" && got_slot(entry, addr).is_none() {
                // The lazy-binding header (push, jump to the resolver) that a PLT entry's
                // first call jumps to: BOLT makes it a pseudo function of its own.
                out.push(Function {
                    addr,
                    size: ENTRY as u64,
                    name: "__BOLT_PSEUDO_.plt".to_string(),
                    plt: true,
                });
                continue;
            }
            if let Some(slot) = got_slot(entry, addr) {
                if let Some(sym) = slot_names.get(&slot) {
                    out.push(Function {
                        addr,
                        size: ENTRY as u64,
                        name: format!("{sym}@PLT"),
                        plt: true,
                    });
                }
            }
        }
    }
    out
}

/// The GOT slot a PLT entry jumps through (`jmp *slot(%rip)`, possibly after
/// `endbr64` or with a `bnd` prefix); `None` for the PLT header (`push`, then jump).
fn got_slot(entry: &[u8], addr: u64) -> Option<u64> {
    let mut d = Decoder::with_ip(64, entry, addr, DecoderOptions::NONE);
    while d.can_decode() {
        let insn = d.decode();
        match insn.mnemonic() {
            Mnemonic::Endbr64 | Mnemonic::Nop => continue,
            Mnemonic::Jmp
                if insn.op0_kind() == OpKind::Memory && insn.memory_base() == Register::RIP =>
            {
                return Some(insn.ip_rel_memory_address())
            }
            _ => return None,
        }
    }
    None
}
