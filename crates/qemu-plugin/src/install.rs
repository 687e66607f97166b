//! The entry point QEMU calls when it loads the plugin: read the arguments, open the
//! stream and write its header, set up vCPU 0, register the callbacks.

use super::config::{self, Config};
use super::libc_api::{getpid, now_ns};
use super::lifecycle::{self, ROOT_PID};
use super::qemu_api::{outs, qemu_info_t, qemu_plugin_id_t, InstallArgs, PluginId};
use super::stream_format::Header;
use super::stream_write;
use super::syscalls;
use super::translate;
use super::vcpu::init_vcpu0;
use super::window;
use std::ffi::{c_char, c_int};
use std::sync::atomic::Ordering::Relaxed;

/// # Safety
/// Called by QEMU, as the plugin API defines it: `info` null or valid, `argv` holding
/// `argc` NUL-terminated strings, for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn qemu_plugin_install(
    id: qemu_plugin_id_t,
    info: *const qemu_info_t,
    argc: c_int,
    argv: *mut *mut c_char,
) -> c_int {
    // SAFETY: QEMU's arguments, valid during this call (the function's contract); the
    // argument bytes are used only within it (`Config` copies what it keeps).
    let a = unsafe { InstallArgs::read(info, argc, argv as *const *const c_char) };
    let system = a.system;
    let (c, out) = match Config::parse(system, a.target, &a.args) {
        Ok(x) => x,
        Err(msg) => {
            outs(&msg);
            return 1;
        }
    };
    if !stream_write::open(&out) {
        outs("vlbr: cannot open the output stream\n");
        return 1;
    }
    let root = if system { -1 } else { getpid() };
    ROOT_PID.store(root, Relaxed);
    let mut hdr = Vec::new();
    Header {
        period: c.period,
        depth: c.depth as u32,
        system,
        filter: c.filter as u32,
        root_pid: root,
        start_ns: now_ns(),
    }
    .encode(&mut hdr);
    config::set(c);
    stream_write::flush(&mut hdr);
    // SAFETY: once, here, before any callback is registered.
    unsafe { init_vcpu0() };
    window::init(id, register_callbacks);
    register_callbacks(PluginId::from_install(id));
    0
}

/// Every callback the plugin runs on: at install, and again after each reset the
/// measurement window asks for (`window.rs`, which is handed this function because it
/// sits below this file), which unregisters them all.
pub fn register_callbacks(id: PluginId) {
    id.on_tb_trans(translate::on_tb_trans);
    id.on_vcpu_init(lifecycle::on_vcpu_init);
    id.on_vcpu_exit(lifecycle::on_vcpu_exit);
    if !config::cfg().system {
        id.on_syscall(syscalls::on_syscall);
        id.on_syscall_ret(syscalls::on_syscall_ret);
    }
    id.on_exit(lifecycle::on_exit);
}
