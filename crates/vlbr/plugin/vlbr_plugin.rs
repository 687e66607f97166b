//! The vLBR QEMU TCG plugin: emulated last-branch records and counters.
//!
//! Built by `crates/vlbr/build.rs` as a standalone `cdylib` with plain `rustc` (no crates),
//! embedded in the `kfdo-vlbr` library and written to a temporary file at record time.
//! It is loaded by QEMU 7.2 (`-plugin lib.so,key=value,...`, plugin API version 1): the part
//! of `qemu-plugin.h` it uses is declared below.
//!
//! What it does, per executed translation block (TB):
//! - Taken-branch detection. The previous TB's last instruction is classified when the TB is
//!   translated (conditional, direct/indirect jump or call, return, far transfer, or not a
//!   branch). When the next TB starts, a branch of the previous TB was *taken* if it is an
//!   unconditional transfer (whatever its target, so `call next; pop` counts), or a
//!   conditional one whose successor is not its fall-through. A TB that ends without a
//!   branch (page boundary, size limit, `syscall`, a `rep` string instruction that QEMU loops
//!   on itself) records nothing: hardware LBR has no entry for those either.
//! - A ring of the last N (default 32) taken branches per vCPU; every PERIOD taken branches
//!   a sample (time, pid, tid, ip = target of the sampled branch, the ring newest first).
//! - Optional counters: instructions, taken and conditional branches, L1i and iTLB misses
//!   from a small LRU model, split user / kernel by address (kernel = upper half).
//! - Guest mappings (user mode): the images QEMU loaded itself (program and ELF
//!   interpreter) from the host's /proc/self/maps at the first executed TB, translated by
//!   the guest base (host address of the code - guest address, both known exactly from
//!   the first instruction); libraries from the guest's `mmap` syscalls with PROT_EXEC
//!   (guest and host file descriptors are the same in qemu-user).
//!
//! Output: a little-endian record stream (see `crates/vlbr/src/stream.rs`), appended to the
//! file given as `out=` with whole-record `write(2)` calls on an O_APPEND descriptor, so
//! that forked guest processes can share it.

#![allow(non_camel_case_types, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU64, Ordering::*};
use std::sync::{Mutex, OnceLock};

// ---- the subset of qemu-plugin.h (API version 1) used here -------------------------

type qemu_plugin_id_t = u64;

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

type TbTransCb = extern "C" fn(qemu_plugin_id_t, *mut qemu_plugin_tb);
type VcpuUdataCb = extern "C" fn(c_uint, *mut c_void);
type VcpuSimpleCb = extern "C" fn(qemu_plugin_id_t, c_uint);
type UdataCb = extern "C" fn(qemu_plugin_id_t, *mut c_void);
type SyscallCb =
    extern "C" fn(qemu_plugin_id_t, c_uint, i64, u64, u64, u64, u64, u64, u64, u64, u64);
type SyscallRetCb = extern "C" fn(qemu_plugin_id_t, c_uint, i64, i64);

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
    fn qemu_plugin_tb_n_insns(tb: *const qemu_plugin_tb) -> usize;
    fn qemu_plugin_tb_vaddr(tb: *const qemu_plugin_tb) -> u64;
    fn qemu_plugin_tb_get_insn(tb: *const qemu_plugin_tb, idx: usize) -> *mut qemu_plugin_insn;
    fn qemu_plugin_insn_data(insn: *const qemu_plugin_insn) -> *const c_void;
    fn qemu_plugin_insn_size(insn: *const qemu_plugin_insn) -> usize;
    fn qemu_plugin_insn_vaddr(insn: *const qemu_plugin_insn) -> u64;
    fn qemu_plugin_insn_haddr(insn: *const qemu_plugin_insn) -> *mut c_void;
    fn qemu_plugin_outs(s: *const c_char);
}

#[no_mangle]
pub static qemu_plugin_version: c_int = 1;

// ---- libc, declared here so the plugin needs no crates ---------------------------

extern "C" {
    fn write(fd: c_int, buf: *const c_void, n: usize) -> isize;
    fn open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int;
    fn getpid() -> c_int;
    fn getppid() -> c_int;
    fn gettid() -> c_int;
    fn clock_gettime(clk: c_int, ts: *mut [i64; 2]) -> c_int;
}
const O_WRONLY: c_int = 1;
const O_CREAT: c_int = 0o100;
const O_APPEND: c_int = 0o2000;
const O_CLOEXEC: c_int = 0o2000000;
const CLOCK_MONOTONIC: c_int = 1;

// ---- stream record types (keep in sync with src/stream.rs) ------------------------

const REC_SAMPLE: u32 = 1;
const REC_MMAP: u32 = 2;
const REC_THREAD: u32 = 3;
const REC_FORK: u32 = 4;
const REC_EXIT: u32 = 5;
const REC_COUNTERS: u32 = 6;
const REC_INFO: u32 = 7;
const REC_END: u32 = 8;
const REC_EXEC: u32 = 9;
const STREAM_MAGIC: &[u8; 8] = b"KFDOVLB1";

// ---- branch classification ---------------------------------------------------------

const K_NONE: u8 = 0;
const K_COND: u8 = 1;
const K_JMP: u8 = 2;
const K_CALL: u8 = 3;
const K_RET: u8 = 4;
const K_IND_JMP: u8 = 5;
const K_IND_CALL: u8 = 6;
const K_FAR: u8 = 7; // iret, lret, far call/jmp
const K_SYSCALL: u8 = 8; // syscall, sysenter, int n
const K_SYSRET: u8 = 9; // sysret, sysexit

