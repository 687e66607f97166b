//! PT_LOAD segments and the address <-> file-offset mapping.
//!
//! perf reports samples as runtime addresses plus the file offset of the
//! mapping (MMAP2 `pgoff`), so the profile generator needs both directions.
//! The "preferred base" follows llvm-profgen exactly so that the offsets
//! kfdo writes agree with the offsets llvm-profgen writes for the same binary.

/// One PT_LOAD program header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadSegment {
    /// `p_vaddr`: link-time virtual address of the first byte.
    pub vaddr: u64,
    /// `p_memsz`: size in memory (includes .bss, so may exceed `filesz`).
    pub memsz: u64,
    /// `p_offset`: file offset of the first byte.
    pub offset: u64,
    /// `p_filesz`: number of bytes backed by the file.
    pub filesz: u64,
    /// `p_flags` (PF_X = 1, PF_W = 2, PF_R = 4).
    pub flags: u32,
    /// `p_flags & PF_X`.
    pub executable: bool,
    /// `p_align`.
    pub align: u64,
}

/// Page size llvm-profgen assumes when it rounds segment addresses down
/// ("segments will always be loaded at a page boundary"); it does not read
/// the target's page size, and neither do we, so both tools agree.
pub const PROFGEN_PAGE_SIZE: u64 = 0x1000;

/// llvm-profgen's `setPreferredTextSegmentAddresses` for ELF: the page-aligned
/// vaddr and file offset of every executable PT_LOAD, in program-header order.
pub(crate) fn preferred_text_segments(segs: &[LoadSegment]) -> (Vec<u64>, Vec<u64>) {
    let mask = !(PROFGEN_PAGE_SIZE - 1);
    segs.iter()
        .filter(|s| s.executable)
        .map(|s| (s.vaddr & mask, s.offset & mask))
        .unzip()
}

/// Page-aligned vaddr of the first PT_LOAD (profgen's `FirstLoadableAddress`).
pub(crate) fn first_loadable_address(segs: &[LoadSegment]) -> u64 {
    segs.first()
        .map(|s| s.vaddr & !(PROFGEN_PAGE_SIZE - 1))
        .unwrap_or(0)
}

/// File offset -> link-time vaddr, using only file-backed bytes.
pub(crate) fn file_offset_to_vaddr(segs: &[LoadSegment], off: u64) -> Option<u64> {
    segs.iter()
        .find(|s| off >= s.offset && off - s.offset < s.filesz)
        .map(|s| s.vaddr + (off - s.offset))
}

/// Link-time vaddr -> file offset; `None` for addresses outside every
/// segment or in the zero-filled tail (.bss) that has no file bytes.
pub(crate) fn vaddr_to_file_offset(segs: &[LoadSegment], va: u64) -> Option<u64> {
    segs.iter()
        .find(|s| va >= s.vaddr && va - s.vaddr < s.filesz)
        .map(|s| s.offset + (va - s.vaddr))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(vaddr: u64, offset: u64, filesz: u64, memsz: u64, x: bool) -> LoadSegment {
        LoadSegment {
            vaddr,
            memsz,
            offset,
            filesz,
            flags: if x { 5 } else { 4 },
            executable: x,
            align: 0x1000,
        }
    }

    #[test]
    fn mapping_round_trips_and_skips_bss() {
        let segs = [
            seg(0x0, 0x0, 0x500, 0x500, false),
            seg(0x1510, 0x510, 0x100, 0x100, true),
            seg(0x2610, 0x610, 0x10, 0x80, false),
        ];
        assert_eq!(file_offset_to_vaddr(&segs, 0x520), Some(0x1520));
        assert_eq!(vaddr_to_file_offset(&segs, 0x1520), Some(0x520));
        assert_eq!(vaddr_to_file_offset(&segs, 0x2620), None); // .bss
        assert_eq!(vaddr_to_file_offset(&segs, 0x9000), None);
        let (va, off) = preferred_text_segments(&segs);
        assert_eq!(va, vec![0x1000]);
        assert_eq!(off, vec![0x0]);
        assert_eq!(first_loadable_address(&segs), 0);
    }
}
