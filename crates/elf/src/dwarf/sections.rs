//! The raw `.debug_*` sections, decompressed once if needed.
//!
//! Uncompressed sections are borrowed straight from the mapped file.
//! Compressed ones (SHF_COMPRESSED or the old `.zdebug_*`) are inflated into
//! buffers owned by the `Binary`, so a `Symbolizer<'a>` can hand out `&'a`
//! slices either way without copying the common case.

use std::ops::Range;

use object::{Object, ObjectSection};

use crate::binary::Binary;

enum Bytes {
    InFile(Range<usize>),
    Owned(Vec<u8>),
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
    /// Reads (and if needed decompresses) the sections. The error string
    /// names the section; the caller wraps it in `ElfError::Decompress`.
    pub(crate) fn load(bin: &Binary) -> Result<DebugSections, (String, String)> {
        let file = bin
            .elf()
            .map_err(|e| ("(headers)".to_string(), e.to_string()))?;
        let base = bin.data().as_ptr() as usize;
        let mut sections = Vec::new();
        for &id in IDS {
            // `section_by_name` also finds the `.zdebug_` spelling.
            let Some(sec) = file.section_by_name(id.name()) else {
                continue;
            };
            let data = sec
                .uncompressed_data()
                .map_err(|e| (id.name().to_string(), e.to_string()))?;
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
