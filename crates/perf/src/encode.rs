//! Record encoding shared by the file-mode and pipe-mode writers: each function appends
//! one complete record (header, body, trailing sample_id) to a buffer.

use crate::attr::EventAttr;
use crate::consts::{
    misc, read_format as rf, record as rt, sample as st, MAP_PRIVATE, PROT_EXEC, PROT_READ,
};
use crate::features::encode_string;
use crate::record::{BuildIdEntry, Fork, OwnedMmap};
use crate::sample::BranchEntry;

/// What to write for one sample. Fields the attr's `sample_type` does not name are ignored;
/// fields the writer cannot fill (READ values, registers, user stack, AUX) are written as
/// their valid empty form.
#[derive(Debug, Clone, Copy)]
pub struct SampleOut<'a> {
    /// cpumode bits (default: user).
    pub misc: u16,
    pub ip: u64,
    pub pid: u32,
    pub tid: u32,
    pub time: u64,
    pub addr: u64,
    /// The event id; `None` = the attr's first id.
    pub id: Option<u64>,
    pub stream_id: u64,
    pub cpu: u32,
    pub period: u64,
    /// Innermost first, with PERF_CONTEXT_* markers if wanted.
    pub callchain: &'a [u64],
    pub raw: &'a [u8],
    /// Newest first, as perf stores them.
    pub branches: &'a [BranchEntry],
    /// Written when the attr has PERF_SAMPLE_BRANCH_HW_INDEX; `None` then writes `u64::MAX`
    /// (perf's "not available").
    pub hw_idx: Option<u64>,
    pub weight: u64,
    pub data_src: u64,
    pub transaction: u64,
    pub phys_addr: u64,
    pub cgroup: u64,
    pub data_page_size: u64,
    pub code_page_size: u64,
}

impl Default for SampleOut<'_> {
    fn default() -> Self {
        SampleOut {
            misc: misc::USER,
            ip: 0,
            pid: 0,
            tid: 0,
            time: 0,
            addr: 0,
            id: None,
            stream_id: 0,
            cpu: 0,
            period: 1,
            callchain: &[],
            raw: &[],
            branches: &[],
            hw_idx: None,
            weight: 0,
            data_src: 0,
            transaction: 0,
            phys_addr: 0,
            cgroup: 0,
            data_page_size: 0,
            code_page_size: 0,
        }
    }
}

/// Why a record could not be encoded (turned into `PerfError::InvalidInput` by the writer).
pub(crate) type EncodeError = String;

pub(crate) struct Encoder {
    pub attrs: Vec<EventAttr>,
    /// The latest timestamp written: the time of non-sample records given none.
    pub now: u64,
}

fn put64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_le_bytes());
}
fn put32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}

/// Appends a NUL-terminated string padded to a multiple of 8 bytes.
fn put_name(b: &mut Vec<u8>, s: &[u8]) {
    b.extend_from_slice(s);
    let padded = (s.len() + 1).div_ceil(8) * 8;
    b.resize(b.len() + padded - s.len(), 0);
}

/// Starts a record: writes a header with size 0, to be patched by `end`.
fn begin(b: &mut Vec<u8>, kind: u32, misc: u16) -> usize {
    let at = b.len();
    put32(b, kind);
    b.extend_from_slice(&misc.to_le_bytes());
    b.extend_from_slice(&0u16.to_le_bytes());
    at
}

fn end(b: &mut [u8], at: usize) -> Result<(), EncodeError> {
    let size = b.len() - at;
    let Ok(size16) = u16::try_from(size) else {
        return Err(format!("a record of {size} bytes does not fit perf's 16-bit record size (64 KiB); shorten the branch stack, callchain or raw data"));
    };
    b[at + 6..at + 8].copy_from_slice(&size16.to_le_bytes());
    Ok(())
}