/// Classifies one x86-64 instruction by its bytes (only control transfers matter).
fn classify(b: &[u8]) -> (u8, bool) {
    let mut i = 0;
    let mut lock = false;
    while i < b.len() {
        match b[i] {
            0xF0 => lock = true,
            0x66 | 0x67 | 0xF2 | 0xF3 | 0x2E | 0x3E | 0x26 | 0x36 | 0x64 | 0x65 => {}
            _ => break,
        }
        i += 1;
    }
    if i < b.len() && (b[i] & 0xF0) == 0x40 {
        i += 1;
    }
    let op = match b.get(i) {
        Some(&o) => o,
        None => return (K_NONE, lock),
    };
    let next = b.get(i + 1).copied().unwrap_or(0);
    let kind = match op {
        0x70..=0x7F | 0xE0..=0xE3 => K_COND,
        0x0F => match next {
            0x80..=0x8F => K_COND,
            0x05 | 0x34 => K_SYSCALL,
            0x07 | 0x35 => K_SYSRET,
            _ => K_NONE,
        },
        0xE8 => K_CALL,
        0xE9 | 0xEB => K_JMP,
        0xEA | 0x9A => K_FAR,
        0xC2 | 0xC3 => K_RET,
        0xCA | 0xCB | 0xCF => K_FAR,
        0xCC | 0xCD | 0xCE => K_SYSCALL,
        0xFF => match (next >> 3) & 7 {
            2 => K_IND_CALL,
            4 => K_IND_JMP,
            3 | 5 => K_FAR,
            _ => K_NONE,
        },
        _ => K_NONE,
    };
    (kind, lock)
}

// ---- configuration -----------------------------------------------------------------

#[derive(Clone)]
struct Config {
    period: u64,
    depth: usize,
    counters: bool,
    system: bool,
    /// 0: all branches, 1: user only, 2: kernel only (by source and target address).
    filter: u8,
    exe: Vec<u8>,
    l1i_size: u64,
    l1i_ways: usize,
    l1i_line: u64,
    itlb_entries: usize,
    itlb_page: u64,
    fd: c_int,
}

static CONFIG: OnceLock<Config> = OnceLock::new();
static FD: AtomicI32 = AtomicI32::new(-1);
static WRITE_FAILED: AtomicBool = AtomicBool::new(false);
static MAPS_DONE: AtomicBool = AtomicBool::new(false);
/// Host address minus guest address of guest code (user mode); u64::MAX until known.
static GUEST_BASE: AtomicU64 = AtomicU64::new(u64::MAX);

fn cfg() -> &'static Config {
    CONFIG.get().expect("vlbr: not configured")
}

const KERNEL_START: u64 = 0xffff_8000_0000_0000;

#[inline]
fn is_kernel(a: u64) -> bool {
    a >= KERNEL_START
}

// ---- per translation block ---------------------------------------------------------
//
// The execution callback runs once per executed TB (about every 5 guest instructions), so
// it must be short and load nothing that is not already in cache. It does branch on
// whether the previous block's branch was taken: the host has just predicted the guest's
// own branch on that outcome, and the measured cost of this branch is lower than that of
// the branch-free update it replaced. So:
//
// - Packed blocks (the common case, without counters): `udata` is the block itself,
//   bits 0..48 its start (sign-extended: kernel addresses fit too), bits 48..60 the offset
//   of its last instruction, bits 60..64 that instruction's size; the kind of the last
//   instruction is a const parameter of the callback (one instantiation per kind).
// - Descriptor blocks (counters on, a block with a LOCK prefix, or one that does not
//   pack): `udata` points to a `Desc` in a contiguous arena.
//
// Either way the callback leaves behind, for the next block, what decides whether the
// branch ending this block was taken (`Vcpu::prev_*`): its source, the one successor that
// means "not taken" (the fall-through of a conditional, else an address no block has),
// and whether it can be taken at all. The next block then computes "taken" and, only
// when the branch counts, advances the ring and the period count.

/// No block starts here (not a canonical address): unconditional transfers compare their
/// successor with it, so they are always taken.
const NEVER: u64 = 0x8000_0000_0000_0000;
/// `Vcpu::prev_flags`: the branch can be taken (bit 0), is conditional (bit 1), the thread
/// has not run a block yet (bit 2, set with `need_ids`: sends the next block down the slow
/// path); the rest is the address of the block's descriptor when it holds a LOCK prefix,
/// else 0.
const F_CAN_TAKE: u64 = 1;
const F_COND: u64 = 2;
const F_NEED: u64 = 4;
const F_BITS: u64 = F_CAN_TAKE | F_COND | F_NEED;

#[repr(C, align(8))]
struct Desc {
    start: u64,
    last: u64,
    end: u64,
    n_insns: u32,
    kind: u8,
    /// The block holds a LOCK-prefixed instruction: an atomic restart (QEMU re-running the
    /// instruction alone in a one-instruction block) must not look like a branch.
    has_lock: bool,
    first_is_lock: bool,
}

/// Flags (without the descriptor) a block ending in an instruction of kind `k` leaves.
#[inline(always)]
fn kind_flags(k: u8, system: bool) -> u64 {
    match k {
        K_NONE => 0,
        K_COND => F_CAN_TAKE | F_COND,
        // In user mode QEMU performs system calls itself and resumes at the next
        // instruction: no branch, as user-only LBR filtering gives on hardware.
        K_SYSCALL | K_SYSRET => system as u64,
        _ => F_CAN_TAKE,
    }
}

#[inline(always)]
fn sext48(x: u64) -> u64 {
    ((x << 16) as i64 >> 16) as u64
}

/// The packed `udata` of a block, when it packs.
fn pack(start: u64, last: u64, end: u64) -> Option<u64> {
    if sext48(start) != start || last < start || end < last {
        return None;
    }
    let off = last - start;
    let size = end - last;
    if off > 0xfff || size > 0xf {
        return None;
    }
    Some((start & 0xffff_ffff_ffff) | off << 48 | size << 60)
}

/// Descriptors, allocated in chunks and never freed (QEMU may run a block's code for as
/// long as the process lives; it does not tell plugins when it drops a block).
struct Arena {
    next: *mut Desc,
    left: usize,
}
unsafe impl Send for Arena {}
static ARENA: Mutex<Arena> = Mutex::new(Arena {
    next: null_mut(),
    left: 0,
});

