//! The QEMU side of the plugin: the part of `qemu-plugin.h` it uses (QEMU 7.2, plugin API
//! version 1), declared by hand so that the plugin needs no crates, and thin safe wrappers
//! around it, so that the rest of the plugin calls QEMU without `unsafe`.
//!
//! What the wrappers rely on (the plugin API's contract): a block handed to the
//! translation callback, and its instructions and their bytes, are valid until that
//! callback returns; registrations name the id QEMU gave `qemu_plugin_install`; callbacks
//! are `extern "C"` functions of the declared signatures, and `udata` is passed back
//! unread.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::marker::PhantomData;

pub type qemu_plugin_id_t = u64;

#[repr(C)]
pub struct qemu_info_t {
    target_name: *const c_char,
    version_min: c_int,
    version_cur: c_int,
    system_emulation: bool,
    smp_vcpus: c_int,
    max_vcpus: c_int,
}

#[repr(C)]
pub struct qemu_plugin_tb {
    _p: [u8; 0],
}
#[repr(C)]
pub struct qemu_plugin_insn {
    _p: [u8; 0],
}

const QEMU_PLUGIN_CB_NO_REGS: c_int = 0;

pub type TbTransCb = extern "C" fn(qemu_plugin_id_t, *mut qemu_plugin_tb);
pub type VcpuUdataCb = extern "C" fn(c_uint, *mut c_void);
pub type VcpuSimpleCb = extern "C" fn(qemu_plugin_id_t, c_uint);
pub type UdataCb = extern "C" fn(qemu_plugin_id_t, *mut c_void);
pub type SyscallCb =
    extern "C" fn(qemu_plugin_id_t, c_uint, i64, u64, u64, u64, u64, u64, u64, u64, u64);
pub type SyscallRetCb = extern "C" fn(qemu_plugin_id_t, c_uint, i64, i64);
pub type SimpleCb = extern "C" fn(qemu_plugin_id_t);

extern "C" {
    fn qemu_plugin_register_vcpu_tb_trans_cb(id: qemu_plugin_id_t, cb: TbTransCb);
    fn qemu_plugin_register_vcpu_tb_exec_cb(
        tb: *mut qemu_plugin_tb,
        cb: VcpuUdataCb,
        flags: c_int,
        userdata: *mut c_void,
    );
    fn qemu_plugin_register_vcpu_init_cb(id: qemu_plugin_id_t, cb: VcpuSimpleCb);
    fn qemu_plugin_register_vcpu_exit_cb(id: qemu_plugin_id_t, cb: VcpuSimpleCb);
    fn qemu_plugin_register_vcpu_syscall_cb(id: qemu_plugin_id_t, cb: SyscallCb);
    fn qemu_plugin_register_vcpu_syscall_ret_cb(id: qemu_plugin_id_t, cb: SyscallRetCb);
    fn qemu_plugin_register_atexit_cb(id: qemu_plugin_id_t, cb: UdataCb, userdata: *mut c_void);
    fn qemu_plugin_register_vcpu_insn_exec_cb(
        insn: *mut qemu_plugin_insn,
        cb: VcpuUdataCb,
        flags: c_int,
        userdata: *mut c_void,
    );
    fn qemu_plugin_reset(id: qemu_plugin_id_t, cb: SimpleCb);
    fn qemu_plugin_tb_n_insns(tb: *const qemu_plugin_tb) -> usize;
    fn qemu_plugin_tb_vaddr(tb: *const qemu_plugin_tb) -> u64;
    fn qemu_plugin_tb_get_insn(tb: *const qemu_plugin_tb, idx: usize) -> *mut qemu_plugin_insn;
    fn qemu_plugin_insn_data(insn: *const qemu_plugin_insn) -> *const c_void;
    fn qemu_plugin_insn_size(insn: *const qemu_plugin_insn) -> usize;
    fn qemu_plugin_insn_vaddr(insn: *const qemu_plugin_insn) -> u64;
    fn qemu_plugin_insn_haddr(insn: *const qemu_plugin_insn) -> *mut c_void;
    fn qemu_plugin_outs(s: *const c_char);
}