impl Encoder {
    /// Makes the attrs writable: every attr gets at least one id, and with several attrs
    /// every sample carries IDENTIFIER so readers can tell them apart (as perf record does).
    pub fn new(mut attrs: Vec<EventAttr>) -> Result<Encoder, EncodeError> {
        if attrs.is_empty() {
            return Err("no event attrs given; a perf.data needs at least one event".into());
        }
        let mut next = attrs
            .iter()
            .flat_map(|a| a.ids.iter().copied())
            .max()
            .unwrap_or(0)
            + 1;
        let several = attrs.len() > 1;
        for a in &mut attrs {
            if a.ids.is_empty() {
                a.ids.push(next);
                next += 1;
            }
            if several {
                a.sample_type |= st::IDENTIFIER;
            }
            a.size = crate::attr::ATTR_SIZE_WRITTEN as u32;
        }
        let mut seen = rustc_hash::FxHashSet::default();
        for a in &attrs {
            for &id in &a.ids {
                if !seen.insert(id) {
                    return Err(format!(
                        "event id {id} is given to two events; ids must be unique"
                    ));
                }
            }
        }
        Ok(Encoder { attrs, now: 0 })
    }

    /// The sample_id trailer of non-sample records (when attr 0 has sample_id_all).
    fn sample_id(&self, b: &mut Vec<u8>, pid: u32, tid: u32, time: u64) {
        let a = &self.attrs[0];
        if !a.sample_id_all {
            return;
        }
        let t = a.sample_type;
        let id = a.ids.first().copied().unwrap_or(0);
        if t & st::TID != 0 {
            put32(b, pid);
            put32(b, tid);
        }
        if t & st::TIME != 0 {
            put64(b, time);
        }
        if t & st::ID != 0 {
            put64(b, id);
        }
        if t & st::STREAM_ID != 0 {
            put64(b, 0);
        }
        if t & st::CPU != 0 {
            put64(b, 0);
        }
        if t & st::IDENTIFIER != 0 {
            put64(b, id);
        }
    }

    fn tick(&mut self, t: u64) -> u64 {
        if t == 0 {
            self.now
        } else {
            self.now = self.now.max(t);
            t
        }
    }

    pub fn mmap(
        &mut self,
        b: &mut Vec<u8>,
        m: &OwnedMmap,
        as_mmap2: bool,
    ) -> Result<(), EncodeError> {
        let time = self.tick(m.time);
        let mut misc_bits = m.misc & !misc::MMAP_BUILD_ID;
        if as_mmap2 && m.build_id.is_some() {
            misc_bits |= misc::MMAP_BUILD_ID;
        }
        let at = begin(b, if as_mmap2 { rt::MMAP2 } else { rt::MMAP }, misc_bits);
        put32(b, m.pid);
        put32(b, m.tid);
        put64(b, m.start);
        put64(b, m.len);
        put64(b, m.pgoff);
        if as_mmap2 {
            if let Some(id) = &m.build_id {
                if id.len() > 20 {
                    return Err(format!(
                        "build-id of {} is {} bytes; MMAP2 holds at most 20",
                        m.filename,
                        id.len()
                    ));
                }
                b.push(id.len() as u8);
                b.extend_from_slice(&[0, 0, 0]);
                b.extend_from_slice(id);
                b.resize(b.len() + 20 - id.len(), 0);
            } else {
                put32(b, m.maj);
                put32(b, m.min);
                put64(b, m.ino);
                put64(b, m.ino_generation);
            }
            // prot/flags left unset would make perf treat the map as data and never resolve
            // IPs in it: default to an executable private mapping.
            let (prot, flags) = if m.prot == 0 && m.flags == 0 {
                (
                    if m.misc & misc::MMAP_DATA != 0 {
                        PROT_READ
                    } else {
                        PROT_READ | PROT_EXEC
                    },
                    MAP_PRIVATE,
                )
            } else {
                (m.prot, m.flags)
            };
            put32(b, prot);
            put32(b, flags);
        }
        put_name(b, m.filename.as_bytes());
        self.sample_id(b, m.pid, m.tid, time);
        end(b, at)
    }

