//! The non-sample records consumers need (MMAP/MMAP2, COMM, FORK/EXIT, LOST, build-ids),
//! decoded zero-copy; everything else is reported as `Record::Other`.

use crate::bytes::{cstr, str_prefix, u16_at, u32_at, u64_at, Cursor};
use crate::consts::{misc, PROT_EXEC};
use crate::sample::{CpuMode, Sample};

/// One record of the data section, borrowing from the file.
// Samples dominate and are passed by value on purpose: boxing would allocate per sample.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Record<'a> {
    Sample(Sample<'a>),
    /// PERF_RECORD_MMAP and PERF_RECORD_MMAP2.
    Mmap(Mmap<'a>),
    Comm(Comm<'a>),
    Fork(Fork),
    Exit(Fork),
    /// PERF_RECORD_LOST (`lost` samples dropped by the kernel) and PERF_RECORD_LOST_SAMPLES.
    Lost {
        lost: u64,
    },
    /// PERF_RECORD_HEADER_BUILD_ID (pipe mode, or `perf inject -b`).
    BuildId(BuildIdEntry),
    /// Any other record, by `perf_event_header.type` (see [`crate::consts::record`]).
    Other {
        kind: u32,
        misc: u16,
    },
}

/// A mapping of a file (or anonymous/special region) into a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mmap<'a> {
    /// `u32::MAX` (-1) for kernel maps.
    pub pid: u32,
    pub tid: u32,
    pub start: u64,
    pub len: u64,
    pub pgoff: u64,
    /// The path when it is UTF-8 (the usual case); else its longest UTF-8 prefix. The exact
    /// bytes are in `filename_bytes`.
    pub filename: &'a str,
    pub filename_bytes: &'a [u8],
    /// MMAP2 only (PROT_* bits); 0 for MMAP.
    pub prot: u32,
    /// MMAP2 only (MAP_* bits); 0 for MMAP.
    pub flags: u32,
    /// MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID: the build-id, trimmed to its size.
    pub build_id: Option<&'a [u8]>,
    /// MMAP2 without build-id: device major/minor, inode and inode generation.
    pub maj: u32,
    pub min: u32,
    pub ino: u64,
    pub ino_generation: u64,
    pub misc: u16,
    pub is_mmap2: bool,
}

impl<'a> Mmap<'a> {
    pub fn cpumode(&self) -> CpuMode {
        CpuMode::from_misc(self.misc)
    }
    /// MMAP: not a data mapping (`!PERF_RECORD_MISC_MMAP_DATA`); MMAP2: `prot & PROT_EXEC`.
    pub fn is_executable(&self) -> bool {
        if self.is_mmap2 {
            self.prot & PROT_EXEC != 0
        } else {
            self.misc & misc::MMAP_DATA == 0
        }
    }
    /// The path, lossily converted when it is not UTF-8.
    pub fn filename_lossy(&self) -> std::borrow::Cow<'a, str> {
        String::from_utf8_lossy(self.filename_bytes)
    }
    pub fn to_owned(&self) -> OwnedMmap {
        OwnedMmap {
            pid: self.pid,
            tid: self.tid,
            start: self.start,
            len: self.len,
            pgoff: self.pgoff,
            filename: self.filename_lossy().into_owned(),
            prot: self.prot,
            flags: self.flags,
            build_id: self.build_id.map(<[u8]>::to_vec),
            maj: self.maj,
            min: self.min,
            ino: self.ino,
            ino_generation: self.ino_generation,
            misc: self.misc,
            is_mmap2: self.is_mmap2,
            time: 0,
        }
    }
}

/// An owned mapping: what the writer takes and the `perf script` reader yields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OwnedMmap {
    pub pid: u32,
    pub tid: u32,
    pub start: u64,
    pub len: u64,
    pub pgoff: u64,
    pub filename: String,
    pub prot: u32,
    pub flags: u32,
    /// Written as an MMAP2 build-id record (PERF_RECORD_MISC_MMAP_BUILD_ID) when set.
    pub build_id: Option<Vec<u8>>,
    pub maj: u32,
    pub min: u32,
    pub ino: u64,
    pub ino_generation: u64,
    /// cpumode bits (and MMAP_DATA for MMAP); the writer adds MMAP_BUILD_ID itself.
    pub misc: u16,
    pub is_mmap2: bool,
    /// Timestamp for the record's sample_id (writer only; 0 = the writer's current time,
    /// i.e. the latest timestamp written so far).
    pub time: u64,
}

impl OwnedMmap {
    pub fn cpumode(&self) -> CpuMode {
        CpuMode::from_misc(self.misc)
    }
    pub fn is_executable(&self) -> bool {
        if self.is_mmap2 {
            self.prot & PROT_EXEC != 0
        } else {
            self.misc & misc::MMAP_DATA == 0
        }
    }
}

