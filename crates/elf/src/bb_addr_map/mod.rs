//! The basic-block address map (`.llvm_bb_addr_map`, `SHT_LLVM_BB_ADDR_MAP`) that
//! clang writes with `-fbasic-block-address-map` (clang 19; `-fbasic-block-sections=labels`
//! before): for each function, where each machine basic block starts, how long it is,
//! and its ID, the number Propeller's cluster lists (`-fbasic-block-sections=list=`)
//! name blocks by. [`BbAddrMap::read`] reads every such section of a binary, the
//! kernel's vmlinux and modules included; `decode` knows the versions.

mod decode;

use object::read::elf::ElfFile64;
use object::{Object, ObjectSection};

use crate::binary::Binary;
use crate::error::ElfError;

use decode::{SHT_LLVM_BB_ADDR_MAP, SHT_LLVM_BB_ADDR_MAP_V0};

/// The optional parts of an entry (the feature byte, a word from version 5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BbFeatures {
    pub func_entry_count: bool,
    pub bb_freq: bool,
    pub br_prob: bool,
    pub multi_bb_range: bool,
    pub omit_bb_entries: bool,
    pub callsite_end_offsets: bool,
    pub bb_hash: bool,
    pub post_link_cfg: bool,
}

impl BbFeatures {
    /// `None` when a bit no LLVM version defines is set.
    pub fn decode(raw: u16) -> Option<BbFeatures> {
        if raw >> 8 != 0 {
            return None;
        }
        let bit = |n: u16| raw & (1 << n) != 0;
        Some(BbFeatures {
            func_entry_count: bit(0),
            bb_freq: bit(1),
            br_prob: bit(2),
            multi_bb_range: bit(3),
            omit_bb_entries: bit(4),
            callsite_end_offsets: bit(5),
            bb_hash: bit(6),
            post_link_cfg: bit(7),
        })
    }

    pub fn encode(&self) -> u16 {
        [
            self.func_entry_count,
            self.bb_freq,
            self.br_prob,
            self.multi_bb_range,
            self.omit_bb_entries,
            self.callsite_end_offsets,
            self.bb_hash,
            self.post_link_cfg,
        ]
        .iter()
        .enumerate()
        .fold(0, |acc, (i, &on)| acc | (u16::from(on) << i))
    }

    /// The PGO analysis data follows the blocks.
    pub fn has_pgo(&self) -> bool {
        self.func_entry_count || self.bb_freq || self.br_prob
    }

    /// The oldest version that can carry these features (`None`: any).
    fn minimum_version(&self) -> Option<u8> {
        if self.post_link_cfg {
            Some(5)
        } else if self.bb_hash {
            Some(4)
        } else if self.callsite_end_offsets {
            Some(3)
        } else if self.encode() != 0 {
            Some(2)
        } else {
            None
        }
    }
}

/// A block's flags, as the compiler saw its terminator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BbMetadata {
    pub has_return: bool,
    pub has_tail_call: bool,
    pub is_eh_pad: bool,
    pub can_fall_through: bool,
    pub has_indirect_branch: bool,
}

impl BbMetadata {
    /// `None` when a bit no LLVM version defines is set.
    pub fn decode(raw: u32) -> Option<BbMetadata> {
        if raw >> 5 != 0 {
            return None;
        }
        let bit = |n: u32| raw & (1 << n) != 0;
        Some(BbMetadata {
            has_return: bit(0),
            has_tail_call: bit(1),
            is_eh_pad: bit(2),
            can_fall_through: bit(3),
            has_indirect_branch: bit(4),
        })
    }
}

/// One machine basic block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BbEntry {
    /// The block's number in its function (stable across the blocks' reordering; the
    /// index for versions before 2).
    pub id: u32,
    /// From the start of its range.
    pub offset: u32,
    pub size: u32,
    pub metadata: BbMetadata,
    /// Version 3 and later, with the call-site feature: where each call instruction
    /// ends, from the block's start.
    pub callsite_end_offsets: Vec<u32>,
    /// Version 4 and later, with the hash feature.
    pub hash: Option<u64>,
}

/// A contiguous run of a function's blocks: the whole function, or with basic-block
/// sections one of its clusters (the hot part, `.cold`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BbRange {
    pub base: u64,
    pub blocks: Vec<BbEntry>,
}

/// A successor edge of the PGO analysis data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BbSuccessor {
    pub id: u32,
    /// Out of 2^31 (LLVM's `BranchProbability` denominator).
    pub probability: u32,
    pub post_link_frequency: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BbPgoBlock {
    pub frequency: Option<u64>,
    pub post_link_frequency: Option<u32>,
    pub successors: Vec<BbSuccessor>,
}

/// The PGO analysis data (`-mllvm -pgo-analysis-map=...`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BbPgo {
    pub entry_count: Option<u64>,
    /// One per block, in the order of the ranges' blocks.
    pub blocks: Vec<BbPgoBlock>,
}