    pub fn comm(
        &mut self,
        b: &mut Vec<u8>,
        pid: u32,
        tid: u32,
        comm: &str,
        exec: bool,
    ) -> Result<(), EncodeError> {
        let at = begin(b, rt::COMM, if exec { misc::COMM_EXEC } else { 0 });
        put32(b, pid);
        put32(b, tid);
        put_name(b, comm.as_bytes());
        let now = self.now;
        self.sample_id(b, pid, tid, now);
        end(b, at)
    }

    pub fn fork(&mut self, b: &mut Vec<u8>, f: &Fork, exit: bool) -> Result<(), EncodeError> {
        let time = self.tick(f.time);
        let at = begin(b, if exit { rt::EXIT } else { rt::FORK }, 0);
        put32(b, f.pid);
        put32(b, f.ppid);
        put32(b, f.tid);
        put32(b, f.ptid);
        put64(b, time);
        self.sample_id(b, f.pid, f.tid, time);
        end(b, at)
    }

    pub fn sample(
        &mut self,
        b: &mut Vec<u8>,
        attr: usize,
        s: &SampleOut<'_>,
    ) -> Result<(), EncodeError> {
        let Some(a) = self.attrs.get(attr) else {
            return Err(format!(
                "sample for event {attr}, but only {} events were declared",
                self.attrs.len()
            ));
        };
        let t = a.sample_type;
        let id = s.id.or(a.ids.first().copied()).unwrap_or(0);
        let at = begin(b, rt::SAMPLE, s.misc);
        if t & st::IDENTIFIER != 0 {
            put64(b, id);
        }
        if t & st::IP != 0 {
            put64(b, s.ip);
        }
        if t & st::TID != 0 {
            put32(b, s.pid);
            put32(b, s.tid);
        }
        if t & st::TIME != 0 {
            put64(b, s.time);
        }
        if t & st::ADDR != 0 {
            put64(b, s.addr);
        }
        if t & st::ID != 0 {
            put64(b, id);
        }
        if t & st::STREAM_ID != 0 {
            put64(b, s.stream_id);
        }
        if t & st::CPU != 0 {
            put32(b, s.cpu);
            put32(b, 0);
        }
        if t & st::PERIOD != 0 {
            put64(b, s.period);
        }
        if t & st::READ != 0 {
            // One zero counter (or an empty group) in the attr's read_format.
            let f = a.read_format;
            let group = f & rf::GROUP != 0;
            if group {
                put64(b, 0);
            }
            if f & rf::TOTAL_TIME_ENABLED != 0 {
                put64(b, 0);
            }
            if f & rf::TOTAL_TIME_RUNNING != 0 {
                put64(b, 0);
            }
            if !group {
                put64(b, 0);
                if f & rf::ID != 0 {
                    put64(b, id);
                }
                if f & rf::LOST != 0 {
                    put64(b, 0);
                }
            }
        }
        if t & st::CALLCHAIN != 0 {
            put64(b, s.callchain.len() as u64);
            for &ip in s.callchain {
                put64(b, ip);
            }
        }
        if t & st::RAW != 0 {
            let size = u32::try_from(s.raw.len()).map_err(|_| "raw data over 4 GiB".to_string())?;
            put32(b, size);
            b.extend_from_slice(s.raw);
            b.resize(b.len() + (8 - (4 + s.raw.len()) % 8) % 8, 0);
        }
        if t & st::BRANCH_STACK != 0 {
            put64(b, s.branches.len() as u64);
            if a.has_branch_hw_idx() {
                put64(b, s.hw_idx.unwrap_or(u64::MAX));
            }
            for e in s.branches {
                put64(b, e.from);
                put64(b, e.to);
                put64(b, e.flags);
            }
            if a.branch_sample_type & crate::consts::branch::COUNTERS != 0 {
                b.resize(b.len() + 8 * s.branches.len(), 0);
            }
        }
        if t & st::REGS_USER != 0 {
            put64(b, 0); // PERF_SAMPLE_REGS_ABI_NONE: no registers follow
        }
        if t & st::STACK_USER != 0 {
            put64(b, 0); // size 0: no data and no dyn_size
        }
        if t & (st::WEIGHT | st::WEIGHT_STRUCT) != 0 {
            put64(b, s.weight);
        }
        for (bit, v) in [(st::DATA_SRC, s.data_src), (st::TRANSACTION, s.transaction)] {
            if t & bit != 0 {
                put64(b, v);
            }
        }
        if t & st::REGS_INTR != 0 {
            put64(b, 0);
        }
        for (bit, v) in [
            (st::PHYS_ADDR, s.phys_addr),
            (st::CGROUP, s.cgroup),
            (st::DATA_PAGE_SIZE, s.data_page_size),
            (st::CODE_PAGE_SIZE, s.code_page_size),
        ] {
            if t & bit != 0 {
                put64(b, v);
            }
        }
        if t & st::AUX != 0 {
            put64(b, 0);
        }
        self.tick(s.time);
        end(b, at)
    }

