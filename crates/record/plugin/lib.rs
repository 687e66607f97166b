//! The vLBR QEMU TCG plugin: emulated last-branch records and counters.
//!
//! Built by `crates/record/build.rs` as a standalone `cdylib` with plain `rustc` (no crates),
//! embedded in the `kfdo-record` library and written to a temporary file at record time.
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
//! Output: a little-endian record stream (see `crates/record/src/emulated/stream.rs`), appended to the
//! file given as `out=` with whole-record `write(2)` calls on an O_APPEND descriptor, so
//! that forked guest processes can share it.

#![allow(non_camel_case_types, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::mem::MaybeUninit;
use std::ptr::{addr_of_mut, null_mut};
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
// it must be short. What it costs is mostly its memory operations, so each block leaves
// one word behind for the next (`Vcpu::prev`, below "the word"), and the next block reads
// it and writes its own: one load and one store per block when no branch is taken.
//
// The word of a block describes the branch that ends it:
// - bits 16..64: the block's start (48-bit addresses, sign-extended: kernel ones fit too,
//   and one arithmetic shift gets it back), bits 4..16: the offset of its last
//   instruction from the start;
// - bits 0..4, the tag: 0, an unconditional transfer (taken whatever its target, so
//   `call next; pop` counts); 2..=15, a conditional branch of that many bytes, taken
//   unless the next block starts right after it; 1 (`TAG_SPECIAL`), no packed form:
//   bits 16..64 then hold 0 (`NO_BRANCH`), 1 (`THREAD_START`), or the address of the
//   block's `Desc` (blocks with a LOCK prefix, and blocks whose addresses do not pack).
//
// Filters are decided when a block is translated: a block on a side the filter drops
// (user or kernel) records no branch into it and leaves `NO_BRANCH`, so no branch out of
// it is recorded either. Only the counting callback, which counts every branch, filters
// at run time.
//
// The callback also branches on "taken": the host has just predicted the guest's own
// branch on that outcome, and the measured cost of this branch is lower than that of
// branch-free code.

const TAG_SPECIAL: u64 = 1;
/// The word of a block that ends without a branch (or whose branches the filter drops).
const NO_BRANCH: u64 = special(0);
/// The word a thread starts with (also after `rt_sigreturn` before its first block).
const THREAD_START: u64 = special(1);
/// No block starts here (not a canonical address): the "not taken" successor of an
/// unconditional transfer.
const NEVER: u64 = 0x8000_0000_0000_0000;
const MASK48: u64 = (1 << 48) - 1;

#[repr(C, align(8))]
struct Desc {
    start: u64,
    last: u64,
    end: u64,
    /// The word this block leaves.
    leave: u64,
    n_insns: u32,
    kind: u8,
    /// The block holds a LOCK-prefixed instruction: an atomic restart (QEMU re-running the
    /// instruction alone in a one-instruction block) must not look like a branch.
    has_lock: bool,
    first_is_lock: bool,
}

/// Whether a block ending in an instruction of kind `k` can branch out.
#[inline(always)]
fn can_branch(k: u8, system: bool) -> bool {
    match k {
        K_NONE => false,
        // In user mode QEMU performs system calls itself and resumes at the next
        // instruction: no branch, as user-only LBR filtering gives on hardware.
        K_SYSCALL | K_SYSRET => system,
        _ => true,
    }
}

#[inline(always)]
fn sext48(x: u64) -> u64 {
    ((x << 16) as i64 >> 16) as u64
}

/// A special word carrying `payload` (< 2^48).
const fn special(payload: u64) -> u64 {
    payload << 16 | TAG_SPECIAL
}

#[inline(always)]
fn word_tag(w: u64) -> u64 {
    w & 0xf
}

/// The start of the block a packed word describes.
#[inline(always)]
fn word_start(w: u64) -> u64 {
    ((w as i64) >> 16) as u64
}

/// The last instruction of the block a packed word describes.
#[inline(always)]
fn word_last(w: u64) -> u64 {
    word_start(w).wrapping_add((w >> 4) & 0xfff)
}

/// What a special word carries.
#[inline(always)]
fn word_payload(w: u64) -> u64 {
    w >> 16
}

/// The packed word of a block that can branch out, when it packs.
fn pack(start: u64, last: u64, end: u64, kind: u8) -> Option<u64> {
    if sext48(start) != start || last < start || end < last {
        return None;
    }
    let off = last - start;
    let tag = if kind == K_COND { end - last } else { 0 };
    if off > 0xfff || tag > 0xf || (kind == K_COND && tag < 2) {
        return None;
    }
    Some(start << 16 | off << 4 | tag)
}

/// Whether the filter keeps branches from or to a block at `start` (0: all, 1: user
/// only, 2: kernel only; kernel = upper half).
#[inline(always)]
fn side_kept(filter: u8, addr: u64) -> bool {
    match filter {
        1 => !is_kernel(addr),
        2 => is_kernel(addr),
        _ => true,
    }
}

/// A branch a word describes: its source, the successor that means "not taken"
/// (`NEVER` for unconditional transfers), and whether it is conditional.
struct Branch {
    from: u64,
    cmp: u64,
    cond: bool,
}

