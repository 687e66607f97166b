//! The execution callbacks: run for every executed block, the plugin's hot path.
//!
//! Each block gets the callback of its kind (chosen in `translate.rs`), a const-generic
//! instance so that the kind costs no test at run time. The fast ones read and write one
//! word (`word.rs`) and, for a taken branch, one ring entry (`ring.rs`); everything rarer
//! is out of line (`#[cold]`). The descriptor callback (`desc.rs`) is the slow path.
//!
//! The callbacks also branch on "taken": the host has just predicted the guest's own
//! branch on that outcome, and the measured cost of this branch is lower than that of
//! branch-free code.

use super::desc::{decode, desc_of_udata, lock_restart, Desc};
use super::filter::{is_kernel, side_kept};
use super::guest_maps;
use super::libc_api::now_ns;
use super::stream_encode;
use super::stream_write::maybe_flush;
use super::vcpu::{refresh_ids, vcpu, vcpu0, Vcpu};
use super::word::{word_last, word_start, word_tag, NO_BRANCH, TAG_SPECIAL};
use std::ffi::{c_uint, c_void};

// The fast callbacks, one per kind of block (`udata` in brackets):
/// A block that can branch out and packs [its word].
pub const FAST_PACKED: u8 = 0;
/// A block that ends without a branch, or with a system call in user mode [its start].
pub const FAST_END_NONE: u8 = 1;
/// A block on the side the filter drops: no branch into or out of it is recorded [-].
pub const FAST_SILENT: u8 = 2;
/// A block that is one unconditional transfer [its word]: the only kind of block an
/// unconditional transfer to its own address can arrive at (a block starting at a branch
/// instruction ends with it), so the only one that checks for it (see `arrive`).
pub const FAST_PACKED_SELF: u8 = 3;

/// vCPU 0 (the only one of single-threaded programs) goes straight to its state, a
/// static (no pointer to load); the others go through the index, out of line, so that the
/// fast path saves no registers and takes no jump.
pub extern "C" fn on_tb_exec_fast<const KIND: u8>(vcpu_index: c_uint, ud: *mut c_void) {
    if vcpu_index != 0 {
        return fast_by_index::<KIND>(vcpu_index, ud as u64);
    }
    // SAFETY: this is a callback of vCPU 0, and no other reference to its state is held.
    fast_body::<KIND>(unsafe { vcpu0() }, ud as u64);
}

#[cold]
#[inline(never)]
fn fast_by_index<const KIND: u8>(vcpu_index: c_uint, ud: u64) {
    if let Some(v) = vcpu(vcpu_index) {
        fast_body::<KIND>(v, ud);
    }
}

#[inline(always)]
fn fast_body<const KIND: u8>(v: &mut Vcpu, ud: u64) {
    match KIND {
        FAST_PACKED => {
            let w = std::mem::replace(&mut v.prev, ud);
            arrive::<false>(v, w, word_start(ud));
        }
        FAST_PACKED_SELF => {
            let w = std::mem::replace(&mut v.prev, ud);
            arrive::<true>(v, w, word_start(ud));
        }
        FAST_END_NONE => {
            let w = std::mem::replace(&mut v.prev, NO_BRANCH);
            arrive::<false>(v, w, ud);
        }
        _ => v.prev = NO_BRANCH,
    }
}

/// The block at `to` follows the block whose word is `w`.
///
/// Not taken: the next block starts right after a conditional branch (`from + tag`). With
/// an unconditional transfer (tag 0) the same test would match a transfer to its own
/// address; only a block starting with an unconditional transfer can be its target, and
/// only such blocks (`SELF`) pay for checking the tag. (Leaving the check out of the
/// others saves time under QEMU: docs/performance.md.)
#[inline(always)]
fn arrive<const SELF: bool>(v: &mut Vcpu, w: u64, to: u64) {
    let tag = word_tag(w);
    if tag == TAG_SPECIAL {
        return arrive_special(v, w, to);
    }
    let from = word_last(w);
    if to == from.wrapping_add(tag) && (!SELF || tag != 0) {
        return;
    }
    push(v, from, to);
}

#[cold]
#[inline(never)]
fn arrive_special(v: &mut Vcpu, w: u64, to: u64) {
    if v.need_ids {
        first_in_thread(v, to);
    }
    // SAFETY: `w` was `v.prev`, which only ever holds words this plugin made.
    if let Some(b) = unsafe { decode(w, v.system) } {
        if to != b.cmp && side_kept(v.filter, b.from) && side_kept(v.filter, to) {
            push(v, b.from, to);
        }
    }
}

/// Puts a taken branch into the ring, and samples every `period` of them.
#[inline(always)]
fn push(v: &mut Vcpu, from: u64, to: u64) {
    if v.ring.push(from, to) {
        sample(v, to);
    }
}

/// The first block of a user-mode program whose measurement window is closed: it only
/// sends the program's mappings [its start].
pub extern "C" fn on_tb_exec_first(vcpu_index: c_uint, ud: *mut c_void) {
    if let Some(v) = vcpu(vcpu_index) {
        if v.need_ids {
            first_in_thread(v, ud as u64);
        }
    }
}

#[cold]
#[inline(never)]
fn first_in_thread(v: &mut Vcpu, start: u64) {
    refresh_ids(v);
    guest_maps::at_first_block(v, start);
}

#[cold]
#[inline(never)]
fn sample(v: &mut Vcpu, ip: u64) {
    stream_encode::sample(
        &mut v.buf,
        now_ns(),
        v.pid,
        v.tid,
        ip,
        v.ring.period(),
        v.ring.newest_first(),
    );
    maybe_flush(&mut v.buf);
}

/// The slow path: blocks with LOCK prefixes or addresses that do not pack, and every
/// block when counting (`COUNTING`: instructions, cache and TLB models, branches by kind).
pub extern "C" fn on_tb_exec_desc<const COUNTING: bool>(vcpu_index: c_uint, ud: *mut c_void) {
    // SAFETY: this callback is registered only by `translate::desc_cb`, with the address
    // of the block's descriptor as `udata`.
    let d = unsafe { desc_of_udata(ud as u64) };
    let v = match vcpu(vcpu_index) {
        Some(v) => v,
        None => return,
    };
    if COUNTING {
        count_block(v, d);
    }
    let w = std::mem::replace(&mut v.prev, d.leave);
    if v.need_ids {
        first_in_thread(v, d.start);
    }
    // SAFETY: `w` was `v.prev`, which only ever holds words this plugin made.
    if unsafe { lock_restart(w, d) } {
        return;
    }
    // SAFETY: as above.
    let b = match unsafe { decode(w, v.system) } {
        Some(b) => b,
        None => return,
    };
    let taken = d.start != b.cmp;
    if COUNTING {
        let kf = is_kernel(b.from) as usize;
        v.counts.cond[kf] += b.cond as u64;
        v.counts.taken[kf] += taken as u64;
    }
    if taken && side_kept(v.filter, b.from) && side_kept(v.filter, d.start) {
        push(v, b.from, d.start);
    }
}

/// Instructions, and L1i and iTLB accesses and misses, of one executed block.
fn count_block(v: &mut Vcpu, tb: &Desc) {
    let k = is_kernel(tb.start) as usize;
    v.counts.insns[k] += tb.n_insns as u64;
    let (n, miss) = v.l1i.access_range(tb.start, tb.end);
    v.counts.l1i_access[k] += n;
    v.counts.l1i_miss[k] += miss;
    let (n, miss) = v.itlb.access_range(tb.start, tb.end);
    v.counts.itlb_access[k] += n;
    v.counts.itlb_miss[k] += miss;
}
