//! The guest's system calls that matter to the recording (user mode only): `mmap` of
//! code, `fork` and its kin, `execve`, and `rt_sigreturn`.

use super::config::{cfg, Guest};
use super::guest_maps;
use super::libc_api::{getpid, gettid, now_ns};
use super::lifecycle::{counters_record, flush_all, total_counts, THREADS};
use super::qemu_api::qemu_plugin_id_t;
use super::stream_encode;
use super::stream_format::Counts;
use super::stream_write::flush;
use super::vcpu::{for_each_vcpu, vcpu, DONE_COUNTS};
use super::word::{NO_BRANCH, THREAD_START};
use std::ffi::c_uint;

/// The system-call numbers the recording watches, per guest architecture (QEMU reports
/// the guest's own numbers). -1: the architecture has no such call.
struct Numbers {
    mmap: i64,
    rt_sigreturn: i64,
    clone: i64,
    fork: i64,
    vfork: i64,
    execve: i64,
    execveat: i64,
    clone3: i64,
}

/// arch/x86/entry/syscalls/syscall_64.tbl
const X86_64: Numbers = Numbers {
    mmap: 9,
    rt_sigreturn: 15,
    clone: 56,
    fork: 57,
    vfork: 58,
    execve: 59,
    execveat: 322,
    clone3: 435,
};

/// include/uapi/asm-generic/unistd.h, which arm64 uses: no fork or vfork (libc calls
/// clone).
const AARCH64: Numbers = Numbers {
    mmap: 222,
    rt_sigreturn: 139,
    clone: 220,
    fork: -1,
    vfork: -1,
    execve: 221,
    execveat: 281,
    clone3: 435,
};

fn numbers() -> &'static Numbers {
    match cfg().guest {
        Guest::X86_64 => &X86_64,
        Guest::Aarch64 => &AARCH64,
    }
}

#[allow(clippy::too_many_arguments)]
pub extern "C" fn on_syscall(
    _id: qemu_plugin_id_t,
    i: c_uint,
    num: i64,
    _a1: u64,
    a2: u64,
    a3: u64,
    a4: u64,
    a5: u64,
    a6: u64,
    _a7: u64,
    _a8: u64,
) {
    let v = match vcpu(i) {
        Some(v) => v,
        None => return,
    };
    let nr = numbers();
    match num {
        _ if num == nr.mmap => v.mmap_args = Some((a2, a3, a4, a5, a6)),
        _ if num == nr.execve || num == nr.execveat => {
            // On success this process image is gone (qemu-user runs the new program
            // natively): write out everything now.
            stream_encode::exec(&mut v.buf, now_ns(), v.pid, v.tid);
            // Sound only while no other guest thread runs: the kernel ends the others only
            // once execve succeeds, so a multi-threaded guest that execs while other
            // threads run races with them here (their counters and buffers). Known and
            // kept as it was; the usual exec (one thread, or the others waiting) is sound.
            if cfg().counters {
                // SAFETY: see above.
                let total = unsafe { total_counts(Some(&mut *v)) };
                counters_record(&mut v.buf, &total);
            }
            // SAFETY: see above.
            unsafe { flush_all(Some(v)) };
        }
        _ if num == nr.rt_sigreturn => v.prev = if v.need_ids { THREAD_START } else { NO_BRANCH },
        _ => {}
    }
}

pub extern "C" fn on_syscall_ret(_id: qemu_plugin_id_t, i: c_uint, num: i64, ret: i64) {
    let v = match vcpu(i) {
        Some(v) => v,
        None => return,
    };
    let nr = numbers();
    match num {
        _ if num == nr.mmap => {
            let (len, prot, flags, fd, off) = match v.mmap_args.take() {
                Some(a) => a,
                None => return,
            };
            if !(-4095..0).contains(&ret) {
                guest_maps::guest_mmap(v, ret as u64, len, prot, flags, fd, off);
            }
        }
        _ if ret == 0 && [nr.clone, nr.fork, nr.vfork, nr.clone3].contains(&num) => {
            // In a new child process (new threads do not return through here in
            // qemu-user). Its copy of the parent's unwritten records belongs to the
            // parent: drop them, and start its own counts.
            let me = getpid();
            if me == v.pid {
                return;
            }
            // SAFETY: this is a freshly forked process, and fork copies only the calling
            // thread: no other thread exists to use the other vCPUs' state.
            unsafe {
                for_each_vcpu(Some(&mut *v), |o| {
                    o.buf.clear();
                    o.counts = Counts::default();
                })
            };
            if let Ok(mut d) = DONE_COUNTS.lock() {
                *d = Counts::default();
            }
            // The child runs only the thread that forked; the parent's other threads stay
            // the parent's.
            THREADS.store(1, std::sync::atomic::Ordering::Relaxed);
            let ppid = v.pid;
            v.pid = me;
            v.tid = gettid();
            stream_encode::fork(&mut v.buf, now_ns(), me, ppid, v.tid, ppid);
            flush(&mut v.buf);
        }
        _ => {}
    }
}