/// One function's entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BbFunction {
    /// `None` for the unversioned `SHT_LLVM_BB_ADDR_MAP_V0` section type.
    pub version: Option<u8>,
    pub features: BbFeatures,
    /// The first range starts at the function's entry.
    pub ranges: Vec<BbRange>,
    pub pgo: Option<BbPgo>,
    /// Where the entry starts in its section, for messages.
    pub entry_offset: u64,
}

impl BbFunction {
    /// The function's entry address.
    pub fn address(&self) -> u64 {
        self.ranges.first().map_or(0, |r| r.base)
    }

    /// Every block with its address, range by range.
    pub fn blocks(&self) -> impl Iterator<Item = (u64, &BbEntry)> {
        self.ranges.iter().flat_map(|r| {
            r.blocks
                .iter()
                .map(move |b| (r.base + u64::from(b.offset), b))
        })
    }
}

/// All the basic-block address maps of a binary.
#[derive(Clone, Debug, Default)]
pub struct BbAddrMap {
    /// In section order, then in each section's order (a linked binary: link order).
    pub functions: Vec<BbFunction>,
}

impl BbAddrMap {
    /// See [`function_names`].
    pub fn function_names(bin: &Binary) -> rustc_hash::FxHashMap<u64, String> {
        function_names(bin)
    }

    /// Reads every `SHT_LLVM_BB_ADDR_MAP` (and `_V0`) section of `bin`. In a relocatable
    /// object (a kernel module) the function addresses come from the sections'
    /// relocations, in kfdo's layout ([`crate::RELOCATABLE_LAYOUT_BASE`]).
    ///
    /// Errors: [`ElfError::NoBbAddrMap`] when the binary has no such section (it was
    /// built without `-fbasic-block-address-map`), [`ElfError::BbAddrMap`] naming the
    /// section and byte offset of anything malformed or of an unknown version.
    pub fn read(bin: &Binary) -> Result<BbAddrMap, ElfError> {
        let file = bin.elf()?;
        let bases = bin
            .is_relocatable()
            .then(|| crate::relocatable::section_bases(&file));
        let mut functions = Vec::new();
        let mut found = false;
        for sec in file.sections() {
            use object::read::elf::SectionHeader;
            let sh_type = sec.elf_section_header().sh_type(file.endian());
            if sh_type != SHT_LLVM_BB_ADDR_MAP && sh_type != SHT_LLVM_BB_ADDR_MAP_V0 {
                continue;
            }
            found = true;
            let name = String::from_utf8_lossy(sec.name_bytes().unwrap_or(b"?")).into_owned();
            let section = format!("{name} (section {})", sec.index().0);
            let err = |offset: u64, what: String| ElfError::BbAddrMap {
                path: bin.path().to_owned(),
                section: section.clone(),
                offset,
                what,
            };
            let data = sec
                .uncompressed_data()
                .map_err(|e| err(0, format!("cannot read the section: {e}")))?;
            let decoded = match &bases {
                None => decode::decode_section(&data, sh_type, &|_, raw| Ok(raw)),
                Some(bases) => {
                    let relocated = relocated_addresses(&file, &sec, bases, &data)
                        .map_err(|what| err(0, what))?;
                    decode::decode_section(&data, sh_type, &|at, _| {
                        relocated.get(&at).copied().ok_or_else(|| {
                            "no relocation gives this function's address (a relocatable \
                             object's map must be relocated)"
                                .to_string()
                        })
                    })
                }
            };
            functions.extend(decoded.map_err(|e| err(e.offset, e.what))?);
        }
        if !found {
            return Err(ElfError::NoBbAddrMap {
                path: bin.path().to_owned(),
            });
        }
        Ok(BbAddrMap { functions })
    }
}

/// The name llvm-readobj gives a map entry: the first function symbol (`STT_FUNC`) at
/// each address, in symbol-table order.
pub fn function_names(bin: &Binary) -> rustc_hash::FxHashMap<u64, String> {
    const STT_FUNC: u8 = 2;
    let mut names = rustc_hash::FxHashMap::default();
    for s in bin.symbols().symtab() {
        if s.st_type == STT_FUNC && s.section.is_some() {
            names
                .entry(s.addr)
                .or_insert_with(|| String::from_utf8_lossy(s.name(bin.data())).into_owned());
        }
    }
    names
}

/// The function addresses of a relocatable object's map section: each relocation's
/// result, by the offset it patches.
fn relocated_addresses(
    file: &ElfFile64<'_, object::Endianness>,
    sec: &object::read::elf::ElfSection64<'_, '_, object::Endianness>,
    bases: &[u64],
    data: &[u8],
) -> Result<rustc_hash::FxHashMap<u64, u64>, String> {
    let mut patched = data.to_vec();
    crate::relocatable::relocate(file, sec, bases, &mut patched)?;
    let mut out = rustc_hash::FxHashMap::default();
    for (offset, _) in sec.relocations() {
        let at = offset as usize;
        if let Some(b) = patched.get(at..at + 8) {
            out.insert(offset, u64::from_le_bytes(b.try_into().expect("8 bytes")));
        }
    }
    Ok(out)
}