fn alloc_desc(d: Desc) -> *const Desc {
    const CHUNK: usize = 1 << 14;
    let mut a = ARENA.lock().unwrap_or_else(|e| e.into_inner());
    if a.left == 0 {
        let mut v: Vec<Desc> = Vec::with_capacity(CHUNK);
        a.next = v.as_mut_ptr();
        a.left = CHUNK;
        std::mem::forget(v);
    }
    let p = a.next;
    unsafe {
        p.write(d);
        a.next = p.add(1);
    }
    a.left -= 1;
    p
}

// ---- models for counters -----------------------------------------------------------

struct Lru {
    sets: u64,
    ways: usize,
    shift: u32,
    tags: Vec<u64>, // sets * ways, MRU first, u64::MAX = empty
}

impl Lru {
    fn new(entries: u64, ways: usize, granule: u64) -> Lru {
        let ways = ways.max(1);
        let sets = (entries / ways as u64).max(1);
        Lru {
            sets,
            ways,
            shift: granule.max(1).trailing_zeros(),
            tags: vec![u64::MAX; (sets as usize) * ways],
        }
    }
    /// Touches the granule holding `addr`; true on a miss.
    #[inline]
    fn access(&mut self, addr: u64) -> bool {
        let g = addr >> self.shift;
        let set = (g % self.sets) as usize;
        let row = &mut self.tags[set * self.ways..(set + 1) * self.ways];
        if row[0] == g {
            return false;
        }
        match row.iter().position(|&t| t == g) {
            Some(p) => {
                row[..=p].rotate_right(1);
                false
            }
            None => {
                row.rotate_right(1);
                row[0] = g;
                true
            }
        }
    }
}

#[derive(Default, Clone, Copy)]
struct Counts {
    insns: [u64; 2],
    taken: [u64; 2],
    cond: [u64; 2],
    l1i_access: [u64; 2],
    l1i_miss: [u64; 2],
    itlb_access: [u64; 2],
    itlb_miss: [u64; 2],
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        for k in 0..2 {
            self.insns[k] += o.insns[k];
            self.taken[k] += o.taken[k];
            self.cond[k] += o.cond[k];
            self.l1i_access[k] += o.l1i_access[k];
            self.l1i_miss[k] += o.l1i_miss[k];
            self.itlb_access[k] += o.itlb_access[k];
            self.itlb_miss[k] += o.itlb_miss[k];
        }
    }
}

// ---- per vCPU ----------------------------------------------------------------------

#[repr(C, align(64))]
struct Vcpu {
    // Hot: touched for every executed block (first cache line).
    /// The previous block's last instruction, the successor that means its branch was
    /// not taken, and `F_*` flags.
    prev_from: u64,
    prev_cmp: u64,
    prev_flags: u64,
    need_ids: bool,
    system: bool,
    filter: u8,
    /// Ring slots in use (a power of two, more than the depth) - 1.
    mask: u32,
    /// Taken branches put into the ring since the thread started: the newest is at
    /// `ring[nbr & mask]`.
    nbr: u64,
    /// The value of `nbr` at which the next sample is taken.
    next: u64,
    period: u64,
    depth: u64,
    ring: [(u64, u64); RING_CAP],
    // Cold.
    pid: i32,
    tid: i32,
    buf: Vec<u8>,
    counts: Counts,
    l1i: Lru,
    itlb: Lru,
    /// mmap arguments between the syscall callback and its return.
    mmap_args: Option<(u64, u64, u64, u64, u64)>,
}

/// Ring slots (the depth is at most 1024; `mask + 1` of them are used).
const RING_CAP: usize = 2048;

const MAX_VCPUS: usize = 4096;
#[allow(clippy::declare_interior_mutable_const)]
const NO_VCPU: AtomicPtr<Vcpu> = AtomicPtr::new(null_mut());
static VCPUS: [AtomicPtr<Vcpu>; MAX_VCPUS] = [NO_VCPU; MAX_VCPUS];
/// Counters of vCPUs that have exited, for this process.
static DONE_COUNTS: Mutex<Counts> = Mutex::new(Counts {
    insns: [0; 2],
    taken: [0; 2],
    cond: [0; 2],
    l1i_access: [0; 2],
    l1i_miss: [0; 2],
    itlb_access: [0; 2],
    itlb_miss: [0; 2],
});

fn new_vcpu() -> Box<Vcpu> {
    let c = cfg();
    let depth = c.depth.max(1);
    // One slot more than the depth: the slot after the newest is written for every block.
    let cap = (depth + 1).next_power_of_two();
    assert!(cap <= RING_CAP);
    Box::new(Vcpu {
        prev_from: 0,
        prev_cmp: NEVER,
        prev_flags: F_NEED,
        need_ids: true,
        system: c.system,
        filter: c.filter,
        mask: (cap - 1) as u32,
        nbr: 0,
        next: c.period,
        period: c.period,
        depth: depth as u64,
        ring: [(0, 0); RING_CAP],
        pid: 0,
        tid: 0,
        buf: Vec::with_capacity(1 << 16),
        counts: Counts::default(),
        l1i: Lru::new(c.l1i_size / c.l1i_line.max(1), c.l1i_ways, c.l1i_line),
        itlb: Lru::new(c.itlb_entries as u64, c.itlb_entries, c.itlb_page),
        mmap_args: None,
    })
}

/// The state of vCPU `i`. Each vCPU runs on one thread at a time, so the state is only
/// touched by that thread (and at exit, after the guest has stopped).
#[inline(always)]
fn vcpu(i: c_uint) -> Option<&'static mut Vcpu> {
    let slot = VCPUS.get(i as usize)?;
    let p = slot.load(Acquire);
    if p.is_null() {
        return vcpu_new(slot);
    }
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
                drop(unsafe { Box::from_raw(b) });
                p = cur;
            }
        }
    }
    Some(unsafe { &mut *p })
}

fn now_ns() -> u64 {
    let mut ts = [0i64; 2];
    unsafe { clock_gettime(CLOCK_MONOTONIC, &mut ts) };
    (ts[0] as u64) * 1_000_000_000 + ts[1] as u64
}

// ---- output ------------------------------------------------------------------------

fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}
fn put_u64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_le_bytes());
}
/// Starts a record; returns the offset of its length field (patched by `end_rec`).
fn begin_rec(b: &mut Vec<u8>, ty: u32) -> usize {
    put_u32(b, ty);
    let at = b.len();
    put_u32(b, 0);
    at
}
fn end_rec(b: &mut [u8], at: usize) {
    let len = (b.len() - at - 4) as u32;
    b[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

fn write_all(fd: c_int, mut data: &[u8]) -> bool {
    while !data.is_empty() {
        let n = unsafe { write(fd, data.as_ptr() as *const c_void, data.len()) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        if n == 0 {
            return false;
        }
        data = &data[n as usize..];
    }
    true
}

/// Writes out a buffer of whole records. After a failed write (full disk) nothing more is
/// written and the stream ends without its END record, which the reader reports.
fn flush(buf: &mut Vec<u8>) {
    if buf.is_empty() {
        return;
    }
    if !WRITE_FAILED.load(Relaxed) && !write_all(FD.load(Relaxed), buf) {
        WRITE_FAILED.store(true, Relaxed);
        outs("vlbr: cannot write the capture stream; recording stopped\n");
    }
    buf.clear();
}

fn outs(s: &str) {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    unsafe { qemu_plugin_outs(v.as_ptr() as *const c_char) };
}

/// Samples are written in 64 KiB batches. QEMU 7.2 does not run plugin exit callbacks
/// when the guest dies of a signal, so a crash loses at most the last batch (the
/// side-band records are written at once, see `flush`).
fn maybe_flush(v: &mut Vcpu) {
    if v.buf.len() >= (1 << 16) {
        flush(&mut v.buf);
    }
}

fn refresh_ids(v: &mut Vcpu) {
    v.need_ids = false;
    if cfg().system {
        v.pid = -1;
        v.tid = -1;
        return;
    }
    let (pid, tid) = unsafe { (getpid(), gettid()) };
    if (pid, tid) != (v.pid, v.tid) {
        v.pid = pid;
        v.tid = tid;
        let at = begin_rec(&mut v.buf, REC_THREAD);
        put_u64(&mut v.buf, now_ns());
        put_u32(&mut v.buf, pid as u32);
        put_u32(&mut v.buf, tid as u32);
        end_rec(&mut v.buf, at);
        flush(&mut v.buf);
    }
}

// ---- guest mappings (user mode) ----------------------------------------------------

/// One MMAP record: guest address, length, file offset, protection, flags, device,
/// inode and path.
#[allow(clippy::too_many_arguments)]
fn mmap_record(
    b: &mut Vec<u8>,
    pid: i32,
    tid: i32,
    addr: u64,
    len: u64,
    pgoff: u64,
    prot: u32,
    flags: u32,
    maj: u32,
    min: u32,
    ino: u64,
    path: &[u8],
) {
    let at = begin_rec(b, REC_MMAP);
    put_u64(b, now_ns());
    put_u32(b, pid as u32);
    put_u32(b, tid as u32);
    put_u64(b, addr);
    put_u64(b, len);
    put_u64(b, pgoff);
    put_u32(b, prot);
    put_u32(b, flags);
    put_u32(b, maj);
    put_u32(b, min);
    put_u64(b, ino);
    put_u32(b, path.len() as u32);
    b.extend_from_slice(path);
    end_rec(b, at);
}

/// At the first executed block: the file mappings QEMU made for the guest itself (the
/// program, and the ELF interpreter holding the first instruction). QEMU maps guest code
/// without host execute permission, and the host merges neighbouring mappings, so these
/// are sent as they are (flag MAP_FROM_MAPS) and the reader finds the load bias from the
/// program headers.
fn initial_maps(v: &mut Vcpu, first_pc: u64) {
    let base = GUEST_BASE.load(Relaxed);
    let base = if base == u64::MAX { 0 } else { base };
    let at = begin_rec(&mut v.buf, REC_INFO);
    put_u64(&mut v.buf, base);
    put_u64(&mut v.buf, first_pc);
    end_rec(&mut v.buf, at);
    let maps = match std::fs::read("/proc/self/maps") {
        Ok(m) => m,
        Err(_) => return,
    };
    let exe = cfg().exe.clone();
    let host_pc = first_pc.wrapping_add(base);
    let mut interp: Option<Vec<u8>> = None;
    for line in maps.split(|&c| c == b'\n') {
        if let Some(m) = parse_maps_line(line) {
            if m.path.first() == Some(&b'/') && m.start <= host_pc && host_pc < m.end {
                interp = Some(m.path.to_vec());
            }
        }
    }
    for line in maps.split(|&c| c == b'\n') {
        let m = match parse_maps_line(line) {
            Some(m) => m,
            None => continue,
        };
        if m.start < base || m.path.first() != Some(&b'/') {
            continue;
        }
        if m.path != exe.as_slice() && interp.as_deref() != Some(m.path) {
            continue;
        }
        let (pid, tid) = (v.pid, v.tid);
        mmap_record(
            &mut v.buf,
            pid,
            tid,
            m.start - base,
            m.end - m.start,
            m.off,
            m.prot,
            MAP_FROM_MAPS,
            m.maj,
            m.min,
            m.ino,
            m.path,
        );
    }
}

/// MMAP record flag: the mapping was read from the host's /proc/self/maps.
const MAP_FROM_MAPS: u32 = 0x8000_0000;

struct MapsLine<'a> {
    start: u64,
    end: u64,
    prot: u32,
    off: u64,
    maj: u32,
    min: u32,
    ino: u64,
    path: &'a [u8],
}

fn parse_maps_line(line: &[u8]) -> Option<MapsLine<'_>> {
    let s = line;
    let mut fields = Vec::with_capacity(6);
    let mut i = 0;
    while fields.len() < 5 {
        while i < s.len() && s[i] == b' ' {
            i += 1;
        }
        let st = i;
        while i < s.len() && s[i] != b' ' {
            i += 1;
        }
        if st == i {
            return None;
        }
        fields.push(&s[st..i]);
    }
    while i < s.len() && s[i] == b' ' {
        i += 1;
    }
    let path = &s[i..];
    let hex = |x: &[u8]| u64::from_str_radix(std::str::from_utf8(x).ok()?, 16).ok();
    let range = fields[0];
    let dash = range.iter().position(|&c| c == b'-')?;
    let dev = fields[3];
    let colon = dev.iter().position(|&c| c == b':')?;
    Some(MapsLine {
        start: hex(&range[..dash])?,
        end: hex(&range[dash + 1..])?,
        prot: {
            let p = fields[1];
            (p.first() == Some(&b'r')) as u32
                | ((p.get(1) == Some(&b'w')) as u32) << 1
                | ((p.get(2) == Some(&b'x')) as u32) << 2
        },
        off: hex(fields[2])?,
        maj: hex(&dev[..colon])? as u32,
        min: hex(&dev[colon + 1..])? as u32,
        ino: std::str::from_utf8(fields[4]).ok()?.parse().ok()?,
        path,
    })
}

// ---- callbacks ---------------------------------------------------------------------

extern "C" fn on_tb_trans(_id: qemu_plugin_id_t, tb: *mut qemu_plugin_tb) {
    unsafe {
        let n = qemu_plugin_tb_n_insns(tb);
        if n == 0 {
            return;
        }
        let start = qemu_plugin_tb_vaddr(tb);
        let mut has_lock = false;
        let mut first_is_lock = false;
        let mut last = start;
        let mut end = start;
        let mut kind = K_NONE;
        for i in 0..n {
            let insn = qemu_plugin_tb_get_insn(tb, i);
            let size = qemu_plugin_insn_size(insn);
            let va = qemu_plugin_insn_vaddr(insn);
            let data = qemu_plugin_insn_data(insn) as *const u8;
            let bytes = std::slice::from_raw_parts(data, size.min(16));
            let (k, lock) = classify(bytes);
            if lock {
                has_lock = true;
                if i == 0 {
                    first_is_lock = true;
                }
            }
            if i == 0 && GUEST_BASE.load(Relaxed) == u64::MAX && !cfg().system {
                let h = qemu_plugin_insn_haddr(insn) as u64;
                if h != 0 {
                    GUEST_BASE.store(h.wrapping_sub(va), Relaxed);
                }
            }
            if i == n - 1 {
                last = va;
                end = va + size as u64;
                kind = k;
            }
        }
        // A user-mode recording with the user filter (the default) runs filter-free packed
        // callbacks: every packed block is then user code, and a block at a kernel
        // address (the vsyscall page) goes down the descriptor path, whose branches the
        // runtime filter drops (see `desc_prev`).
        let packed = if cfg().counters || has_lock || (user_filter_free() && is_kernel(start)) {
            None
        } else {
            pack(start, last, end)
        };
        let (cb, ud): (VcpuUdataCb, u64) = match packed {
            Some(p) => (packed_cb(kind), p),
            None => {
                let d = alloc_desc(Desc {
                    start,
                    last,
                    end,
                    n_insns: n as u32,
                    kind,
                    has_lock,
                    first_is_lock,
                });
                let cb: VcpuUdataCb = if cfg().counters {
                    on_tb_exec_counting
                } else {
                    on_tb_exec_desc
                };
                (cb, d as u64)
            }
        };
        qemu_plugin_register_vcpu_tb_exec_cb(tb, cb, QEMU_PLUGIN_CB_NO_REGS, ud as *mut c_void);
    }
}

/// The execution callback of a packed block ending in an instruction of kind `k`.
fn packed_cb(k: u8) -> VcpuUdataCb {
    macro_rules! by_kind {
        ($f:literal, $s:literal) => {
            match k {
                K_COND => on_tb_exec_packed::<K_COND, $f, $s>,
                K_JMP => on_tb_exec_packed::<K_JMP, $f, $s>,
                K_CALL => on_tb_exec_packed::<K_CALL, $f, $s>,
                K_RET => on_tb_exec_packed::<K_RET, $f, $s>,
                K_IND_JMP => on_tb_exec_packed::<K_IND_JMP, $f, $s>,
                K_IND_CALL => on_tb_exec_packed::<K_IND_CALL, $f, $s>,
                K_FAR => on_tb_exec_packed::<K_FAR, $f, $s>,
                K_SYSCALL => on_tb_exec_packed::<K_SYSCALL, $f, $s>,
                K_SYSRET => on_tb_exec_packed::<K_SYSRET, $f, $s>,
                _ => on_tb_exec_packed::<K_NONE, $f, $s>,
            }
        };
    }
    let c = cfg();
    if user_filter_free() {
        return by_kind!(0, false);
    }
    match (c.filter, c.system) {
        (0, false) => by_kind!(0, false),
        (2, false) => by_kind!(2, false),
        (0, true) => by_kind!(0, true),
        (1, true) => by_kind!(1, true),
        _ => by_kind!(2, true),
    }
}

/// One executed block starting at `start`; it leaves (`last`, `cmp`, `flags`) behind.
/// `filter` is the filter (a constant in the packed callbacks).
#[inline(always)]
fn exec(v: &mut Vcpu, start: u64, last: u64, cmp: u64, flags: u64, filter: u8, counting: bool) {
    let from = std::mem::replace(&mut v.prev_from, last);
    let pcmp = std::mem::replace(&mut v.prev_cmp, cmp);
    let pflags = std::mem::replace(&mut v.prev_flags, flags);
    if pflags & F_NEED != 0 {
        return exec_first(v, from, pcmp, pflags, start, counting);
    }
    record(v, from, pcmp, pflags, start, filter, counting);
}

#[cold]
#[inline(never)]
fn exec_first(v: &mut Vcpu, from: u64, pcmp: u64, pflags: u64, start: u64, counting: bool) {
    if v.need_ids {
        first_in_thread(v, start);
    }
    let filter = v.filter;
    record(v, from, pcmp, pflags, start, filter, counting);
}

/// The previous block's branch (`from`, `pcmp`, `pflags`), followed by the block at `to`.
#[inline(always)]
fn record(v: &mut Vcpu, from: u64, pcmp: u64, pflags: u64, to: u64, filter: u8, counting: bool) {
    let taken = (to != pcmp) as u64 & pflags & F_CAN_TAKE;
    let kf = is_kernel(from);
    if counting {
        v.counts.cond[kf as usize] += (pflags & F_COND) >> 1;
        v.counts.taken[kf as usize] += taken;
    }
    let keep = match filter {
        1 => !kf & !is_kernel(to),
        2 => kf & is_kernel(to),
        _ => true,
    };
    let rec = taken & keep as u64;
    // A branch rather than branch-free code: not-taken conditionals then skip the ring
    // and the period check, and the host predicts this branch about as well as it
    // predicted the guest's own branch a moment earlier (measured: vLBR/qemu 1.56x ->
    // 1.51x on speedtest1, with the plugin alone). (`mask` < RING_CAP.)
    if rec != 0 {
        v.nbr += 1;
        let i = (v.nbr & v.mask as u64) as usize & (RING_CAP - 1);
        v.ring[i] = (from, to);
        if v.nbr == v.next {
            v.next += v.period;
            sample(v, to);
        }
    }
}

#[cold]
#[inline(never)]
fn first_in_thread(v: &mut Vcpu, start: u64) {
    refresh_ids(v);
    if !MAPS_DONE.load(Relaxed) && !v.system && !MAPS_DONE.swap(true, AcqRel) {
        initial_maps(v, start);
        flush(&mut v.buf);
    }
}

#[cold]
#[inline(never)]
fn sample(v: &mut Vcpu, ip: u64) {
    let n = v.nbr.min(v.depth);
    let at = begin_rec(&mut v.buf, REC_SAMPLE);
    put_u64(&mut v.buf, now_ns());
    put_u32(&mut v.buf, v.pid as u32);
    put_u32(&mut v.buf, v.tid as u32);
    put_u64(&mut v.buf, ip);
    put_u64(&mut v.buf, cfg().period);
    put_u32(&mut v.buf, n as u32);
    put_u32(&mut v.buf, 0);
    let mask = v.mask as u64;
    let mut i = v.nbr;
    for _ in 0..n {
        let (f, t) = v.ring[(i & mask) as usize];
        put_u64(&mut v.buf, f);
        put_u64(&mut v.buf, t);
        i = i.wrapping_sub(1);
    }
    end_rec(&mut v.buf, at);
    maybe_flush(v);
}

extern "C" fn on_tb_exec_packed<const K: u8, const FILTER: u8, const SYSTEM: bool>(
    vcpu_index: c_uint,
    ud: *mut c_void,
) {
    let v = match VCPUS.get(vcpu_index as usize) {
        Some(slot) => slot.load(Acquire),
        None => return,
    };
    if v.is_null() {
        return packed_new_vcpu::<K, FILTER, SYSTEM>(vcpu_index, ud);
    }
    {
        let v = unsafe { &mut *v };
        let p = ud as u64;
        let start = sext48(p);
        let last = start.wrapping_add((p >> 48) & 0xfff);
        let cmp = if K == K_COND {
            last.wrapping_add(p >> 60)
        } else {
            NEVER
        };
        exec(v, start, last, cmp, kind_flags(K, SYSTEM), FILTER, false);
    }
}

#[cold]
#[inline(never)]
fn packed_new_vcpu<const K: u8, const FILTER: u8, const SYSTEM: bool>(i: c_uint, ud: *mut c_void) {
    if vcpu(i).is_some() {
        on_tb_exec_packed::<K, FILTER, SYSTEM>(i, ud);
    }
}

/// User mode with the user filter: the packed callbacks need no filter (see `on_tb_trans`).
#[inline]
fn user_filter_free() -> bool {
    let c = cfg();
    !c.system && c.filter == 1
}

/// What a descriptor block leaves behind: (`cmp`, `flags`).
#[inline(always)]
fn desc_prev(d: &Desc, system: bool) -> (u64, u64) {
    let cmp = if d.kind == K_COND { d.end } else { NEVER };
    let mut flags = kind_flags(d.kind, system);
    if !system && is_kernel(d.start) && user_filter_free() {
        // The next block may be a filter-free packed one: a branch out of kernel code
        // must not reach the ring there, as the user filter would drop it.
        flags &= !F_CAN_TAKE;
    }
    if d.has_lock {
        flags |= d as *const Desc as u64;
    }
    (cmp, flags)
}

/// An atomic instruction that QEMU restarts alone in a one-instruction block (parallel
/// guests) interrupts the previous block before its last instruction: no branch. Only
/// descriptor blocks hold LOCK prefixes.
#[inline(always)]
fn lock_restart(v: &Vcpu, d: &Desc) -> bool {
    let p = v.prev_flags & !F_BITS;
    if !d.first_is_lock || p == 0 {
        return false;
    }
    let p = unsafe { &*(p as *const Desc) };
    d.start > p.start && d.start < p.end
}

#[cold]
#[inline(never)]
fn exec_lock_restart(v: &mut Vcpu, d: &Desc, counting: bool) {
    let (cmp, flags) = desc_prev(d, v.system);
    v.prev_from = d.last;
    v.prev_cmp = cmp;
    v.prev_flags = flags;
    // (Never the first block of a thread: a restart follows the block it interrupted.)
    if v.need_ids {
        first_in_thread(v, d.start);
    }
    let _ = counting;
}

extern "C" fn on_tb_exec_desc(vcpu_index: c_uint, ud: *mut c_void) {
    let d = unsafe { &*(ud as *const Desc) };
    if let Some(v) = vcpu(vcpu_index) {
        if lock_restart(v, d) {
            return exec_lock_restart(v, d, false);
        }
        let (cmp, flags) = desc_prev(d, v.system);
        let filter = v.filter;
        exec(v, d.start, d.last, cmp, flags, filter, false);
    }
}

extern "C" fn on_tb_exec_counting(vcpu_index: c_uint, ud: *mut c_void) {
    let tb = unsafe { &*(ud as *const Desc) };
    if let Some(v) = vcpu(vcpu_index) {
        let k = is_kernel(tb.start) as usize;
        v.counts.insns[k] += tb.n_insns as u64;
        let c = cfg();
        let mut line = tb.start & !(c.l1i_line - 1);
        while line < tb.end {
            v.counts.l1i_access[k] += 1;
            if v.l1i.access(line) {
                v.counts.l1i_miss[k] += 1;
            }
            line += c.l1i_line;
        }
        let mut page = tb.start & !(c.itlb_page - 1);
        while page < tb.end {
            v.counts.itlb_access[k] += 1;
            if v.itlb.access(page) {
                v.counts.itlb_miss[k] += 1;
            }
            page += c.itlb_page;
        }
        if lock_restart(v, tb) {
            return exec_lock_restart(v, tb, true);
        }
        let (cmp, flags) = desc_prev(tb, v.system);
        let filter = v.filter;
        exec(v, tb.start, tb.last, cmp, flags, filter, true);
    }
}

extern "C" fn on_vcpu_init(_id: qemu_plugin_id_t, i: c_uint) {
    if let Some(v) = vcpu(i) {
        // A vCPU index can be reused by a new guest thread: start it afresh.
        v.prev_flags = F_NEED;
        v.next -= v.nbr;
        v.nbr = 0;
        v.need_ids = true;
    }
}

extern "C" fn on_vcpu_exit(_id: qemu_plugin_id_t, i: c_uint) {
    if let Some(v) = vcpu(i) {
        flush(&mut v.buf);
        if let Ok(mut d) = DONE_COUNTS.lock() {
            d.add(&v.counts);
        }
        v.counts = Counts::default();
    }
}

const SYS_MMAP: i64 = 9;
const SYS_RT_SIGRETURN: i64 = 15;
const SYS_CLONE: i64 = 56;
const SYS_FORK: i64 = 57;
const SYS_VFORK: i64 = 58;
const SYS_EXECVE: i64 = 59;
const SYS_EXECVEAT: i64 = 322;
const SYS_CLONE3: i64 = 435;
const PROT_EXEC: u64 = 4;
const MAP_ANONYMOUS: u64 = 0x20;

#[allow(clippy::too_many_arguments)]
extern "C" fn on_syscall(
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
    match num {
        SYS_MMAP => v.mmap_args = Some((a2, a3, a4, a5, a6)),
        SYS_EXECVE | SYS_EXECVEAT => {
            // On success this process image is gone (qemu-user runs the new program
            // natively): write out everything now.
            let at = begin_rec(&mut v.buf, REC_EXEC);
            put_u64(&mut v.buf, now_ns());
            put_u32(&mut v.buf, v.pid as u32);
            put_u32(&mut v.buf, v.tid as u32);
            end_rec(&mut v.buf, at);
            write_counters(v);
            flush_all();
        }
        SYS_RT_SIGRETURN => v.prev_flags = if v.need_ids { F_NEED } else { 0 },
        _ => {}
    }
}

extern "C" fn on_syscall_ret(_id: qemu_plugin_id_t, i: c_uint, num: i64, ret: i64) {
    let v = match vcpu(i) {
        Some(v) => v,
        None => return,
    };
    match num {
        SYS_MMAP => {
            let args = v.mmap_args.take();
            let (len, prot, flags, fd, off) = match args {
                Some(a) => a,
                None => return,
            };
            if !(-4095..0).contains(&ret)
                && prot & PROT_EXEC != 0
                && flags & MAP_ANONYMOUS == 0
                && (fd as i64) >= 0
            {
                let link = format!("/proc/self/fd/{}", fd as i64);
                let path = match std::fs::read_link(&link) {
                    Ok(p) => p,
                    Err(_) => return,
                };
                use std::os::unix::ffi::OsStrExt;
                use std::os::unix::fs::MetadataExt;
                let (maj, min, ino) = match std::fs::metadata(&link) {
                    Ok(m) => {
                        let d = m.dev();
                        (
                            (((d >> 32) & 0xffff_f000) | ((d >> 8) & 0xfff)) as u32,
                            (((d >> 12) & 0xffff_ff00) | (d & 0xff)) as u32,
                            m.ino(),
                        )
                    }
                    Err(_) => (0, 0, 0),
                };
                if v.need_ids {
                    refresh_ids(v);
                }
                let (pid, tid) = (v.pid, v.tid);
                mmap_record(
                    &mut v.buf,
                    pid,
                    tid,
                    ret as u64,
                    len,
                    off,
                    prot as u32,
                    flags as u32,
                    maj,
                    min,
                    ino,
                    path.as_os_str().as_bytes(),
                );
                flush(&mut v.buf);
            }
        }
        SYS_CLONE | SYS_FORK | SYS_VFORK | SYS_CLONE3 if ret == 0 => {
            // In a new child process (new threads do not return through here in
            // qemu-user). Its copy of the parent's unwritten records belongs to the
            // parent: drop them, and start its own counts.
            let me = unsafe { getpid() };
            if me == v.pid {
                return;
            }
            for slot in VCPUS.iter() {
                let p = slot.load(Acquire);
                if !p.is_null() {
                    let o = unsafe { &mut *p };
                    o.buf.clear();
                    o.counts = Counts::default();
                }
            }
            if let Ok(mut d) = DONE_COUNTS.lock() {
                *d = Counts::default();
            }
            let ppid = v.pid;
            v.pid = me;
            v.tid = unsafe { gettid() };
            let at = begin_rec(&mut v.buf, REC_FORK);
            put_u64(&mut v.buf, now_ns());
            put_u32(&mut v.buf, me as u32);
            put_u32(&mut v.buf, ppid as u32);
            put_u32(&mut v.buf, v.tid as u32);
            put_u32(&mut v.buf, ppid as u32);
            end_rec(&mut v.buf, at);
            flush(&mut v.buf);
        }
        _ => {}
    }
}

fn write_counters(v: &mut Vcpu) {
    if !cfg().counters {
        return;
    }
    let mut total = DONE_COUNTS.lock().map(|d| *d).unwrap_or_default();
    for slot in VCPUS.iter() {
        let p = slot.load(Acquire);
        if !p.is_null() {
            total.add(unsafe { &(*p).counts });
        }
    }
    let pid = if cfg().system {
        -1
    } else {
        unsafe { getpid() }
    };
    let b = &mut v.buf;
    let at = begin_rec(b, REC_COUNTERS);
    put_u32(b, pid as u32);
    put_u32(b, 0);
    for k in 0..2 {
        for x in [
            total.insns[k],
            total.taken[k],
            total.cond[k],
            total.l1i_access[k],
            total.l1i_miss[k],
            total.itlb_access[k],
            total.itlb_miss[k],
        ] {
            put_u64(b, x);
        }
    }
    end_rec(b, at);
}

fn flush_all() {
    for slot in VCPUS.iter() {
        let p = slot.load(Acquire);
        if !p.is_null() {
            flush(unsafe { &mut (*p).buf });
        }
    }
}

extern "C" fn on_exit(_id: qemu_plugin_id_t, _ud: *mut c_void) {
    let mut tail = Vec::new();
    let mut tmp = new_vcpu();
    write_counters(&mut tmp);
    flush_all();
    tail.append(&mut tmp.buf);
    let (pid, ppid, tid) = if cfg().system {
        (-1, -1, -1)
    } else {
        unsafe { (getpid(), getppid(), gettid()) }
    };
    let at = begin_rec(&mut tail, REC_EXIT);
    put_u64(&mut tail, now_ns());
    put_u32(&mut tail, pid as u32);
    put_u32(&mut tail, ppid as u32);
    put_u32(&mut tail, tid as u32);
    put_u32(&mut tail, WRITE_FAILED.load(Relaxed) as u32);
    end_rec(&mut tail, at);
    if pid == ROOT_PID.load(Relaxed) || cfg().system {
        let at = begin_rec(&mut tail, REC_END);
        put_u32(&mut tail, pid as u32);
        end_rec(&mut tail, at);
    }
    flush(&mut tail);
}

static ROOT_PID: AtomicI32 = AtomicI32::new(0);

fn parse_u64(v: &str) -> Option<u64> {
    if let Some(h) = v.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()
    } else {
        v.parse().ok()
    }
}

