//! Turning the mappings the plugin saw into the executable-segment MMAP2 events the kernel
//! would have written, with build-ids.
//!
//! Two sources (see the plugin): the guest's own `mmap(PROT_EXEC)` calls, exact as they
//! are; and the host's /proc/self/maps for the images QEMU loaded itself, where QEMU maps
//! guest code without execute permission and neighbouring mappings merge. For the latter
//! the load bias is computed from the ELF program headers and one MMAP2 per executable
//! PT_LOAD segment is produced, as the kernel's ELF loader would map it.

use crate::emulated::stream_format::MAP_FROM_MAPS;
use kfdo_elf::{Binary, ElfError, LoadSegment};
use kfdo_perf::OwnedMmap;
use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

const PAGE: u64 = 4096;

/// What the recorder needs of an ELF file (read with `kfdo_elf`): its loadable segments
/// and its build-id.
#[derive(Debug, Clone, Default)]
pub struct ElfInfo {
    pub loads: Vec<LoadSegment>,
    pub build_id: Option<Vec<u8>>,
}

impl ElfInfo {
    pub fn from_binary(b: &Binary) -> ElfInfo {
        ElfInfo {
            loads: b.load_segments().to_vec(),
            build_id: b.build_id().map(<[u8]>::to_vec),
        }
    }

    /// Reads an ELF64 file's program headers and GNU build-id.
    pub fn open(path: &Path) -> Result<ElfInfo, ElfError> {
        Binary::open(path).map(|b| ElfInfo::from_binary(&b))
    }

    /// As [`ElfInfo::open`], None for anything that is not a readable ELF64 file (the
    /// mapping is then kept without a build-id).
    pub fn read(path: &Path) -> Option<ElfInfo> {
        ElfInfo::open(path).ok()
    }

    /// Load bias of a mapping of this file at `start` holding file offset `pgoff`.
    pub fn bias_for(&self, start: u64, pgoff: u64) -> Option<u64> {
        let s = self.loads.iter().find(|s| {
            let lo = s.offset & !(PAGE - 1);
            lo <= pgoff && pgoff < s.offset + s.filesz.max(1)
        })?;
        let vpage = s.vaddr & !(PAGE - 1);
        Some(start.wrapping_sub(vpage + (pgoff - (s.offset & !(PAGE - 1)))))
    }

    /// The executable segments as the kernel maps them at `bias`: (start, len, pgoff).
    pub fn exec_maps(&self, bias: u64) -> Vec<(u64, u64, u64)> {
        self.loads
            .iter()
            .filter(|s| s.executable && s.filesz > 0)
            .map(|s| {
                let start = (bias.wrapping_add(s.vaddr)) & !(PAGE - 1);
                let end = (bias.wrapping_add(s.vaddr) + s.filesz + PAGE - 1) & !(PAGE - 1);
                (start, end - start, s.offset & !(PAGE - 1))
            })
            .collect()
    }
}

/// One file mapping of one process: what the plugin's MMAP records say (read by
/// `stream.rs`), what `normalize` turns them into, and what `perfout.rs` writes as an
/// MMAP2 event ([`Map::to_perf`]). One struct for all three; not `kfdo_perf::OwnedMmap`
/// itself because the path stays bytes (a Linux path need not be UTF-8, and the ELF file
/// is opened and its build-id looked up by these bytes; perf.data gets the lossy string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Map {
    pub time: u64,
    pub pid: i32,
    pub tid: i32,
    pub start: u64,
    pub len: u64,
    pub pgoff: u64,
    pub prot: u32,
    /// The guest's mmap flags, or `MAP_FROM_MAPS` for a raw record read from the host.
    pub flags: u32,
    pub maj: u32,
    pub min: u32,
    pub ino: u64,
    pub path: Vec<u8>,
}

impl Map {
    /// The perf writer's record: cpumode `misc`, an MMAP2 event unless `is_mmap2` is false
    /// (the kernel image, which perf writes as an MMAP).
    pub fn to_perf(&self, misc: u16, is_mmap2: bool) -> OwnedMmap {
        OwnedMmap {
            pid: self.pid as u32,
            tid: self.tid as u32,
            start: self.start,
            len: self.len,
            pgoff: self.pgoff,
            filename: String::from_utf8_lossy(&self.path).to_string(),
            prot: self.prot,
            flags: self.flags,
            build_id: None,
            maj: self.maj,
            min: self.min,
            ino: self.ino,
            ino_generation: 0,
            misc,
            is_mmap2,
            time: self.time,
        }
    }
}

