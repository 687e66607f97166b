//! `Code`: every instruction llvm-profgen would decode, in address order.
//!
//! llvm-profgen (ProfiledBinary::disassemble) does not decode whole sections:
//! it groups the `.symtab` symbols by section and, in every executable
//! section except `.plt`, decodes from each symbol's address up to the next
//! symbol's address (or the section end). Bytes before a section's first
//! symbol are never decoded, an instruction may run past the next symbol (the
//! decoder sees the rest of the section), and a stripped binary (no
//! `.symtab`) decodes to nothing. `addressIsCode` and "the next instruction"
//! follow from that, so we reproduce it exactly.
//!
//! Layout: struct-of-arrays with u32 offsets from the lowest text address, 6
//! bytes per instruction; the decode runs in parallel over symbol chunks.

use rayon::prelude::*;

use crate::arch::{self, Decoded, InsnKind};
use crate::binary::Binary;
use crate::error::ElfError;

/// A `.symtab` symbol in a disassembled section, as llvm-profgen sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TextSymbol<'d> {
    pub addr: u64,
    pub name: &'d [u8],
    /// Index into `Binary::sections()`-order executable section list.
    pub section_end: u64,
    pub section_addr: u64,
    pub section_file_off: u64,
}

/// The symbols llvm-profgen disassembles from, per executable section
/// (excluding `.plt` and empty sections), each section's list sorted by
/// address (stable, so equal addresses keep file order).
pub(crate) fn profgen_text_symbols(bin: &Binary) -> Vec<Vec<TextSymbol<'_>>> {
    let data = bin.data();
    let syms = bin.symbols().symtab();
    let mut out = Vec::new();
    for sec in bin.sections() {
        if !sec.is_executable() || sec.size == 0 || sec.name == ".plt" {
            continue;
        }
        if sec.sh_type == object::elf::SHT_NOBITS {
            continue;
        }
        let mut list: Vec<TextSymbol<'_>> = syms
            .iter()
            .filter(|s| s.section == Some(sec.index as u32))
            .map(|s| TextSymbol {
                addr: s.addr,
                name: s.name(data),
                section_end: sec.addr.saturating_add(sec.size),
                section_addr: sec.addr,
                section_file_off: sec.offset,
            })
            .collect();
        list.sort_by_key(|s| s.addr);
        out.push(list);
    }
    out
}

pub struct Code {
    base: u64,
    offs: Vec<u32>,
    sizes: Vec<u8>,
    kinds: Vec<InsnKind>,
    /// (start, end) of every non-empty executable section, `.plt` included
    /// (llvm-profgen's TextSections).
    text_sections: Vec<(u64, u64)>,
}

impl std::fmt::Debug for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Code")
            .field("base", &format_args!("{:#x}", self.base))
            .field("len", &self.offs.len())
            .finish()
    }
}

/// One unit of decoding work: a symbol's byte range.
struct Job<'d> {
    start: u64,
    end: u64,
    /// Section bytes from `start` to the section end.
    bytes: &'d [u8],
}

impl Code {
    /// How many `.symtab` symbols lie in the sections [`Code::new`] disassembles:
    /// 0 for a stripped binary (no `.symtab`), whose `Code` is empty, since
    /// llvm-profgen, and so kfdo, disassembles symbol by symbol.
    pub fn symbols_to_decode(bin: &Binary) -> usize {
        profgen_text_symbols(bin).iter().map(Vec::len).sum()
    }