    /// A build-id event (`struct perf_record_header_build_id`), as a record (pipe mode,
    /// type HEADER_BUILD_ID) or as a BUILD_ID feature entry (file mode, same layout).
    pub fn build_id(b: &mut Vec<u8>, e: &BuildIdEntry) -> Result<(), EncodeError> {
        if e.build_id.len() > 20 {
            return Err(format!(
                "build-id of {} is {} bytes; perf holds at most 20",
                e.filename,
                e.build_id.len()
            ));
        }
        let at = begin(
            b,
            rt::HEADER_BUILD_ID,
            (e.misc & misc::CPUMODE_MASK) | misc::BUILD_ID_SIZE,
        );
        put32(b, e.pid as u32);
        b.extend_from_slice(&e.build_id);
        b.resize(b.len() + 20 - e.build_id.len(), 0);
        b.push(e.build_id.len() as u8);
        b.extend_from_slice(&[0, 0, 0]);
        // perf pads build-id file names to 64 bytes (NAME_ALIGN).
        let name = e.filename.as_bytes();
        b.extend_from_slice(name);
        let padded = (name.len() + 1).div_ceil(64) * 64;
        b.resize(b.len() + padded - name.len(), 0);
        end(b, at)
    }

    /// HEADER_ATTR (pipe mode): the attr followed by its ids.
    pub fn header_attr(b: &mut Vec<u8>, a: &EventAttr) -> Result<(), EncodeError> {
        let at = begin(b, rt::HEADER_ATTR, 0);
        b.extend_from_slice(&a.encode());
        for &id in &a.ids {
            put64(b, id);
        }
        end(b, at)
    }

    /// HEADER_FEATURE (pipe mode): feature id and its section bytes.
    pub fn header_feature(b: &mut Vec<u8>, id: u32, data: &[u8]) -> Result<(), EncodeError> {
        let at = begin(b, rt::HEADER_FEATURE, 0);
        put64(b, u64::from(id));
        b.extend_from_slice(data);
        b.resize(b.len() + (8 - data.len() % 8) % 8, 0);
        end(b, at)
    }

    /// EVENT_DESC section bytes for attrs that all have names.
    pub fn event_desc(&self) -> Option<Vec<u8>> {
        if !self.attrs.iter().all(|a| a.name.is_some()) {
            return None;
        }
        let mut b = Vec::new();
        put32(&mut b, self.attrs.len() as u32);
        put32(&mut b, crate::attr::ATTR_SIZE_WRITTEN as u32);
        for a in &self.attrs {
            b.extend_from_slice(&a.encode());
            put32(&mut b, a.ids.len() as u32);
            encode_string(&mut b, a.name.as_deref().unwrap_or(""));
            for &id in &a.ids {
                put64(&mut b, id);
            }
        }
        Some(b)
    }
}