#[no_mangle]
pub unsafe extern "C" fn qemu_plugin_install(
    id: qemu_plugin_id_t,
    info: *const qemu_info_t,
    argc: c_int,
    argv: *mut *mut c_char,
) -> c_int {
    let system = !info.is_null() && (*info).system_emulation;
    let mut c = Config {
        period: 10007,
        depth: 32,
        counters: false,
        system,
        filter: if system { 0 } else { 1 },
        exe: Vec::new(),
        l1i_size: 32 * 1024,
        l1i_ways: 8,
        l1i_line: 64,
        itlb_entries: 64,
        itlb_page: 4096,
        fd: -1,
    };
    let mut out: Option<Vec<u8>> = None;
    for i in 0..argc.max(0) as usize {
        let a = CStr::from_ptr(*argv.add(i)).to_bytes();
        let (k, v) = match a.iter().position(|&c| c == b'=') {
            Some(p) => (&a[..p], &a[p + 1..]),
            None => (a, &b""[..]),
        };
        let vs = String::from_utf8_lossy(v).to_string();
        let bad = |what: &str| {
            outs(&format!("vlbr: bad argument {what}={vs}\n"));
            1
        };
        match k {
            b"out" => out = Some(v.to_vec()),
            b"exe" => c.exe = v.to_vec(),
            b"period" => match parse_u64(&vs) {
                Some(p) if p > 0 => c.period = p,
                _ => return bad("period"),
            },
            b"depth" => match parse_u64(&vs) {
                Some(d) if d > 0 && d <= 1024 => c.depth = d as usize,
                _ => return bad("depth"),
            },
            b"counters" => c.counters = vs == "1" || vs == "on" || vs == "true",
            b"filter" => {
                c.filter = match vs.as_str() {
                    "all" => 0,
                    "user" => 1,
                    "kernel" => 2,
                    _ => return bad("filter"),
                }
            }
            b"l1i" => {
                // size,ways,line
                let p: Vec<Option<u64>> = vs.split(':').map(parse_u64).collect();
                match p.as_slice() {
                    [Some(s), Some(w), Some(l)]
                        if *s > 0 && *w > 0 && l.is_power_of_two() && *w <= 64 =>
                    {
                        c.l1i_size = *s;
                        c.l1i_ways = *w as usize;
                        c.l1i_line = *l;
                    }
                    _ => return bad("l1i"),
                }
            }
            b"itlb" => {
                let p: Vec<Option<u64>> = vs.split(':').map(parse_u64).collect();
                match p.as_slice() {
                    [Some(e), Some(pg)] if *e > 0 && *e <= 4096 && pg.is_power_of_two() => {
                        c.itlb_entries = *e as usize;
                        c.itlb_page = *pg;
                    }
                    _ => return bad("itlb"),
                }
            }
            _ => {
                outs(&format!(
                    "vlbr: unknown argument {}\n",
                    String::from_utf8_lossy(a)
                ));
                return 1;
            }
        }
    }
    let out = match out {
        Some(o) => o,
        None => {
            outs("vlbr: missing out=PATH\n");
            return 1;
        }
    };
    let mut path = out.clone();
    path.push(0);
    let fd = open(
        path.as_ptr() as *const c_char,
        O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
        0o600,
    );
    if fd < 0 {
        outs("vlbr: cannot open the output stream\n");
        return 1;
    }
    c.fd = fd;
    FD.store(fd, Relaxed);
    let root = if system { -1 } else { getpid() };
    ROOT_PID.store(root, Relaxed);
    let mut hdr = Vec::new();
    hdr.extend_from_slice(STREAM_MAGIC);
    put_u64(&mut hdr, c.period);
    put_u32(&mut hdr, c.depth as u32);
    put_u32(&mut hdr, system as u32);
    put_u32(&mut hdr, c.filter as u32);
    put_u32(&mut hdr, root as u32);
    put_u64(&mut hdr, now_ns());
    let _ = CONFIG.set(c);
    flush(&mut hdr);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
    qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
    qemu_plugin_register_vcpu_exit_cb(id, on_vcpu_exit);
    if !system {
        qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
        qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_ret);
    }
    qemu_plugin_register_atexit_cb(id, on_exit, null_mut());
    0
}