    /// Disassembles the executable sections of `bin` the way llvm-profgen
    /// does. Fails if the architecture has no decoder, a section lies
    /// outside the file, or the instructions span more than 4 GiB.
    pub fn new(bin: &Binary) -> Result<Code, ElfError> {
        let decode = arch::decoder_for(bin.arch()).ok_or_else(|| ElfError::Unsupported {
            path: bin.path().to_owned(),
            what: format!(
                "instruction decoding for {} (only x86-64 and aarch64 are supported)",
                bin.arch()
            ),
        })?;
        let data = bin.data();
        let text_sections: Vec<(u64, u64)> = bin
            .sections()
            .iter()
            .filter(|s| s.is_executable() && s.size > 0)
            .map(|s| (s.addr, s.addr.saturating_add(s.size)))
            .collect();

        let mut jobs = Vec::new();
        for list in profgen_text_symbols(bin) {
            for (i, s) in list.iter().enumerate() {
                let next = list.get(i + 1).map_or(s.section_end, |n| n.addr);
                let end = next.min(s.section_end);
                if s.addr < s.section_addr || s.addr >= end {
                    continue;
                }
                let sec_len = s.section_end - s.section_addr;
                let Some(sec_bytes) = usize::try_from(s.section_file_off)
                    .ok()
                    .and_then(|o| data.get(o..o.checked_add(sec_len as usize)?))
                else {
                    return Err(bin.malformed(format!(
                        "executable section at {:#x} (+{:#x}) lies outside the file",
                        s.section_addr, sec_len
                    )));
                };
                jobs.push(Job {
                    start: s.addr,
                    end,
                    bytes: &sec_bytes[(s.addr - s.section_addr) as usize..],
                });
            }
        }

        // Chunks of roughly equal byte counts keep all cores busy without a
        // task per tiny symbol.
        let total: u64 = jobs.iter().map(|j| j.end - j.start).sum();
        let per_chunk = (total / (rayon::current_num_threads() as u64 * 8)).max(64 * 1024);
        let mut chunks: Vec<&[Job<'_>]> = Vec::new();
        let (mut from, mut acc) = (0, 0);
        for (i, j) in jobs.iter().enumerate() {
            acc += j.end - j.start;
            if acc >= per_chunk {
                chunks.push(&jobs[from..=i]);
                from = i + 1;
                acc = 0;
            }
        }
        if from < jobs.len() {
            chunks.push(&jobs[from..]);
        }
        let parts: Vec<Vec<Decoded>> = chunks
            .par_iter()
            .map(|chunk| {
                let mut out =
                    Vec::with_capacity(chunk.iter().map(|j| (j.end - j.start) as usize / 4).sum());
                for j in chunk.iter() {
                    decode(j.bytes, j.start, j.end, &mut out);
                }
                out
            })
            .collect();

        let mut all: Vec<Decoded> = Vec::with_capacity(parts.iter().map(Vec::len).sum());
        for p in parts {
            all.extend(p);
        }
        // Sections and symbols are normally already in address order; sort
        // only if not (llvm-profgen assumes order and binary-searches).
        if !all.windows(2).all(|w| w[0].addr < w[1].addr) {
            all.sort_by_key(|d| d.addr);
            all.dedup_by_key(|d| d.addr);
        }
        let base = all.first().map_or(0, |d| d.addr);
        let span = all.last().map_or(0, |d| d.addr - base);
        if span > u64::from(u32::MAX) {
            return Err(ElfError::TextTooLarge {
                path: bin.path().to_owned(),
                span,
            });
        }
        let offs = all.iter().map(|d| (d.addr - base) as u32).collect();
        let sizes = all.iter().map(|d| d.size).collect();
        let kinds = all.iter().map(|d| d.kind).collect();
        Ok(Code {
            base,
            offs,
            sizes,
            kinds,
            text_sections,
        })
    }

    /// Number of decoded instructions.
    pub fn len(&self) -> usize {
        self.offs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offs.is_empty()
    }

    /// Address of instruction `idx` (panics if out of range, like slice indexing).
    pub fn addr(&self, idx: usize) -> u64 {
        self.base + u64::from(self.offs[idx])
    }

    pub fn size(&self, idx: usize) -> u8 {
        self.sizes[idx]
    }

    pub fn kind(&self, idx: usize) -> InsnKind {
        self.kinds[idx]
    }

    /// Offset of `addr` from the table base, or `None` if it cannot be in the table.
    fn rel(&self, addr: u64) -> Result<u32, bool> {
        // Err(true): above every instruction; Err(false): below.
        match addr.checked_sub(self.base) {
            None => Err(false),
            Some(d) => u32::try_from(d).map_err(|_| true),
        }
    }

    /// Index of the instruction starting exactly at `addr`.
    pub fn index_of(&self, addr: u64) -> Option<usize> {
        let r = self.rel(addr).ok()?;
        self.offs.binary_search(&r).ok()
    }

    /// llvm-profgen's `addressIsCode`: `addr` is the start of a decoded instruction.
    pub fn is_code(&self, addr: u64) -> bool {
        self.index_of(addr).is_some()
    }

    /// Index of the first instruction at or after `addr`
    /// (`InstructionPointer(Binary, addr, /*RoundToNext=*/true)`); `None` past the end.
    pub fn insn_at_or_after(&self, addr: u64) -> Option<usize> {
        let i = match self.rel(addr) {
            Ok(r) => self.offs.partition_point(|&o| o < r),
            Err(false) => 0,
            Err(true) => self.offs.len(),
        };
        (i < self.offs.len()).then_some(i)
    }

    /// Iterates `(address, size, kind)` in address order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u64, u8, InsnKind)> + '_ {
        (0..self.len()).map(|i| (self.addr(i), self.sizes[i], self.kinds[i]))
    }

    /// (start, end) of the executable sections.
    pub fn text_sections(&self) -> &[(u64, u64)] {
        &self.text_sections
    }
}
