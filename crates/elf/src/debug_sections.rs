//! The raw `.debug_*` sections, decompressed once if needed.
//!
//! Uncompressed sections are borrowed straight from the mapped file.
//! Compressed ones (SHF_COMPRESSED or the old `.zdebug_*`) are inflated into
//! buffers owned by the `Binary`, so a `Symbolizer<'a>` can hand out `&'a`
//! slices either way without copying the common case, and every symbolizer
//! of one binary shares one decompression.
//!
//! This is ELF-level work (section lookup and decompression, done by
//! `object`); it sits below `binary` like `symbols`, taking the parsed file,
//! so `Binary` can own the cache while the DWARF parsing stays above it.

use std::ops::Range;

use object::read::elf::ElfFile64;
use object::{Object, ObjectSection};

enum Bytes {
    InFile(Range<usize>),
    Owned(Vec<u8>),
}

/// Why a debug section could not be read: its decompression or (in a relocatable
/// object) its relocation failed.
#[derive(Clone, Debug)]
pub(crate) struct SectionError {
    pub section: String,
    pub what: String,
    pub relocating: bool,
}

pub(crate) struct DebugSections {
    sections: Vec<(gimli::SectionId, Bytes)>,
}

/// Every section gimli may ask for.
const IDS: &[gimli::SectionId] = &[
    gimli::SectionId::DebugAbbrev,
    gimli::SectionId::DebugAddr,
    gimli::SectionId::DebugAranges,
    gimli::SectionId::DebugInfo,
    gimli::SectionId::DebugLine,
    gimli::SectionId::DebugLineStr,
    gimli::SectionId::DebugRanges,
    gimli::SectionId::DebugRngLists,
    gimli::SectionId::DebugStr,
    gimli::SectionId::DebugStrOffsets,
    gimli::SectionId::DebugTypes,
];

impl DebugSections {
    /// Reads (and if needed decompresses) the sections of `file`, which was
    /// parsed from `data` (the whole file: uncompressed sections are kept as
    /// ranges of it). The error names the section and what went wrong; the
    /// caller wraps it in `ElfError::Decompress` or `ElfError::Relocate`.
    /// `bases`: for a relocatable object (a kernel module), the section layout to
    /// relocate against; its debug sections are then always owned, relocated copies.
    pub(crate) fn load(
        file: &ElfFile64<'_, object::Endianness>,
        data: &[u8],
        bases: Option<&[u64]>,
    ) -> Result<DebugSections, SectionError> {
        let base = data.as_ptr() as usize;
        let mut sections = Vec::new();
        for &id in IDS {
            // `section_by_name` also finds the `.zdebug_` spelling.
            let Some(sec) = file.section_by_name(id.name()) else {
                continue;
            };
            let data = sec.uncompressed_data().map_err(|e| SectionError {
                section: id.name().to_string(),
                what: e.to_string(),
                relocating: false,
            })?;
            if let Some(bases) = bases {
                let mut owned = data.into_owned();
                crate::relocatable::relocate(file, &sec, bases, &mut owned).map_err(|what| {
                    SectionError {
                        section: id.name().to_string(),
                        what,
                        relocating: true,
                    }
                })?;
                sections.push((id, Bytes::Owned(owned)));
                continue;
            }
            let bytes = match data {
                std::borrow::Cow::Borrowed(b) => {
                    let start = b.as_ptr() as usize - base;
                    if b.is_empty() {
                        Bytes::InFile(0..0)
                    } else {
                        Bytes::InFile(start..start + b.len())
                    }
                }
                std::borrow::Cow::Owned(v) => Bytes::Owned(v),
            };
            sections.push((id, bytes));
        }
        Ok(DebugSections { sections })
    }

    pub(crate) fn get<'a>(&'a self, file: &'a [u8], id: gimli::SectionId) -> &'a [u8] {
        match self.sections.iter().find(|(i, _)| *i == id) {
            Some((_, Bytes::InFile(r))) => &file[r.clone()],
            Some((_, Bytes::Owned(v))) => v,
            None => &[],
        }
    }
}
