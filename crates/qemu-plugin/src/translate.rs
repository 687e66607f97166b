//! When QEMU translates a block: classify its last instruction, decide the word it leaves
//! (`word.rs`) or give it a descriptor (`desc.rs`), and register the execution callback
//! of its kind (`exec.rs`). Everything that can be decided once per block is decided
//! here, so that the callback run for every execution does as little as possible.

use super::classify::{can_branch, classify, K_COND, K_NONE};
use super::classify_a64::classify_a64;
use super::config::{cfg, Guest};
use super::desc::{alloc_desc, Desc};
use super::exec::{
    on_tb_exec_desc, on_tb_exec_fast, on_tb_exec_first, FAST_END_NONE, FAST_PACKED,
    FAST_PACKED_SELF, FAST_SILENT,
};
use super::filter::side_kept;
use super::guest_maps;
use super::qemu_api::{qemu_plugin_id_t, qemu_plugin_tb, Tb, VcpuUdataCb};
use super::stream_format::{kernel_text_range, marker_of};
use super::window;
use super::word::{pack, NO_BRANCH};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The lowest kernel-text address of a translated block (system mode), boot included:
/// the recorder places the kernel (its KASLR shift) from it.
static LOWEST_KERNEL_TEXT: AtomicU64 = AtomicU64::new(u64::MAX);

/// The lowest kernel-text address the guest executed, if any.
pub fn lowest_kernel_text() -> Option<u64> {
    let a = LOWEST_KERNEL_TEXT.load(Relaxed);
    (a != u64::MAX).then_some(a)
}

pub extern "C" fn on_tb_trans(_id: qemu_plugin_id_t, tb: *mut qemu_plugin_tb) {
    // SAFETY: QEMU passes the block it is translating; `tb` is used only in this call.
    let tb = unsafe { Tb::from_callback(tb) };
    let n = tb.n_insns();
    if n == 0 {
        return;
    }
    let start = tb.vaddr();
    let c = cfg();
    if c.system && kernel_text_range(c.guest == Guest::Aarch64).contains(&start) {
        LOWEST_KERNEL_TEXT.fetch_min(start, Relaxed);
    }
    if c.window && !window::is_open() {
        // Only the markers are instrumented while the window is closed, and in user
        // mode the very first block, which sends the program's mappings.
        let first = !c.system && guest_maps::guest_base_unknown();
        for (i, insn) in tb.insns().enumerate() {
            if let Some(m) = marker_of(insn.bytes()) {
                window::watch(&insn, m);
            }
            if first && i == 0 && insn.haddr() != 0 {
                guest_maps::set_guest_base(insn.haddr(), insn.vaddr());
            }
        }
        if first {
            tb.on_exec(on_tb_exec_first, start);
        }
        return;
    }
    let mut has_lock = false;
    let mut first_is_lock = false;
    let mut last = start;
    let mut end = start;
    let mut kind = K_NONE;
    for (i, insn) in tb.insns().enumerate() {
        let bytes = insn.bytes();
        let size = bytes.len();
        let va = insn.vaddr();
        let (k, lock) = match c.guest {
            Guest::X86_64 => classify(&bytes[..size.min(16)]),
            // A64 has no LOCK prefix: its atomics are single instructions or exclusive
            // load/store loops QEMU translates like any other code.
            Guest::Aarch64 => (classify_a64(bytes), false),
        };
        if c.window {
            if let Some(m) = marker_of(bytes) {
                window::watch(&insn, m);
            }
        }
        if lock {
            has_lock = true;
            if i == 0 {
                first_is_lock = true;
            }
        }
        if i == 0 && guest_maps::guest_base_unknown() && !c.system {
            let h = insn.haddr();
            if h != 0 {
                guest_maps::set_guest_base(h, va);
            }
        }
        if i == n - 1 {
            last = va;
            end = va + size as u64;
            kind = k;
        }
    }
    let branches = can_branch(kind, c.system);
    let kept = side_kept(c.filter, start);
    // The word a fast callback leaves; None sends the block down the slow path.
    let packed = if c.counters || has_lock {
        None
    } else if branches {
        pack(start, last, end, kind)
    } else {
        Some(NO_BRANCH)
    };
    let (cb, ud): (VcpuUdataCb, u64) = match packed {
        None => desc_cb(start, last, end, n, kind, has_lock, first_is_lock),
        Some(_) if !kept => (on_tb_exec_fast::<FAST_SILENT>, 0),
        Some(NO_BRANCH) => (on_tb_exec_fast::<FAST_END_NONE>, start),
        Some(w) if start == last && kind != K_COND => (on_tb_exec_fast::<FAST_PACKED_SELF>, w),
        Some(w) => (on_tb_exec_fast::<FAST_PACKED>, w),
    };
    tb.on_exec(cb, ud);
}

/// The callback and descriptor of a block that takes the slow path.
fn desc_cb(
    start: u64,
    last: u64,
    end: u64,
    n: usize,
    kind: u8,
    has_lock: bool,
    first_is_lock: bool,
) -> (VcpuUdataCb, u64) {
    let c = cfg();
    // The counting callback filters at run time; the other leaves no branch out of a
    // block the filter drops.
    let branches = can_branch(kind, c.system) && (c.counters || side_kept(c.filter, start));
    let d = alloc_desc(
        Desc {
            start,
            last,
            end,
            leave: NO_BRANCH,
            n_insns: n as u32,
            kind,
            has_lock,
            first_is_lock,
        },
        |own| match pack(start, last, end, kind) {
            _ if !branches => NO_BRANCH,
            Some(w) if !has_lock => w,
            _ => own.get(),
        },
    );
    let cb: VcpuUdataCb = if c.counters {
        on_tb_exec_desc::<true>
    } else {
        on_tb_exec_desc::<false>
    };
    (cb, d as *const Desc as u64)
}