/// The plugin API version this plugin is written for (QEMU checks it at load).
#[no_mangle]
pub static qemu_plugin_version: c_int = 1;

/// What `qemu_plugin_install` is given, read out: whether QEMU emulates a whole system
/// (else one user-mode process), and the `key=value` arguments.
pub struct InstallArgs<'a> {
    pub system: bool,
    /// QEMU's target name (`x86_64`, `aarch64`): the guest's architecture.
    pub target: &'a [u8],
    pub args: Vec<&'a [u8]>,
}

impl<'a> InstallArgs<'a> {
    /// # Safety
    /// The arguments are those QEMU passed to `qemu_plugin_install`: `info` null or valid,
    /// `argv` holding `argc` NUL-terminated strings, all alive while `'a` lasts (QEMU keeps
    /// them for the duration of the call).
    pub unsafe fn read(
        info: *const qemu_info_t,
        argc: c_int,
        argv: *const *const c_char,
    ) -> InstallArgs<'a> {
        // SAFETY: `info` is null or points to QEMU's `qemu_info_t` (the caller's contract).
        let system = !info.is_null() && unsafe { (*info).system_emulation };
        // SAFETY: as above; QEMU's target name is a static C string (or null).
        let target = if info.is_null() || unsafe { (*info).target_name }.is_null() {
            &b""[..]
        } else {
            unsafe { CStr::from_ptr((*info).target_name) }.to_bytes()
        };
        let args = (0..argc.max(0) as usize)
            // SAFETY: `argv` holds `argc` valid C strings (the caller's contract).
            .map(|i| unsafe { CStr::from_ptr(*argv.add(i)) }.to_bytes())
            .collect();
        InstallArgs {
            system,
            target,
            args,
        }
    }
}

/// The id QEMU gave this plugin at install; what callbacks are registered under.
#[derive(Clone, Copy)]
pub struct PluginId(qemu_plugin_id_t);

// SAFETY (every registration below): QEMU accepts registrations under the id it handed to
// `qemu_plugin_install`, which is the only way to get a `PluginId`; each callback is a
// `'static` function whose type is the C signature qemu-plugin.h declares for it.
impl PluginId {
    pub fn from_install(id: qemu_plugin_id_t) -> PluginId {
        PluginId(id)
    }
    pub fn on_tb_trans(self, cb: TbTransCb) {
        // SAFETY: see above.
        unsafe { qemu_plugin_register_vcpu_tb_trans_cb(self.0, cb) }
    }
    pub fn on_vcpu_init(self, cb: VcpuSimpleCb) {
        // SAFETY: see above.
        unsafe { qemu_plugin_register_vcpu_init_cb(self.0, cb) }
    }
    pub fn on_vcpu_exit(self, cb: VcpuSimpleCb) {
        // SAFETY: see above.
        unsafe { qemu_plugin_register_vcpu_exit_cb(self.0, cb) }
    }
    pub fn on_syscall(self, cb: SyscallCb) {
        // SAFETY: see above.
        unsafe { qemu_plugin_register_vcpu_syscall_cb(self.0, cb) }
    }
    pub fn on_syscall_ret(self, cb: SyscallRetCb) {
        // SAFETY: see above.
        unsafe { qemu_plugin_register_vcpu_syscall_ret_cb(self.0, cb) }
    }
    /// Unregisters every callback and drops every translated block (so that no block
    /// keeps the old instrumentation), then calls `cb`, which registers what should run
    /// from now on. QEMU does this at a safe point, with every vCPU stopped; a second
    /// request while one is under way is ignored.
    pub fn reset(self, cb: SimpleCb) {
        // SAFETY: see above.
        unsafe { qemu_plugin_reset(self.0, cb) }
    }
    /// `cb` runs once when the emulation ends (its `udata` is null).
    pub fn on_exit(self, cb: UdataCb) {
        // SAFETY: see above; the null `udata` is passed back unread.
        unsafe { qemu_plugin_register_atexit_cb(self.0, cb, std::ptr::null_mut()) }
    }
}