/// The branch a word describes, if any (the slow path's decoder).
fn decode(w: u64, system: bool) -> Option<Branch> {
    let tag = word_tag(w);
    if tag != TAG_SPECIAL {
        let from = word_last(w);
        return Some(Branch {
            from,
            cmp: if tag == 0 { NEVER } else { from + tag },
            cond: tag != 0,
        });
    }
    if w == NO_BRANCH || w == THREAD_START {
        return None;
    }
    let d = unsafe { &*(word_payload(w) as *const Desc) };
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

fn alloc_desc(d: Desc) -> *mut Desc {
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
    /// Touches every granule of `[start, end)`: (granules touched, misses).
    fn access_range(&mut self, start: u64, end: u64) -> (u64, u64) {
        let (mut n, mut miss) = (0, 0);
        let mut g = start >> self.shift;
        while g << self.shift < end {
            n += 1;
            miss += self.access(g << self.shift) as u64;
            g += 1;
        }
        (n, miss)
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
    /// The word the previous block left (see "per translation block").
    prev: u64,
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
/// The state of vCPU 0 (`VCPUS[0]` points here), written at install.
static mut VCPU0: MaybeUninit<Vcpu> = MaybeUninit::uninit();
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
        prev: THREAD_START,
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
        let c = cfg();
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
        qemu_plugin_register_vcpu_tb_exec_cb(tb, cb, QEMU_PLUGIN_CB_NO_REGS, ud as *mut c_void);
    }
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
    let d = alloc_desc(Desc {
        start,
        last,
        end,
        leave: NO_BRANCH,
        n_insns: n as u32,
        kind,
        has_lock,
        first_is_lock,
    });
    // The counting callback filters at run time; the other leaves no branch out of a
    // block the filter drops.
    let branches = can_branch(kind, c.system) && (c.counters || side_kept(c.filter, start));
    let leave = match pack(start, last, end, kind) {
        _ if !branches => NO_BRANCH,
        Some(w) if !has_lock => w,
        _ => {
            assert!(d as u64 <= MASK48, "vlbr: descriptor address does not fit 48 bits");
            special(d as u64)
        }
    };
    unsafe { (*d).leave = leave };
    let cb: VcpuUdataCb = if c.counters {
        on_tb_exec_desc::<true>
    } else {
        on_tb_exec_desc::<false>
    };
    (cb, d as u64)
}

// The fast callbacks, one per kind of block (`udata` in brackets):
/// A block that can branch out and packs [its word].
const FAST_PACKED: u8 = 0;
/// A block that ends without a branch, or with a system call in user mode [its start].
const FAST_END_NONE: u8 = 1;
/// A block on the side the filter drops: no branch into or out of it is recorded [-].
const FAST_SILENT: u8 = 2;
/// A block that is one unconditional transfer [its word]: the only kind of block an
/// unconditional transfer to its own address can arrive at (a block starting at a branch
/// instruction ends with it), so the only one that checks for it (see `arrive`).
const FAST_PACKED_SELF: u8 = 3;

/// vCPU 0 (the only one of single-threaded programs) goes straight to its state, a
/// static (no pointer to load); the others go through the index, out of line, so that the
/// fast path saves no registers and takes no jump.
extern "C" fn on_tb_exec_fast<const KIND: u8>(vcpu_index: c_uint, ud: *mut c_void) {
    if vcpu_index != 0 {
        return fast_by_index::<KIND>(vcpu_index, ud as u64);
    }
    // SAFETY: set up at install, before any block runs; only vCPU 0's thread touches it.
    fast_body::<KIND>(unsafe { &mut *addr_of_mut!(VCPU0).cast::<Vcpu>() }, ud as u64);
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
/// others measured 4 % less time under QEMU.)
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
    if let Some(b) = decode(w, v.system) {
        if to != b.cmp && side_kept(v.filter, b.from) && side_kept(v.filter, to) {
            push(v, b.from, to);
        }
    }
}

/// Puts a taken branch into the ring, and samples every `period` of them.
#[inline(always)]
fn push(v: &mut Vcpu, from: u64, to: u64) {
    v.nbr += 1;
    let i = (v.nbr & v.mask as u64) as usize & (RING_CAP - 1);
    v.ring[i] = (from, to);
    if v.nbr == v.next {
        v.next += v.period;
        sample(v, to);
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

/// An atomic instruction that QEMU restarts alone in a one-instruction block (parallel
/// guests) interrupts the previous block before its last instruction: no branch. Only
/// descriptor blocks hold LOCK prefixes, and they leave their descriptor in their word.
fn lock_restart(w: u64, d: &Desc) -> bool {
    if !d.first_is_lock || word_tag(w) != TAG_SPECIAL || w == NO_BRANCH || w == THREAD_START {
        return false;
    }
    let p = word_payload(w);
    let p = unsafe { &*(p as *const Desc) };
    p.has_lock && d.start > p.start && d.start < p.end
}

/// The slow path: blocks with LOCK prefixes or addresses that do not pack, and every
/// block when counting (`COUNTING`: instructions, cache and TLB models, branches by kind).
extern "C" fn on_tb_exec_desc<const COUNTING: bool>(vcpu_index: c_uint, ud: *mut c_void) {
    let d = unsafe { &*(ud as *const Desc) };
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
    if lock_restart(w, d) {
        return;
    }
    let b = match decode(w, v.system) {
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

extern "C" fn on_vcpu_init(_id: qemu_plugin_id_t, i: c_uint) {
    if let Some(v) = vcpu(i) {
        // A vCPU index can be reused by a new guest thread: start it afresh.
        v.prev = THREAD_START;
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
        SYS_RT_SIGRETURN => v.prev = if v.need_ids { THREAD_START } else { NO_BRANCH },
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
    let v0 = addr_of_mut!(VCPU0).cast::<Vcpu>();
    v0.write(*new_vcpu());
    VCPUS[0].store(v0, Release);
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
