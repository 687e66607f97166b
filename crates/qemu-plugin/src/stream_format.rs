//! The capture stream's format, defined once: the plugin writes it (`stream_encode.rs`)
//! and kfdo-record reads it (`src/emulated/stream.rs`; `src/emulated/mod.rs` compiles this
//! same file with `#[path]`). Plain `std` only, so that it builds in both crates.
//!
//! Layout, little-endian: the header (`MAGIC`, then the fields of [`Header`];
//! `HEADER_LEN` bytes in all), then records `type u32, len u32, payload[len]`. Forked guest
//! processes append to the same file with whole-record writes, so records of different
//! processes interleave but never split.
//!
//! Payloads (pid and tid are written as u32, -1 for "none", as in system mode):
//! - `REC_SAMPLE`: time u64, pid, tid, ip u64, period u64, nr u32, 0 u32, then nr branches
//!   (from u64, to u64), newest first.
//! - `REC_MMAP`: time u64, pid, tid, addr u64, len u64, pgoff u64, prot u32, flags u32
//!   (`MAP_FROM_MAPS` or the guest's mmap flags), maj u32, min u32, ino u64, path length
//!   u32, path bytes.
//! - `REC_THREAD`: time u64, pid, tid.
//! - `REC_FORK`: time u64, pid, ppid, tid, ptid.
//! - `REC_EXIT`: time u64, pid, ppid, tid, write failed u32.
//! - `REC_COUNTERS`: pid, threads u32 (the guest threads the process started, itself
//!   included; the vCPUs in system mode; 0 where unknown), then `COUNTER_FIELDS` u64 for
//!   user and as many for kernel, in the order of [`Counts`]' fields: insns, taken, cond,
//!   l1i_access, l1i_miss, itlb_access, itlb_miss.
//! - `REC_INFO`: guest base u64 (host - guest address), first executed pc u64.
//! - `REC_END`: pid (the root process finished cleanly).
//! - `REC_EXEC`: time u64, pid, tid.
//! - `REC_WINDOW`: time u64, open u32 (1: the guest's start marker opened the measurement
//!   window, 0: its stop marker closed it), 0 u32. Only with `window=markers`.
//! - `REC_KERNEL_TEXT`: the lowest address of kernel text (`KERNEL_TEXT_LO..KERNEL_TEXT_HI`)
//!   the guest executed u64, boot included (system mode, at the end).

// Each side uses only part of this file (the plugin does not decode the header, the
// reader does not encode it).
#![allow(dead_code)]

pub const MAGIC: &[u8; 8] = b"KFDOVLB1";
/// The magic and the header's fields.
pub const HEADER_LEN: usize = 8 + 8 + 4 + 4 + 4 + 4 + 8;
/// A record's type and length, before its payload.
pub const RECORD_HEAD_LEN: usize = 8;

pub const REC_SAMPLE: u32 = 1;
pub const REC_MMAP: u32 = 2;
pub const REC_THREAD: u32 = 3;
pub const REC_FORK: u32 = 4;
pub const REC_EXIT: u32 = 5;
pub const REC_COUNTERS: u32 = 6;
pub const REC_INFO: u32 = 7;
pub const REC_END: u32 = 8;
pub const REC_EXEC: u32 = 9;
pub const REC_WINDOW: u32 = 10;
pub const REC_KERNEL_TEXT: u32 = 11;

/// Payload lengths; `SAMPLE_LEN` and `MMAP_LEN` are the fixed parts before the branches
/// and the path.
pub const SAMPLE_LEN: usize = 40;
pub const SAMPLE_BRANCH_LEN: usize = 16;
pub const MMAP_LEN: usize = 68;
pub const THREAD_LEN: usize = 16;
pub const FORK_LEN: usize = 24;
pub const EXIT_LEN: usize = 24;
pub const COUNTER_FIELDS: usize = 7;
pub const COUNTERS_LEN: usize = 8 + 2 * COUNTER_FIELDS * 8;
pub const INFO_LEN: usize = 16;
pub const END_LEN: usize = 4;
pub const EXEC_LEN: usize = 16;
pub const WINDOW_LEN: usize = 16;
pub const KERNEL_TEXT_LEN: usize = 8;

