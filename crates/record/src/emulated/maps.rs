//! Turning the mappings the plugin saw into the executable-segment MMAP2 events the kernel
//! would have written, with build-ids.
//!
//! Two sources (see the plugin): the guest's own `mmap(PROT_EXEC)` calls, exact as they
//! are; and the host's /proc/self/maps for the images QEMU loaded itself, where QEMU maps
//! guest code without execute permission and neighbouring mappings merge. For the latter
//! the load bias is computed from the ELF program headers and one MMAP2 per executable
//! PT_LOAD segment is produced, as the kernel's ELF loader would map it.

use crate::emulated::stream::{MmapRec, MAP_FROM_MAPS};
use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

const PAGE: u64 = 4096;
const PT_LOAD: u32 = 1;
const PT_NOTE: u32 = 4;
const PF_X: u32 = 1;
const NT_GNU_BUILD_ID: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub vaddr: u64,
    pub memsz: u64,
    pub offset: u64,
    pub filesz: u64,
    pub flags: u32,
}

/// What the recorder needs of an ELF file: its loadable segments and its build-id.
#[derive(Debug, Clone, Default)]
pub struct ElfInfo {
    pub loads: Vec<Segment>,
    pub build_id: Option<Vec<u8>>,
}

fn rd<const N: usize>(b: &[u8], off: u64) -> Option<[u8; N]> {
    let o = usize::try_from(off).ok()?;
    b.get(o..o.checked_add(N)?)?.try_into().ok()
}
fn r16(b: &[u8], o: u64) -> Option<u16> {
    rd::<2>(b, o).map(u16::from_le_bytes)
}
fn r32(b: &[u8], o: u64) -> Option<u32> {
    rd::<4>(b, o).map(u32::from_le_bytes)
}
fn r64(b: &[u8], o: u64) -> Option<u64> {
    rd::<8>(b, o).map(u64::from_le_bytes)
}

impl ElfInfo {
    /// Parses a little-endian ELF64 file's program headers and GNU build-id note.
    /// Returns None for anything else (the mapping is then kept without a build-id).
    pub fn parse(b: &[u8]) -> Option<ElfInfo> {
        if b.len() < 64 || &b[..4] != b"\x7fELF" || b[4] != 2 || b[5] != 1 {
            return None;
        }
        let phoff = r64(b, 32)?;
        let phentsize = r16(b, 54)? as u64;
        let phnum = r16(b, 56)? as u64;
        let mut info = ElfInfo::default();
        for i in 0..phnum {
            let p = phoff + i * phentsize;
            let ty = r32(b, p)?;
            let seg = Segment {
                flags: r32(b, p + 4)?,
                offset: r64(b, p + 8)?,
                vaddr: r64(b, p + 16)?,
                filesz: r64(b, p + 32)?,
                memsz: r64(b, p + 40)?,
            };
            match ty {
                PT_LOAD => info.loads.push(seg),
                PT_NOTE if info.build_id.is_none() => {
                    info.build_id = build_id_in_notes(b, seg.offset, seg.filesz)
                }
                _ => {}
            }
        }
        Some(info)
    }

    pub fn read(path: &Path) -> Option<ElfInfo> {
        let data = std::fs::read(path).ok()?;
        ElfInfo::parse(&data)
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
            .filter(|s| s.flags & PF_X != 0 && s.filesz > 0)
            .map(|s| {
                let start = (bias.wrapping_add(s.vaddr)) & !(PAGE - 1);
                let end = (bias.wrapping_add(s.vaddr) + s.filesz + PAGE - 1) & !(PAGE - 1);
                (start, end - start, s.offset & !(PAGE - 1))
            })
            .collect()
    }
}

fn build_id_in_notes(b: &[u8], off: u64, size: u64) -> Option<Vec<u8>> {
    let mut p = off;
    let end = off.checked_add(size)?;
    while p + 12 <= end {
        let namesz = r32(b, p)? as u64;
        let descsz = r32(b, p + 4)? as u64;
        let ty = r32(b, p + 8)?;
        let name_at = p + 12;
        let desc_at = name_at + ((namesz + 3) & !3);
        if ty == NT_GNU_BUILD_ID
            && namesz == 4
            && b.get(name_at as usize..name_at as usize + 4)? == b"GNU\0"
        {
            return Some(
                b.get(desc_at as usize..(desc_at + descsz) as usize)?
                    .to_vec(),
            );
        }
        p = desc_at + ((descsz + 3) & !3);
    }
    None
}

/// An MMAP2 event to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Map {
    pub time: u64,
    pub pid: i32,
    pub tid: i32,
    pub start: u64,
    pub len: u64,
    pub pgoff: u64,
    pub prot: u32,
    pub flags: u32,
    pub maj: u32,
    pub min: u32,
    pub ino: u64,
    pub path: Vec<u8>,
}

/// Normalizes the raw mapping records. `first_pc` (per process tree: the first guest
/// instruction) picks the guest's ELF interpreter out of the host's mappings of the same
/// file. ELF files are read once each (`elves` caches them, also for build-ids).
pub fn normalize(
    raw: &[MmapRec],
    first_pc: Option<u64>,
    exe: &Path,
    elves: &mut HashMap<Vec<u8>, Option<ElfInfo>>,
) -> Vec<Map> {
    let mut out = Vec::new();
    let mut loader: HashMap<(i32, Vec<u8>), Vec<&MmapRec>> = HashMap::new();
    for r in raw {
        if r.flags & MAP_FROM_MAPS != 0 {
            loader.entry((r.pid, r.path.clone())).or_default().push(r);
        } else {
            out.push(Map {
                time: r.time,
                pid: r.pid,
                tid: r.tid,
                start: r.addr,
                len: r.len,
                pgoff: r.pgoff,
                prot: r.prot,
                flags: r.flags,
                maj: r.maj,
                min: r.min,
                ino: r.ino,
                path: r.path.clone(),
            });
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
            if let Some(b) = info.bias_for(r.addr, r.pgoff) {
                let holds_pc = first_pc.is_some_and(|pc| r.addr <= pc && pc < r.addr + r.len);
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

    #[test]
    fn reads_self() {
        // Any ELF on the machine: the test binary itself.
        let me = std::env::current_exe().unwrap();
        let info = ElfInfo::read(&me).expect("elf");
        assert!(info.loads.iter().any(|s| s.flags & PF_X != 0));
    }

    #[test]
    fn bias_from_merged_mapping() {
        let info = ElfInfo {
            loads: vec![
                Segment {
                    vaddr: 0,
                    memsz: 0x600,
                    offset: 0,
                    filesz: 0x600,
                    flags: 4,
                },
                Segment {
                    vaddr: 0x1600,
                    memsz: 0x200,
                    offset: 0x600,
                    filesz: 0x200,
                    flags: 5,
                },
            ],
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
