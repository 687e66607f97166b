//! The guest's file mappings (user mode), as MMAP records: the images QEMU loaded itself,
//! from the host's /proc/self/maps at the first executed block, and the guest's own
//! `mmap(PROT_EXEC)` calls of files.

use super::config::cfg;
use super::libc_api::now_ns;
use super::proc_maps::parse_maps_line;
use super::stream_encode::{self, Mmap};
use super::stream_format::MAP_FROM_MAPS;
use super::stream_write::flush;
use super::vcpu::{refresh_ids, Vcpu};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};

static MAPS_DONE: AtomicBool = AtomicBool::new(false);
/// Host address minus guest address of guest code (user mode); u64::MAX until known.
static GUEST_BASE: AtomicU64 = AtomicU64::new(u64::MAX);

pub fn guest_base_unknown() -> bool {
    GUEST_BASE.load(Relaxed) == u64::MAX
}

/// The guest base, from one instruction's host and guest addresses.
pub fn set_guest_base(host: u64, guest: u64) {
    GUEST_BASE.store(host.wrapping_sub(guest), Relaxed);
}

/// At a thread's first block: in user mode, the first of all sends the initial mappings.
pub fn at_first_block(v: &mut Vcpu, start: u64) {
    if !MAPS_DONE.load(Relaxed) && !v.system && !MAPS_DONE.swap(true, AcqRel) {
        initial_maps(v, start);
        flush(&mut v.buf);
    }
}

/// At the first executed block: the file mappings QEMU made for the guest itself (the
/// program, and the ELF interpreter holding the first instruction). QEMU maps guest code
/// without host execute permission, and the host merges neighbouring mappings, so these
/// are sent as they are (flag MAP_FROM_MAPS) and the reader finds the load bias from the
/// program headers.
fn initial_maps(v: &mut Vcpu, first_pc: u64) {
    let base = GUEST_BASE.load(Relaxed);
    let base = if base == u64::MAX { 0 } else { base };
    stream_encode::info(&mut v.buf, base, first_pc);
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
        let rec = Mmap {
            time: now_ns(),
            pid: v.pid,
            tid: v.tid,
            addr: m.start - base,
            len: m.end - m.start,
            pgoff: m.off,
            prot: m.prot,
            flags: MAP_FROM_MAPS,
            maj: m.maj,
            min: m.min,
            ino: m.ino,
            path: m.path,
        };
        stream_encode::mmap(&mut v.buf, &rec);
    }
}

/// A guest `mmap` returned `addr`: an MMAP record if it mapped a file with PROT_EXEC.
/// The guest's file descriptors are QEMU's own (qemu-user), so /proc/self/fd names the
/// file.
pub fn guest_mmap(v: &mut Vcpu, addr: u64, len: u64, prot: u64, flags: u64, fd: u64, off: u64) {
    const PROT_EXEC: u64 = 4;
    const MAP_ANONYMOUS: u64 = 0x20;
    if prot & PROT_EXEC == 0 || flags & MAP_ANONYMOUS != 0 || (fd as i64) < 0 {
        return;
    }
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
    let rec = Mmap {
        time: now_ns(),
        pid: v.pid,
        tid: v.tid,
        addr,
        len,
        pgoff: off,
        prot: prot as u32,
        flags: flags as u32,
        maj,
        min,
        ino,
        path: path.as_os_str().as_bytes(),
    };
    stream_encode::mmap(&mut v.buf, &rec);
    flush(&mut v.buf);
}