/// PERF_RECORD_COMM: a thread's name (`comm`), set at exec when `exec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comm<'a> {
    pub pid: u32,
    pub tid: u32,
    /// UTF-8 (or its longest UTF-8 prefix; exact bytes in `comm_bytes`).
    pub comm: &'a str,
    pub comm_bytes: &'a [u8],
    pub exec: bool,
}

/// PERF_RECORD_FORK and PERF_RECORD_EXIT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fork {
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    pub ptid: u32,
    pub time: u64,
}

/// A build-id of a file a profile touched (`struct perf_record_header_build_id`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BuildIdEntry {
    pub pid: i32,
    /// cpumode (KERNEL/USER/GUEST_*) and BUILD_ID_SIZE.
    pub misc: u16,
    /// Trimmed to its real size: the size byte when PERF_RECORD_MISC_BUILD_ID_SIZE is set,
    /// else 20 bytes (SHA-1).
    pub build_id: Vec<u8>,
    pub filename: String,
}

impl BuildIdEntry {
    /// The build-id as lowercase hex, as `perf buildid-list` prints it.
    pub fn build_id_hex(&self) -> String {
        hex(&self.build_id)
    }
}

pub(crate) fn hex(b: &[u8]) -> String {
    use std::fmt::Write;
    b.iter()
        .fold(String::with_capacity(b.len() * 2), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
}

/// Size of `struct perf_record_header_build_id` before the filename.
pub(crate) const BUILD_ID_EVENT_HEAD: usize = 8 + 4 + 24;

/// Decodes a build-id event (a whole record including its header). `None` if too short.
pub(crate) fn parse_build_id(rec: &[u8]) -> Option<BuildIdEntry> {
    let misc_bits = u16_at(rec, 4)?;
    let pid = u32_at(rec, 8)? as i32;
    let raw = rec.get(12..32)?;
    let n = if misc_bits & misc::BUILD_ID_SIZE != 0 {
        (*rec.get(32)? as usize).min(20)
    } else {
        20
    };
    let name = cstr(rec.get(BUILD_ID_EVENT_HEAD..)?);
    Some(BuildIdEntry {
        pid,
        misc: misc_bits,
        build_id: raw[..n].to_vec(),
        filename: String::from_utf8_lossy(name).into_owned(),
    })
}

/// Decodes a MMAP or MMAP2 body (record minus header). `Err(field)` when too short.
pub(crate) fn parse_mmap(
    body: &[u8],
    misc_bits: u16,
    is_mmap2: bool,
) -> Result<Mmap<'_>, (usize, &'static str)> {
    let mut c = Cursor::new(body);
    let f = |c: &Cursor, what| (c.pos, what);
    let pid = c.u32().ok_or(f(&c, "mmap pid"))?;
    let tid = c.u32().ok_or(f(&c, "mmap tid"))?;
    let start = c.u64().ok_or(f(&c, "mmap start"))?;
    let len = c.u64().ok_or(f(&c, "mmap len"))?;
    let pgoff = c.u64().ok_or(f(&c, "mmap pgoff"))?;
    let mut m = Mmap {
        pid,
        tid,
        start,
        len,
        pgoff,
        filename: "",
        filename_bytes: &[],
        prot: 0,
        flags: 0,
        build_id: None,
        maj: 0,
        min: 0,
        ino: 0,
        ino_generation: 0,
        misc: misc_bits,
        is_mmap2,
    };
    if is_mmap2 {
        let u = c.bytes(24).ok_or(f(&c, "mmap2 device/inode or build-id"))?;
        if misc_bits & misc::MMAP_BUILD_ID != 0 {
            let n = (u[0] as usize).min(20);
            m.build_id = Some(&u[4..4 + n]);
        } else {
            m.maj = u32_at(u, 0).unwrap_or(0);
            m.min = u32_at(u, 4).unwrap_or(0);
            m.ino = u64_at(u, 8).unwrap_or(0);
            m.ino_generation = u64_at(u, 16).unwrap_or(0);
        }
        m.prot = c.u32().ok_or(f(&c, "mmap2 prot"))?;
        m.flags = c.u32().ok_or(f(&c, "mmap2 flags"))?;
    }
    // The filename runs to its NUL; a trailing sample_id (sample_id_all) follows the padding.
    m.filename_bytes = cstr(c.rest());
    m.filename = str_prefix(m.filename_bytes);
    Ok(m)
}

pub(crate) fn parse_comm(body: &[u8], misc_bits: u16) -> Option<Comm<'_>> {
    let pid = u32_at(body, 0)?;
    let tid = u32_at(body, 4)?;
    let bytes = cstr(body.get(8..)?);
    Some(Comm {
        pid,
        tid,
        comm: str_prefix(bytes),
        comm_bytes: bytes,
        exec: misc_bits & misc::COMM_EXEC != 0,
    })
}

pub(crate) fn parse_fork(body: &[u8]) -> Option<Fork> {
    Some(Fork {
        pid: u32_at(body, 0)?,
        ppid: u32_at(body, 4)?,
        tid: u32_at(body, 8)?,
        ptid: u32_at(body, 12)?,
        time: u64_at(body, 16)?,
    })
}
