//! NT_GNU_BUILD_ID lookup.
//!
//! perf.data records the build-id of every binary it saw; matching it against
//! the binary on disk is how kfdo refuses to build a profile from samples of a
//! different build. We look in SHT_NOTE sections first (what `object` does) and
//! fall back to PT_NOTE segments, which survive `strip --strip-section-headers`
//! and are what the kernel's own build-id reader uses.

use object::elf;
use object::read::elf::{FileHeader, ProgramHeader};
use object::Object;

/// Returns the byte range of the build-id descriptor inside `data`.
pub(crate) fn find<'d, E>(
    file: &object::read::elf::ElfFile<'d, E, &'d [u8]>,
    data: &'d [u8],
) -> Option<std::ops::Range<usize>>
where
    E: FileHeader<Endian = object::Endianness>,
{
    let slice_range = |s: &[u8]| {
        let start = s.as_ptr() as usize - data.as_ptr() as usize;
        start..start + s.len()
    };
    if let Ok(Some(id)) = file.build_id() {
        return Some(slice_range(id));
    }
    let endian = file.endian();
    for ph in file.elf_program_headers() {
        if ph.p_type(endian) != elf::PT_NOTE {
            continue;
        }
        let Ok(Some(mut notes)) = ph.notes(endian, data) else {
            continue;
        };
        while let Ok(Some(note)) = notes.next() {
            if note.n_type(endian) == elf::NT_GNU_BUILD_ID && note.name() == elf::ELF_NOTE_GNU {
                return Some(slice_range(note.desc()));
            }
        }
    }
    None
}
