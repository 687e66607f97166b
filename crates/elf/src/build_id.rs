//! NT_GNU_BUILD_ID lookup.
//!
//! perf.data records the build-id of every binary it saw; matching it against
//! the binary on disk is how kfdo refuses to build a profile from samples of a
//! different build. We look in SHT_NOTE sections first (what `object` does) and
//! fall back to PT_NOTE segments, which survive `strip --strip-section-headers`
//! and are what the kernel's own build-id reader uses. The same note walk reads a bare
//! list of notes, such as the running kernel's `/sys/kernel/notes`.

use object::elf;
use object::read::elf::{FileHeader, NoteIterator, ProgramHeader};
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
        let Ok(Some(notes)) = ph.notes(endian, data) else {
            continue;
        };
        if let Some(id) = gnu_build_ids(notes, endian).next() {
            return Some(slice_range(id));
        }
    }
    None
}

/// The descriptors of the GNU build-id notes of a note list, in order, up to the first
/// malformed note (a list that goes wrong there yields nothing after it, rather than a
/// wrong id).
fn gnu_build_ids<'d, E: FileHeader>(
    notes: NoteIterator<'d, E>,
    endian: E::Endian,
) -> impl Iterator<Item = &'d [u8]> {
    notes
        .map_while(Result::ok)
        .filter(move |n| n.n_type(endian) == elf::NT_GNU_BUILD_ID && n.name() == elf::ELF_NOTE_GNU)
        .map(|n| n.desc())
}

/// The GNU build-id (its bytes, not empty) in a bare list of ELF notes in this machine's
/// byte order, laid out as in a PT_NOTE segment (4-byte padding): what the running
/// kernel shows in `/sys/kernel/notes`. None where the list holds none, or is cut or
/// malformed before it.
pub fn gnu_build_id_in_notes(notes: &[u8]) -> Option<Vec<u8>> {
    // The note headers are read in place, which needs them 4-aligned: a misaligned
    // slice is read from an aligned copy.
    let mut copy = Vec::new();
    let notes = if notes.as_ptr().align_offset(4) == 0 {
        notes
    } else {
        copy.resize(notes.len() + 3, 0u8);
        let at = copy.as_ptr().align_offset(4);
        let aligned = copy.get_mut(at..at.checked_add(notes.len())?)?;
        aligned.copy_from_slice(notes);
        &*aligned
    };
    type Native = elf::FileHeader64<object::Endianness>;
    let endian = object::Endianness::default();
    let list = NoteIterator::<Native>::new(endian, 4, notes).ok()?;
    let id = gnu_build_ids(list, endian)
        .find(|id| !id.is_empty())
        .map(<[u8]>::to_vec);
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One note in this machine's byte order, name and descriptor padded to 4 bytes.
    fn note(name: &[u8], kind: u32, desc: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend((name.len() as u32).to_ne_bytes());
        v.extend((desc.len() as u32).to_ne_bytes());
        v.extend(kind.to_ne_bytes());
        v.extend(name);
        v.resize(v.len().next_multiple_of(4), 0);
        v.extend(desc);
        v.resize(v.len().next_multiple_of(4), 0);
        v
    }

    #[test]
    fn finds_the_gnu_build_id_after_other_notes() {
        // As a kernel lays them out: a "Linux" note (name padded from 6 to 8), a Xen
        // note with a 3-byte descriptor (padded to 4), then the build-id.
        let id: Vec<u8> = (0..20).map(|i| 0xa0 + i).collect();
        let mut notes = note(b"Linux\0", 0x100, &[1]);
        notes.extend(note(b"Xen\0", 18, &[7, 8, 9]));
        // A type-3 note of another owner is not a build-id.
        notes.extend(note(b"Xen\0", 3, &[0xee; 8]));
        notes.extend(note(b"GNU\0", 3, &id));
        notes.extend(note(b"GNU\0", 1, &[0, 0, 0, 0]));
        assert_eq!(gnu_build_id_in_notes(&notes), Some(id));
    }

    #[test]
    fn truncated_or_absent_notes_give_none() {
        let full = note(b"GNU\0", 3, &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(
            gnu_build_id_in_notes(&full),
            Some(vec![1, 2, 3, 4, 5, 6, 7, 8])
        );
        assert_eq!(gnu_build_id_in_notes(&full[..full.len() - 1]), None);
        assert_eq!(gnu_build_id_in_notes(&full[..11]), None);
        assert_eq!(gnu_build_id_in_notes(&note(b"Linux\0", 3, &[1, 2])), None);
        assert_eq!(gnu_build_id_in_notes(&note(b"GNU\0", 3, &[])), None);
        assert_eq!(gnu_build_id_in_notes(&[]), None);
        // A size that runs past the end must not panic or wrap.
        let mut huge = full.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert_eq!(gnu_build_id_in_notes(&huge), None);
    }

    #[test]
    fn a_misaligned_list_reads_the_same() {
        let list = note(b"GNU\0", 3, &[9, 8, 7, 6]);
        let mut buf = vec![0u8; list.len() + 5];
        // One byte past a 4-byte boundary.
        let at = buf.as_ptr().align_offset(4) + 1;
        buf[at..at + list.len()].copy_from_slice(&list);
        let misaligned = &buf[at..at + list.len()];
        assert_eq!(misaligned.as_ptr().align_offset(4), 3);
        assert_eq!(gnu_build_id_in_notes(misaligned), Some(vec![9, 8, 7, 6]));
    }
}
