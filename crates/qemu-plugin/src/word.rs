//! The one word of state a block leaves for the next.
//!
//! The execution callback runs once per executed TB (about every 5 guest instructions), so
//! it must be short. What it costs is mostly its memory operations, so each block leaves
//! one word behind for the next (`Vcpu::prev`, below "the word"), and the next block reads
//! it and writes its own: one load and one store per block when no branch is taken.
//!
//! The word of a block describes the branch that ends it:
//! - bits 16..64: the block's start (48-bit addresses, sign-extended: kernel ones fit too,
//!   and one arithmetic shift gets it back), bits 4..16: the offset of its last
//!   instruction from the start;
//! - bits 0..4, the tag: 0, an unconditional transfer (taken whatever its target, so
//!   `call next; pop` counts); 2..=15, a conditional branch of that many bytes, taken
//!   unless the next block starts right after it; 1 (`TAG_SPECIAL`), no packed form:
//!   bits 16..64 then hold 0 (`NO_BRANCH`), 1 (`THREAD_START`), or the address of the
//!   block's `Desc` (blocks with a LOCK prefix, and blocks whose addresses do not pack;
//!   see `desc.rs`).
//!
//! Filters are decided when a block is translated: a block on a side the filter drops
//! (user or kernel) records no branch into it and leaves `NO_BRANCH`, so no branch out of
//! it is recorded either. Only the counting callback, which counts every branch, filters
//! at run time.

use super::classify::K_COND;

pub const TAG_SPECIAL: u64 = 1;
/// The word of a block that ends without a branch (or whose branches the filter drops).
pub const NO_BRANCH: u64 = special(0);
/// The word a thread starts with (also after `rt_sigreturn` before its first block).
pub const THREAD_START: u64 = special(1);
/// No block starts here (not a canonical address): the "not taken" successor of an
/// unconditional transfer.
pub const NEVER: u64 = 0x8000_0000_0000_0000;
/// What fits in a special word's payload.
pub const MASK48: u64 = (1 << 48) - 1;

#[inline(always)]
fn sext48(x: u64) -> u64 {
    ((x << 16) as i64 >> 16) as u64
}

/// A special word carrying `payload` (< 2^48).
pub const fn special(payload: u64) -> u64 {
    payload << 16 | TAG_SPECIAL
}

#[inline(always)]
pub fn word_tag(w: u64) -> u64 {
    w & 0xf
}

/// The start of the block a packed word describes.
#[inline(always)]
pub fn word_start(w: u64) -> u64 {
    ((w as i64) >> 16) as u64
}

/// The last instruction of the block a packed word describes.
#[inline(always)]
pub fn word_last(w: u64) -> u64 {
    word_start(w).wrapping_add((w >> 4) & 0xfff)
}

/// What a special word carries.
#[inline(always)]
pub fn word_payload(w: u64) -> u64 {
    w >> 16
}

/// The packed word of a block that can branch out, when it packs: its start, its last
/// instruction and the end of that instruction, and the instruction's kind.
pub fn pack(start: u64, last: u64, end: u64, kind: u8) -> Option<u64> {
    if sext48(start) != start || last < start || end < last {
        return None;
    }
    let off = last - start;
    let tag = if kind == K_COND { end - last } else { 0 };
    if off > 0xfff || tag > 0xf || (kind == K_COND && tag < 2) {
        return None;
    }
    Some(start << 16 | off << 4 | tag)
}

/// A branch a word describes: its source, the successor that means "not taken"
/// (`NEVER` for unconditional transfers), and whether it is conditional.
#[derive(Debug, PartialEq, Eq)]
pub struct Branch {
    pub from: u64,
    pub cmp: u64,
    pub cond: bool,
}

/// The branch a packed word (tag other than `TAG_SPECIAL`) describes.
#[inline(always)]
pub fn unpack(w: u64) -> Branch {
    let tag = word_tag(w);
    let from = word_last(w);
    Branch {
        from,
        cmp: if tag == 0 { NEVER } else { from + tag },
        cond: tag != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::super::classify::{K_CALL, K_JMP, K_RET};
    use super::*;

    #[test]
    fn conditional_branch_packs_and_decodes() {
        // jne (2 bytes) at 0x401010, in a block starting at 0x401000.
        let w = pack(0x401000, 0x401010, 0x401012, K_COND).unwrap();
        assert_eq!(w, 0x401000 << 16 | 0x10 << 4 | 2);
        assert_eq!(word_tag(w), 2);
        assert_eq!(word_start(w), 0x401000);
        assert_eq!(word_last(w), 0x401010);
        assert_eq!(
            unpack(w),
            Branch {
                from: 0x401010,
                cmp: 0x401012,
                cond: true
            }
        );
        // A 6-byte jcc: the fall-through is 6 bytes on.
        let w = pack(0x401000, 0x401020, 0x401026, K_COND).unwrap();
        assert_eq!(unpack(w).cmp, 0x401026);
    }

    #[test]
    fn unconditional_transfer_is_tag_zero() {
        for k in [K_JMP, K_CALL, K_RET] {
            let w = pack(0x1000, 0x1004, 0x1009, k).unwrap();
            assert_eq!(word_tag(w), 0);
            assert_eq!(
                unpack(w),
                Branch {
                    from: 0x1004,
                    cmp: NEVER,
                    cond: false
                }
            );
        }
    }

    #[test]
    fn kernel_addresses_sign_extend() {
        let start = 0xffff_ffff_8100_0000;
        let w = pack(start, start + 0xfff, start + 0x1001, K_COND).unwrap();
        assert_eq!(word_start(w), start);
        assert_eq!(word_last(w), start + 0xfff);
        assert_eq!(unpack(w).cmp, start + 0x1001);
    }

    #[test]
    fn what_does_not_pack() {
        // Not a canonical 48-bit address.
        assert_eq!(
            pack(0x0001_0000_0000_0000, 0x0001_0000_0000_0000, 2, K_JMP),
            None
        );
        // Last instruction more than 0xfff bytes from the start.
        assert_eq!(pack(0x1000, 0x2000, 0x2005, K_JMP), None);
        assert!(pack(0x1000, 0x1fff, 0x2004, K_JMP).is_some());
        // Conditional branches of 2..=15 bytes only.
        assert_eq!(pack(0x1000, 0x1000, 0x1001, K_COND), None);
        assert_eq!(pack(0x1000, 0x1000, 0x1010, K_COND), None);
        assert!(pack(0x1000, 0x1000, 0x100f, K_COND).is_some());
        // Inconsistent bounds.
        assert_eq!(pack(0x1000, 0xfff, 0x1001, K_JMP), None);
        assert_eq!(pack(0x1000, 0x1002, 0x1001, K_JMP), None);
    }

    #[test]
    fn special_words() {
        assert_eq!(word_tag(NO_BRANCH), TAG_SPECIAL);
        assert_eq!(word_tag(THREAD_START), TAG_SPECIAL);
        assert_eq!(word_payload(NO_BRANCH), 0);
        assert_eq!(word_payload(THREAD_START), 1);
        let d = 0x7f12_3456_7898;
        assert_eq!(word_payload(special(d)), d);
        assert_eq!(word_tag(special(MASK48)), TAG_SPECIAL);
        assert_eq!(word_payload(special(MASK48)), MASK48);
        // No packed word is special: conditional tags start at 2.
        let w = pack(0x1000, 0x1000, 0x1002, K_COND).unwrap();
        assert_ne!(word_tag(w), TAG_SPECIAL);
        // NEVER is not a canonical address: no block starts there.
        assert_ne!(sext48(NEVER), NEVER);
    }
}
