//! Starts and ends: a vCPU starting (a new guest thread) or exiting, and the end of the
//! emulation, when the rest of the stream is written.

use super::config::cfg;
use super::libc_api::{getpid, getppid, gettid, now_ns};
use super::qemu_api::qemu_plugin_id_t;
use super::stream_encode;
use super::stream_format::Counts;
use super::stream_write::{flush, write_failed};
use super::translate;
use super::vcpu::{for_each_vcpu, vcpu, Vcpu, DONE_COUNTS};
use super::word::THREAD_START;
use std::ffi::{c_uint, c_void};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering::Relaxed};

/// The process the recording started with (-1 in system mode); only its exit ends the
/// stream.
pub static ROOT_PID: AtomicI32 = AtomicI32::new(0);

/// The guest threads this process started, itself included (the vCPUs in system mode):
/// qemu-user gives each guest thread a vCPU, and each vCPU start is counted (an index
/// reused by a later thread counts again). The counters record carries it, because the
/// threads' interleaving makes a multi-threaded program's counts vary from run to run.
pub static THREADS: AtomicU32 = AtomicU32::new(0);

pub extern "C" fn on_vcpu_init(_id: qemu_plugin_id_t, i: c_uint) {
    THREADS.fetch_add(1, Relaxed);
    if let Some(v) = vcpu(i) {
        // A vCPU index can be reused by a new guest thread: start it afresh.
        v.prev = THREAD_START;
        v.ring.restart();
        v.need_ids = true;
    }
}

pub extern "C" fn on_vcpu_exit(_id: qemu_plugin_id_t, i: c_uint) {
    if let Some(v) = vcpu(i) {
        flush(&mut v.buf);
        if let Ok(mut d) = DONE_COUNTS.lock() {
            d.add(&v.counts);
        }
        v.counts = Counts::default();
    }
}

/// This process's counters so far: those of exited vCPUs and of every live one.
///
/// # Safety
/// As for `for_each_vcpu`: no other thread uses the other vCPUs' state meanwhile.
pub unsafe fn total_counts(me: Option<&mut Vcpu>) -> Counts {
    let mut total = DONE_COUNTS.lock().map(|d| *d).unwrap_or_default();
    // SAFETY: the caller's contract.
    unsafe { for_each_vcpu(me, |o| total.add(&o.counts)) };
    total
}

/// Appends this process's COUNTERS record.
pub fn counters_record(buf: &mut Vec<u8>, total: &Counts) {
    let pid = if cfg().system { -1 } else { getpid() };
    // At least the thread that writes this, should QEMU have started vCPU 0 before the
    // plugin was loaded.
    let threads = THREADS.load(Relaxed).max(1);
    stream_encode::counters(buf, pid, threads, &total.by_side());
}

/// Writes out every vCPU's buffer, in index order.
///
/// # Safety
/// As for `for_each_vcpu`.
pub unsafe fn flush_all(me: Option<&mut Vcpu>) {
    // SAFETY: the caller's contract.
    unsafe { for_each_vcpu(me, |o| flush(&mut o.buf)) };
}

pub extern "C" fn on_exit(_id: qemu_plugin_id_t, _ud: *mut c_void) {
    let mut tail = Vec::new();
    // No vCPU callback runs any more: in user mode QEMU (qemu_plugin_user_exit)
    // unregisters every callback but this one and flushes the translated blocks inside an
    // exclusive section before calling it (a syscall callback already under way on
    // another thread is the one window it leaves); in system mode the vCPUs have stopped.
    if cfg().counters {
        // SAFETY: no other thread uses the vCPUs' state any more (above).
        let total = unsafe { total_counts(None) };
        counters_record(&mut tail, &total);
    }
    // SAFETY: as above.
    unsafe { flush_all(None) };
    let (pid, ppid, tid) = if cfg().system {
        (-1, -1, -1)
    } else {
        (getpid(), getppid(), gettid())
    };
    if cfg().system {
        if let Some(lowest) = translate::lowest_kernel_text() {
            stream_encode::kernel_text(&mut tail, lowest);
        }
    }
    stream_encode::exit(&mut tail, now_ns(), pid, ppid, tid, write_failed());
    if pid == ROOT_PID.load(Relaxed) || cfg().system {
        stream_encode::end(&mut tail, pid);
    }
    flush(&mut tail);
}
