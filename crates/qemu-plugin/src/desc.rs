//! Blocks that need more than a word: a descriptor per block, for blocks with a LOCK
//! prefix, blocks whose addresses do not pack, and every block when counting (the slow
//! path). A block's word then carries its descriptor's address (`word.rs`).

use super::classify::{can_branch, K_COND};
use super::word::{
    special, unpack, word_payload, word_tag, Branch, MASK48, NEVER, NO_BRANCH, TAG_SPECIAL,
    THREAD_START,
};
use std::mem::MaybeUninit;
use std::sync::Mutex;

#[repr(C, align(8))]
pub struct Desc {
    pub start: u64,
    pub last: u64,
    pub end: u64,
    /// The word this block leaves.
    pub leave: u64,
    pub n_insns: u32,
    pub kind: u8,
    /// The block holds a LOCK-prefixed instruction: an atomic restart (QEMU re-running the
    /// instruction alone in a one-instruction block) must not look like a branch.
    pub has_lock: bool,
    pub first_is_lock: bool,
}

/// Descriptors, allocated in chunks and never freed (QEMU may run a block's code for as
/// long as the process lives; it does not tell plugins when it drops a block). `free` is
/// the unused rest of the current chunk.
struct Arena {
    free: &'static mut [MaybeUninit<Desc>],
}

static ARENA: Mutex<Arena> = Mutex::new(Arena { free: &mut [] });

/// A new descriptor, for good: it is never freed or moved, so its address can stand in a
/// block's word for the life of the process. `leave` decides the word the block leaves,
/// given the descriptor's own word; nothing writes the descriptor after that.
pub fn alloc_desc(d: Desc, leave: impl FnOnce(OwnWord) -> u64) -> &'static Desc {
    const CHUNK: usize = 1 << 14;
    let mut a = ARENA.lock().unwrap_or_else(|e| e.into_inner());
    if a.free.is_empty() {
        let chunk: Vec<MaybeUninit<Desc>> = (0..CHUNK).map(|_| MaybeUninit::uninit()).collect();
        a.free = chunk.leak();
    }
    let (slot, rest) = std::mem::take(&mut a.free).split_first_mut().unwrap();
    a.free = rest;
    let d = slot.write(d);
    d.leave = leave(OwnWord(d as *const Desc as u64));
    d
}

/// The word of a block that leaves its own descriptor (the only way to make one, so that
/// every descriptor word holds the address of a descriptor from `alloc_desc`).
pub struct OwnWord(u64);

impl OwnWord {
    pub fn get(self) -> u64 {
        assert!(
            self.0 <= MASK48,
            "vlbr: descriptor address does not fit 48 bits"
        );
        special(self.0)
    }
}

/// The descriptor a block's callback was registered with (`udata`).
///
/// # Safety
/// `ud` is the `udata` of a block registered with a descriptor (`translate::desc_cb`
/// gives the address of one from `alloc_desc`).
#[inline(always)]
pub unsafe fn desc_of_udata(ud: u64) -> &'static Desc {
    // SAFETY: `ud` is the address of a descriptor from `alloc_desc` (the caller's
    // contract): never freed, and no longer written once its block was registered.
    unsafe { &*(ud as *const Desc) }
}

/// The descriptor a special word other than `NO_BRANCH` and `THREAD_START` carries.
///
/// # Safety
/// `w` is such a word, made by `OwnWord::get`.
unsafe fn desc_of_word(w: u64) -> &'static Desc {
    // SAFETY: `OwnWord::get` put the address of a descriptor from `alloc_desc` in the
    // payload (the caller's contract); as in `desc_of_udata`.
    unsafe { &*(word_payload(w) as *const Desc) }
}

/// Whether a special word carries a descriptor.
fn is_desc_word(w: u64) -> bool {
    word_tag(w) == TAG_SPECIAL && w != NO_BRANCH && w != THREAD_START
}

/// The branch a word describes, if any (the slow path's decoder).
///
/// # Safety
/// `w` is a word this plugin made (`pack`, `NO_BRANCH`, `THREAD_START` or `OwnWord`),
/// as every value of `Vcpu::prev` is.
pub unsafe fn decode(w: u64, system: bool) -> Option<Branch> {
    if word_tag(w) != TAG_SPECIAL {
        return Some(unpack(w));
    }
    if !is_desc_word(w) {
        return None;
    }
    // SAFETY: a plugin-made special word other than NO_BRANCH and THREAD_START comes from
    // `OwnWord::get` (the caller's contract).
    let d = unsafe { desc_of_word(w) };
    if !can_branch(d.kind, system) {
        return None;
    }
    let cond = d.kind == K_COND;
    Some(Branch {
        from: d.last,
        cmp: if cond { d.end } else { NEVER },
        cond,
    })
}

/// An atomic instruction that QEMU restarts alone in a one-instruction block (parallel
/// guests) interrupts the previous block before its last instruction: no branch. Only
/// descriptor blocks hold LOCK prefixes, and they leave their descriptor in their word.
///
/// # Safety
/// As for `decode`: `w` is a word this plugin made.
pub unsafe fn lock_restart(w: u64, d: &Desc) -> bool {
    if !d.first_is_lock || !is_desc_word(w) {
        return false;
    }
    // SAFETY: a descriptor word (the caller's contract and the test above).
    let p = unsafe { desc_of_word(w) };
    p.has_lock && d.start > p.start && d.start < p.end
}