/// A block QEMU is translating; it lives only as long as the translation callback.
pub struct Tb<'a> {
    raw: *mut qemu_plugin_tb,
    _in_callback: PhantomData<&'a qemu_plugin_tb>,
}

impl<'a> Tb<'a> {
    /// # Safety
    /// `raw` is the block QEMU passed to the running translation callback, and the `Tb`
    /// does not outlive that callback.
    pub unsafe fn from_callback(raw: *mut qemu_plugin_tb) -> Tb<'a> {
        Tb {
            raw,
            _in_callback: PhantomData,
        }
    }

    pub fn n_insns(&self) -> usize {
        // SAFETY: `raw` is valid during the callback (`from_callback`).
        unsafe { qemu_plugin_tb_n_insns(self.raw) }
    }

    /// The guest address of the block's first instruction.
    pub fn vaddr(&self) -> u64 {
        // SAFETY: as in `n_insns`.
        unsafe { qemu_plugin_tb_vaddr(self.raw) }
    }

    /// The block's instructions, in order.
    pub fn insns(&self) -> impl Iterator<Item = Insn<'a>> + '_ {
        (0..self.n_insns()).filter_map(move |i| {
            // SAFETY: `raw` is valid during the callback and `i` is below the count; QEMU
            // answers null only for an index past the end, which is filtered out anyway.
            let p = unsafe { qemu_plugin_tb_get_insn(self.raw, i) };
            (!p.is_null()).then_some(Insn {
                raw: p,
                _in_callback: PhantomData,
            })
        })
    }

    /// Has QEMU call `cb(vcpu_index, udata)` every time the block runs.
    pub fn on_exec(&self, cb: VcpuUdataCb, udata: u64) {
        // SAFETY: `raw` is valid during the callback; `cb` has the declared signature;
        // `udata` is an opaque word QEMU hands back to `cb` unread.
        unsafe {
            qemu_plugin_register_vcpu_tb_exec_cb(
                self.raw,
                cb,
                QEMU_PLUGIN_CB_NO_REGS,
                udata as *mut c_void,
            )
        }
    }
}

/// One instruction of a [`Tb`], valid as long as the translation callback.
pub struct Insn<'a> {
    raw: *mut qemu_plugin_insn,
    _in_callback: PhantomData<&'a qemu_plugin_insn>,
}

impl<'a> Insn<'a> {
    /// The instruction's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        // SAFETY: `raw` is a non-null instruction of the block being translated; QEMU
        // keeps its `size` bytes of data until the translation callback returns, which
        // `'a` does not outlast.
        unsafe {
            let size = qemu_plugin_insn_size(self.raw);
            let data = qemu_plugin_insn_data(self.raw) as *const u8;
            std::slice::from_raw_parts(data, size)
        }
    }
    pub fn vaddr(&self) -> u64 {
        // SAFETY: `raw` is a valid instruction during the callback.
        unsafe { qemu_plugin_insn_vaddr(self.raw) }
    }
    /// Has QEMU call `cb(vcpu_index, udata)` every time the instruction runs (before it).
    pub fn on_exec(&self, cb: VcpuUdataCb, udata: u64) {
        // SAFETY: `raw` is an instruction of the block being translated, valid during the
        // callback; `cb` has the declared signature; `udata` is handed back unread.
        unsafe {
            qemu_plugin_register_vcpu_insn_exec_cb(
                self.raw,
                cb,
                QEMU_PLUGIN_CB_NO_REGS,
                udata as *mut c_void,
            )
        }
    }
    /// The host address of the instruction's code (user mode), 0 where QEMU has none.
    pub fn haddr(&self) -> u64 {
        // SAFETY: as in `vaddr`.
        unsafe { qemu_plugin_insn_haddr(self.raw) as u64 }
    }
}

/// Prints a message on QEMU's log (stderr unless `-D` says otherwise).
pub fn outs(s: &str) {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    // SAFETY: `v` is NUL-terminated and outlives the call; QEMU copies the text.
    unsafe { qemu_plugin_outs(v.as_ptr() as *const c_char) };
}
