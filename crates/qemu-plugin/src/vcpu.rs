//! The state of each vCPU, and how callbacks find it.
//!
//! QEMU runs one vCPU's callbacks on one thread at a time and never nests them, so a
//! vCPU's state is that thread's alone while a callback runs: callbacks get it as
//! `&'static mut Vcpu` (it is never freed). The few places that touch other vCPUs' state
//! (a forked child, the exit, `execve`) say why that is sound, or where it is not.

use super::cache_model::{Itlb, Lru};
use super::config::{cfg, Guest};
use super::libc_api;
use super::ring::Ring;
use super::stream_encode;
use super::stream_format::{kernel_text_range, Counts};
use super::stream_write::{flush, new_buffer};
use super::word::THREAD_START;
use std::ffi::c_uint;
use std::mem::MaybeUninit;
use std::ptr::{addr_of_mut, null_mut};
use std::sync::atomic::{AtomicPtr, Ordering::*};
use std::sync::Mutex;

#[repr(C, align(64))]
pub struct Vcpu {
    // Hot: touched for every executed block (first cache line).
    /// The word the previous block left (`word.rs`).
    pub prev: u64,
    pub need_ids: bool,
    pub system: bool,
    pub filter: u8,
    pub ring: Ring,
    // Cold.
    pub pid: i32,
    pub tid: i32,
    pub buf: Vec<u8>,
    pub counts: Counts,
    pub l1i: Lru,
    pub itlb: Itlb,
    /// mmap arguments between the syscall callback and its return.
    pub mmap_args: Option<(u64, u64, u64, u64, u64)>,
}

const MAX_VCPUS: usize = 4096;
#[allow(clippy::declare_interior_mutable_const)]
const NO_VCPU: AtomicPtr<Vcpu> = AtomicPtr::new(null_mut());
static VCPUS: [AtomicPtr<Vcpu>; MAX_VCPUS] = [NO_VCPU; MAX_VCPUS];
/// The state of vCPU 0 (`VCPUS[0]` points here), written at install.
static mut VCPU0: MaybeUninit<Vcpu> = MaybeUninit::uninit();
/// Counters of vCPUs that have exited, for this process.
pub static DONE_COUNTS: Mutex<Counts> = Mutex::new(Counts::ZERO);

pub fn new_vcpu() -> Box<Vcpu> {
    let c = cfg();
    Box::new(Vcpu {
        prev: THREAD_START,
        need_ids: true,
        system: c.system,
        filter: c.filter,
        ring: Ring::new(c.depth, c.period),
        pid: 0,
        tid: 0,
        buf: new_buffer(),
        counts: Counts::default(),
        l1i: Lru::new(c.l1i_size / c.l1i_line.max(1), c.l1i_ways, c.l1i_line),
        itlb: Itlb::new(
            c.itlb_entries as u64,
            c.itlb_page,
            c.itlb_kernel_page,
            kernel_text_range(c.guest == Guest::Aarch64),
        ),
        mmap_args: None,
    })
}

/// Sets up vCPU 0's state.
///
/// # Safety
/// Called once, at install, before any callback is registered (nothing else can be
/// using `VCPU0` then).
pub unsafe fn init_vcpu0() {
    let v0 = addr_of_mut!(VCPU0).cast::<Vcpu>();
    // SAFETY: no one else uses `VCPU0` yet (the caller's contract); `v0` is valid for
    // writes and aligned (a static of the type).
    unsafe { v0.write(*new_vcpu()) };
    VCPUS[0].store(v0, Release);
}

/// vCPU 0's state, without the index (the fast path of single-threaded programs).
///
/// # Safety
/// The caller runs in a callback of vCPU 0, and holds no other reference to its state.
#[inline(always)]
pub unsafe fn vcpu0() -> &'static mut Vcpu {
    // SAFETY: initialised by `init_vcpu0` before any callback runs; only vCPU 0's thread
    // uses it, one callback at a time (the caller's contract).
    unsafe { &mut *addr_of_mut!(VCPU0).cast::<Vcpu>() }
}

/// The state of vCPU `i`, created at its first use.
#[inline(always)]
pub fn vcpu(i: c_uint) -> Option<&'static mut Vcpu> {
    let slot = VCPUS.get(i as usize)?;
    let p = slot.load(Acquire);
    if p.is_null() {
        return vcpu_new(slot);
    }
    // SAFETY: a published state is never freed; it is used only by the thread running
    // vCPU `i`'s callbacks, which is this one (module comment).
    Some(unsafe { &mut *p })
}

#[cold]
#[inline(never)]
fn vcpu_new(slot: &AtomicPtr<Vcpu>) -> Option<&'static mut Vcpu> {
    let mut p = slot.load(Acquire);
    if p.is_null() {
        let b = Box::into_raw(new_vcpu());
        match slot.compare_exchange(null_mut(), b, AcqRel, Acquire) {
            Ok(_) => p = b,
            Err(cur) => {
                // SAFETY: `b` came from `Box::into_raw` above and was never published.
                drop(unsafe { Box::from_raw(b) });
                p = cur;
            }
        }
    }
    // SAFETY: as in `vcpu`: published, never freed, this thread's.
    Some(unsafe { &mut *p })
}

/// Calls `f` with the state of every vCPU, in index order; the caller's own vCPU (`me`)
/// through the caller's reference.
///
/// # Safety
/// No other thread uses the other vCPUs' state during the call (callers say why).
pub unsafe fn for_each_vcpu(mut me: Option<&mut Vcpu>, mut f: impl FnMut(&mut Vcpu)) {
    let me_at = me.as_deref().map_or(std::ptr::null(), |v| v as *const Vcpu);
    for slot in VCPUS.iter() {
        let p = slot.load(Acquire);
        if p.is_null() {
            continue;
        }
        if std::ptr::eq(p, me_at) {
            if let Some(m) = me.as_deref_mut() {
                f(m);
            }
        } else {
            // SAFETY: published and never freed; not `me`, so not aliased by the caller's
            // reference; no other thread uses it (the caller's contract).
            f(unsafe { &mut *p });
        }
    }
}

/// Notes this thread's pid and tid on first use of a vCPU (a THREAD record when they
/// changed).
pub fn refresh_ids(v: &mut Vcpu) {
    v.need_ids = false;
    if cfg().system {
        v.pid = -1;
        v.tid = -1;
        return;
    }
    let (pid, tid) = (libc_api::getpid(), libc_api::gettid());
    if (pid, tid) != (v.pid, v.tid) {
        v.pid = pid;
        v.tid = tid;
        stream_encode::thread(&mut v.buf, libc_api::now_ns(), pid, tid);
        flush(&mut v.buf);
    }
}