/// Where x86-64 maps the kernel image, KASLR or not (`__START_KERNEL_map` and the 1 GiB
/// image size that ends at the modules area).
pub const KERNEL_TEXT_LO: u64 = 0xffff_ffff_8000_0000;
pub const KERNEL_TEXT_HI: u64 = 0xffff_ffff_c000_0000;
/// Where arm64 (48-bit virtual addresses, Linux >= 6.6) links its image, `KIMAGE_VADDR`:
/// right after the 2 GiB modules area that starts the kernel half. KASLR would move it
/// anywhere in the vmalloc area, so arm64 guests boot with `nokaslr`; the range excludes
/// the modules below it, whose code must not stretch the image's mapping.
pub const KERNEL_TEXT_LO_A64: u64 = 0xffff_8000_8000_0000;
pub const KERNEL_TEXT_HI_A64: u64 = 0xffff_8000_c000_0000;

/// The kernel image's address range of a guest (`aarch64`: an arm64 one, else x86-64).
pub const fn kernel_text_range(aarch64: bool) -> std::ops::Range<u64> {
    if aarch64 {
        KERNEL_TEXT_LO_A64..KERNEL_TEXT_HI_A64
    } else {
        KERNEL_TEXT_LO..KERNEL_TEXT_HI
    }
}

/// The window markers (`crates/record/markers/kfdo_markers.h`): two 9-byte NOPs,
/// `nopw 0x2b44464b(%rax,%rax,1)` (start) and `nopw 0x2d44464b(%rax,%rax,1)` (stop); the
/// displacement spells "KFD+" / "KFD-", which no compiler emits as padding.
pub const MARKER_START: [u8; 9] = [0x66, 0x0f, 0x1f, 0x84, 0x00, 0x4b, 0x46, 0x44, 0x2b];
pub const MARKER_STOP: [u8; 9] = [0x66, 0x0f, 0x1f, 0x84, 0x00, 0x4b, 0x46, 0x44, 0x2d];
/// The aarch64 markers: `movk xzr, #0x4b2b, lsl #48` (start) and `movk xzr, #0x4b2d,
/// lsl #48` (stop), writes to the zero register ("K+" / "K-") that no compiler emits.
/// Being 4 bytes, they can never equal an x86 marker, so one test serves both guests.
pub const MARKER_START_A64: [u8; 4] = [0x7f, 0x65, 0xe9, 0xf2];
pub const MARKER_STOP_A64: [u8; 4] = [0xbf, 0x65, 0xe9, 0xf2];

/// Which window marker an instruction is, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Start,
    Stop,
}

/// The marker an instruction's bytes are, if they are one.
pub fn marker_of(insn: &[u8]) -> Option<Marker> {
    if insn == MARKER_START || insn == MARKER_START_A64 {
        Some(Marker::Start)
    } else if insn == MARKER_STOP || insn == MARKER_STOP_A64 {
        Some(Marker::Stop)
    } else {
        None
    }
}

/// MMAP record flag: the mapping was read from the host's /proc/self/maps (QEMU mapped
/// the program and its ELF interpreter itself), not seen in a guest `mmap` call.
pub const MAP_FROM_MAPS: u32 = 0x8000_0000;

/// Which branches are recorded, by the side of the address space of their source and
/// target (kernel = upper half).
pub const FILTER_ALL: u32 = 0;
pub const FILTER_USER: u32 = 1;
pub const FILTER_KERNEL: u32 = 2;

/// The counters of one vCPU or process, user and kernel (the payload of `REC_COUNTERS`
/// after the pid): instructions, taken and conditional branches, and the L1i and iTLB
/// model's accesses and misses. Index 0 counts user addresses, 1 kernel ones.
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    pub insns: [u64; 2],
    pub taken: [u64; 2],
    pub cond: [u64; 2],
    pub l1i_access: [u64; 2],
    pub l1i_miss: [u64; 2],
    pub itlb_access: [u64; 2],
    pub itlb_miss: [u64; 2],
}

impl Counts {
    /// All zero (`Default` for statics).
    pub const ZERO: Counts = Counts {
        insns: [0; 2],
        taken: [0; 2],
        cond: [0; 2],
        l1i_access: [0; 2],
        l1i_miss: [0; 2],
        itlb_access: [0; 2],
        itlb_miss: [0; 2],
    };

