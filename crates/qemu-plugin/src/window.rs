//! The measurement window (`window=markers`): blocks are instrumented only between the
//! guest's start and stop markers (`stream_format::MARKER_START` / `MARKER_STOP`), so that
//! samples and counters cover the workload's measured phase and not the boot or the
//! set-up around it.
//!
//! While the window is closed, the translation callback instruments nothing but the
//! markers themselves, and the guest runs at the speed of plain QEMU. A marker asks QEMU
//! to reset the plugin (`PluginId::reset`): every translated block is dropped and, at a
//! safe point with every vCPU stopped, `on_reset` registers the callbacks again for the
//! new state, so the hot path (`exec.rs`) never tests whether the window is open.

use super::libc_api::now_ns;
use super::qemu_api::{qemu_plugin_id_t, Insn, PluginId};
use super::stream_encode;
use super::stream_format::Marker;
use super::stream_write::flush;
use super::vcpu::for_each_vcpu;
use super::word::THREAD_START;
use std::ffi::{c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::OnceLock;

/// The state the last marker asked for.
static WANTED_OPEN: AtomicBool = AtomicBool::new(false);
/// The state the registered callbacks implement (what translation reads).
static OPEN: AtomicBool = AtomicBool::new(false);
/// The plugin's id, for the reset a marker asks for.
static ID: AtomicU64 = AtomicU64::new(0);
/// What registers every callback again after a reset: given by the entry point, which
/// sits above this file (it registers the translation callback, which uses this file).
static REGISTER: OnceLock<fn(PluginId)> = OnceLock::new();

/// Window mode starts closed: nothing is instrumented until the first start marker.
/// `register` registers every callback; a reset runs it again.
pub fn init(id: qemu_plugin_id_t, register: fn(PluginId)) {
    ID.store(id, Relaxed);
    let _ = REGISTER.set(register);
}

/// Whether blocks are instrumented now.
pub fn is_open() -> bool {
    OPEN.load(Acquire)
}

/// Has a marker instruction call back when it runs.
pub fn watch(insn: &Insn<'_>, m: Marker) {
    match m {
        Marker::Start => insn.on_exec(on_marker::<true>, 0),
        Marker::Stop => insn.on_exec(on_marker::<false>, 0),
    }
}

extern "C" fn on_marker<const OPENS: bool>(_vcpu: c_uint, _ud: *mut c_void) {
    WANTED_OPEN.store(OPENS, Release);
    if OPEN.load(Acquire) != OPENS {
        PluginId::from_install(ID.load(Relaxed)).reset(on_reset);
    }
}

/// QEMU has dropped every block and unregistered every callback; every vCPU is stopped.
extern "C" fn on_reset(id: qemu_plugin_id_t) {
    let open = WANTED_OPEN.load(Acquire);
    if open != OPEN.load(Acquire) {
        // What was recorded before the change goes first, then the change.
        // SAFETY: QEMU runs a reset's callback with every vCPU stopped, so no other
        // thread uses their state.
        unsafe {
            for_each_vcpu(None, |v| {
                flush(&mut v.buf);
                if open {
                    // No branch from the block before the window into it, and no stale
                    // entries from the previous window in the first sample's stack.
                    v.prev = THREAD_START;
                    v.ring.restart();
                }
            })
        };
        let mut rec = Vec::new();
        stream_encode::window(&mut rec, now_ns(), open);
        flush(&mut rec);
        OPEN.store(open, Release);
    }
    if let Some(register) = REGISTER.get() {
        register(PluginId::from_install(id));
    }
}