/// Normalizes the raw mapping records. `first_pc` (per process tree: the first guest
/// instruction) picks the guest's ELF interpreter out of the host's mappings of the same
/// file. ELF files are read once each (`elves` caches them, also for build-ids).
pub fn normalize(
    raw: &[Map],
    first_pc: Option<u64>,
    exe: &Path,
    elves: &mut HashMap<Vec<u8>, Option<ElfInfo>>,
) -> Vec<Map> {
    let mut out = Vec::new();
    let mut loader: HashMap<(i32, Vec<u8>), Vec<&Map>> = HashMap::new();
    for r in raw {
        if r.flags & MAP_FROM_MAPS != 0 {
            loader.entry((r.pid, r.path.clone())).or_default().push(r);
        } else {
            out.push(r.clone());
        }
    }
    let exe = exe.as_os_str().as_bytes();
    let mut keys: Vec<_> = loader.keys().cloned().collect();
    keys.sort();
    for key in keys {
        let recs = &loader[&key];
        let info = elves
            .entry(key.1.clone())
            .or_insert_with(|| ElfInfo::read(Path::new(std::ffi::OsStr::from_bytes(&key.1))));
        let info = match info {
            Some(i) => i,
            None => continue,
        };
        // Group the host mappings by load bias; keep the group holding the first
        // instruction (the interpreter, or a static program), and for the program itself
        // any group.
        let mut biases: Vec<u64> = Vec::new();
        for r in recs {
            if let Some(b) = info.bias_for(r.start, r.pgoff) {
                let holds_pc = first_pc.is_some_and(|pc| r.start <= pc && pc < r.start + r.len);
                if holds_pc {
                    biases.insert(0, b);
                } else if key.1 == exe && !biases.contains(&b) {
                    biases.push(b);
                }
            }
        }
        let bias = match biases.first() {
            Some(&b) => b,
            None => continue,
        };
        let r0 = recs[0];
        for (start, len, pgoff) in info.exec_maps(bias) {
            out.push(Map {
                time: r0.time,
                pid: r0.pid,
                tid: r0.tid,
                start,
                len,
                pgoff,
                prot: 5,
                flags: 2,
                maj: r0.maj,
                min: r0.min,
                ino: r0.ino,
                path: key.1.clone(),
            });
        }
    }
    out.sort_by_key(|m| m.time);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(vaddr: u64, offset: u64, filesz: u64, flags: u32) -> LoadSegment {
        LoadSegment {
            vaddr,
            memsz: filesz,
            offset,
            filesz,
            flags,
            executable: flags & 1 != 0,
            align: PAGE,
        }
    }

    #[test]
    fn reads_self() {
        // Any ELF on the machine: the test binary itself.
        let me = std::env::current_exe().unwrap();
        let info = ElfInfo::read(&me).expect("elf");
        assert!(info.loads.iter().any(|s| s.executable));
        assert!(ElfInfo::read(Path::new("/nonexistent/x")).is_none());
    }

    #[test]
    fn to_perf_keeps_every_field() {
        let m = Map {
            time: 7,
            pid: -1,
            tid: 3,
            start: 0x4000_1000,
            len: 0x2000,
            pgoff: 0x1000,
            prot: 5,
            flags: 2,
            maj: 0xfe,
            min: 1,
            ino: 99,
            path: b"/lib/\xffx.so".to_vec(),
        };
        let o = m.to_perf(kfdo_perf::consts::misc::USER, true);
        assert_eq!((o.pid, o.tid, o.time), (u32::MAX, 3, 7));
        assert_eq!((o.start, o.len, o.pgoff), (0x4000_1000, 0x2000, 0x1000));
        assert_eq!((o.prot, o.flags, o.maj, o.min, o.ino), (5, 2, 0xfe, 1, 99));
        assert_eq!(o.filename, "/lib/\u{fffd}x.so");
        assert_eq!(
            (o.misc, o.is_mmap2, o.build_id, o.ino_generation),
            (kfdo_perf::consts::misc::USER, true, None, 0)
        );
        assert!(!m.to_perf(kfdo_perf::consts::misc::KERNEL, false).is_mmap2);
    }

    #[test]
    fn raw_records_pass_through_and_loader_ones_need_the_elf() {
        let raw = |flags: u32, path: &[u8]| Map {
            time: 1,
            pid: 10,
            tid: 10,
            start: 0x7000_0000,
            len: 0x1000,
            pgoff: 0,
            prot: 5,
            flags,
            maj: 0,
            min: 0,
            ino: 0,
            path: path.to_vec(),
        };
        let guest = raw(2, b"/lib/libx.so");
        let unreadable = raw(MAP_FROM_MAPS, b"/nonexistent/exe");
        let mut elves = HashMap::new();
        let out = normalize(
            &[guest.clone(), unreadable],
            None,
            Path::new("/nonexistent/exe"),
            &mut elves,
        );
        assert_eq!(out, vec![guest]);
        assert!(matches!(elves.get(&b"/nonexistent/exe"[..]), Some(None)));
    }

    #[test]
    fn bias_from_merged_mapping() {
        let info = ElfInfo {
            loads: vec![segment(0, 0, 0x600, 4), segment(0x1600, 0x600, 0x200, 5)],
            build_id: None,
        };
        // One host mapping from offset 0 at 0x4000000000.
        assert_eq!(info.bias_for(0x40_0000_0000, 0), Some(0x40_0000_0000));
        assert_eq!(
            info.exec_maps(0x40_0000_0000),
            vec![(0x40_0000_1000, 0x1000, 0)]
        );
    }
}