    pub fn add(&mut self, o: &Counts) {
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

    /// `[user, kernel]` in the order of the stream's COUNTERS record.
    pub fn by_side(&self) -> [[u64; COUNTER_FIELDS]; 2] {
        [0, 1].map(|k| {
            [
                self.insns[k],
                self.taken[k],
                self.cond[k],
                self.l1i_access[k],
                self.l1i_miss[k],
                self.itlb_access[k],
                self.itlb_miss[k],
            ]
        })
    }

    /// The inverse of [`Counts::by_side`].
    pub fn from_sides(sides: &[[u64; COUNTER_FIELDS]; 2]) -> Counts {
        let mut c = Counts::ZERO;
        for (k, s) in sides.iter().enumerate() {
            [
                c.insns[k],
                c.taken[k],
                c.cond[k],
                c.l1i_access[k],
                c.l1i_miss[k],
                c.itlb_access[k],
                c.itlb_miss[k],
            ] = *s;
        }
        c
    }
}

/// The stream header (after the magic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Taken branches per sample.
    pub period: u64,
    /// Branch records per sample (at most).
    pub depth: u32,
    pub system: bool,
    /// `FILTER_ALL`, `FILTER_USER` or `FILTER_KERNEL`.
    pub filter: u32,
    /// The process the recording started with (-1 in system mode).
    pub root_pid: i32,
    /// CLOCK_MONOTONIC at install, in nanoseconds.
    pub start_ns: u64,
}

impl Header {
    /// Appends the magic and the header (`HEADER_LEN` bytes).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.period.to_le_bytes());
        out.extend_from_slice(&self.depth.to_le_bytes());
        out.extend_from_slice(&(self.system as u32).to_le_bytes());
        out.extend_from_slice(&self.filter.to_le_bytes());
        out.extend_from_slice(&(self.root_pid as u32).to_le_bytes());
        out.extend_from_slice(&self.start_ns.to_le_bytes());
    }

    /// The header at the start of `b`, if it starts with the magic and is long enough.
    pub fn decode(b: &[u8]) -> Option<Header> {
        if b.len() < HEADER_LEN || &b[..8] != MAGIC {
            return None;
        }
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        Some(Header {
            period: u64_at(8),
            depth: u32_at(16),
            system: u32_at(20) != 0,
            filter: u32_at(24),
            root_pid: u32_at(28) as i32,
            start_ns: u64_at(32),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_recognised_by_their_exact_bytes() {
        assert_eq!(marker_of(&MARKER_START), Some(Marker::Start));
        assert_eq!(marker_of(&MARKER_STOP), Some(Marker::Stop));
        // The same NOP with another displacement is padding, not a marker.
        let mut pad = MARKER_START;
        pad[8] = 0x00;
        assert_eq!(marker_of(&pad), None);
        assert_eq!(marker_of(&MARKER_START[..8]), None);
        assert_eq!(marker_of(&[0x90]), None);
        assert_eq!(marker_of(&MARKER_START_A64), Some(Marker::Start));
        assert_eq!(marker_of(&MARKER_STOP_A64), Some(Marker::Stop));
        // movk xzr, #0x4b2b (no shift): not a marker.
        assert_eq!(marker_of(&[0x7f, 0x65, 0x89, 0xf2]), None);
    }

    #[test]
    fn header_round_trip_and_layout() {
        let h = Header {
            period: 10007,
            depth: 32,
            system: true,
            filter: FILTER_KERNEL,
            root_pid: -1,
            start_ns: 0x0102_0304_0506_0708,
        };
        let mut b = Vec::new();
        h.encode(&mut b);
        assert_eq!(b.len(), HEADER_LEN);
        assert_eq!(&b[..8], b"KFDOVLB1");
        assert_eq!(&b[8..16], &10007u64.to_le_bytes());
        assert_eq!(&b[16..20], &32u32.to_le_bytes());
        assert_eq!(&b[20..24], &1u32.to_le_bytes());
        assert_eq!(&b[24..28], &2u32.to_le_bytes());
        assert_eq!(&b[28..32], &[0xff; 4]);
        assert_eq!(&b[32..40], &0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(Header::decode(&b), Some(h));
        assert_eq!(Header::decode(&b[..HEADER_LEN - 1]), None);
        b[0] = b'X';
        assert_eq!(Header::decode(&b), None);
    }

    #[test]
    fn add_and_order() {
        let mut a = Counts::ZERO;
        assert_eq!(a, Counts::default());
        let b = Counts {
            insns: [1, 2],
            taken: [3, 4],
            cond: [5, 6],
            l1i_access: [7, 8],
            l1i_miss: [9, 10],
            itlb_access: [11, 12],
            itlb_miss: [13, 14],
        };
        a.add(&b);
        a.add(&b);
        assert_eq!(
            a.by_side(),
            [[2, 6, 10, 14, 18, 22, 26], [4, 8, 12, 16, 20, 24, 28]]
        );
        assert_eq!(Counts::from_sides(&a.by_side()), a);
    }
}
