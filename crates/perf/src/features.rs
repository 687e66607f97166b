//! Feature sections (`HEADER_*` in tools/perf/util/header.h): the ids, and decoders for the
//! few that consumers read as values. Everything else is available raw.

use crate::attr::EventAttr;
use crate::bytes::{cstr, slice_at, u32_at, u64_at};

/// A feature bit of the file header's `adds_features` bitmap (and of HEADER_FEATURE
/// records in pipe mode). A newtype rather than an enum, so unknown future features
/// still have a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FeatureId(pub u32);

impl FeatureId {
    pub const TRACING_DATA: FeatureId = FeatureId(1);
    pub const BUILD_ID: FeatureId = FeatureId(2);
    pub const HOSTNAME: FeatureId = FeatureId(3);
    pub const OSRELEASE: FeatureId = FeatureId(4);
    pub const VERSION: FeatureId = FeatureId(5);
    pub const ARCH: FeatureId = FeatureId(6);
    pub const NRCPUS: FeatureId = FeatureId(7);
    pub const CPUDESC: FeatureId = FeatureId(8);
    pub const CPUID: FeatureId = FeatureId(9);
    pub const TOTAL_MEM: FeatureId = FeatureId(10);
    pub const CMDLINE: FeatureId = FeatureId(11);
    pub const EVENT_DESC: FeatureId = FeatureId(12);
    pub const CPU_TOPOLOGY: FeatureId = FeatureId(13);
    pub const NUMA_TOPOLOGY: FeatureId = FeatureId(14);
    pub const BRANCH_STACK: FeatureId = FeatureId(15);
    pub const PMU_MAPPINGS: FeatureId = FeatureId(16);
    pub const GROUP_DESC: FeatureId = FeatureId(17);
    pub const AUXTRACE: FeatureId = FeatureId(18);
    pub const STAT: FeatureId = FeatureId(19);
    pub const CACHE: FeatureId = FeatureId(20);
    pub const SAMPLE_TIME: FeatureId = FeatureId(21);
    pub const MEM_TOPOLOGY: FeatureId = FeatureId(22);
    pub const CLOCKID: FeatureId = FeatureId(23);
    pub const DIR_FORMAT: FeatureId = FeatureId(24);
    pub const BPF_PROG_INFO: FeatureId = FeatureId(25);
    pub const BPF_BTF: FeatureId = FeatureId(26);
    pub const COMPRESSED: FeatureId = FeatureId(27);
    pub const CPU_PMU_CAPS: FeatureId = FeatureId(28);
    pub const CLOCK_DATA: FeatureId = FeatureId(29);
    pub const HYBRID_TOPOLOGY: FeatureId = FeatureId(30);
    pub const PMU_CAPS: FeatureId = FeatureId(31);

    /// The bitmap has 256 bits.
    pub const LIMIT: u32 = 256;

    pub fn name(self) -> &'static str {
        const NAMES: [&str; 32] = [
            "RESERVED",
            "TRACING_DATA",
            "BUILD_ID",
            "HOSTNAME",
            "OSRELEASE",
            "VERSION",
            "ARCH",
            "NRCPUS",
            "CPUDESC",
            "CPUID",
            "TOTAL_MEM",
            "CMDLINE",
            "EVENT_DESC",
            "CPU_TOPOLOGY",
            "NUMA_TOPOLOGY",
            "BRANCH_STACK",
            "PMU_MAPPINGS",
            "GROUP_DESC",
            "AUXTRACE",
            "STAT",
            "CACHE",
            "SAMPLE_TIME",
            "MEM_TOPOLOGY",
            "CLOCKID",
            "DIR_FORMAT",
            "BPF_PROG_INFO",
            "BPF_BTF",
            "COMPRESSED",
            "CPU_PMU_CAPS",
            "CLOCK_DATA",
            "HYBRID_TOPOLOGY",
            "PMU_CAPS",
        ];
        NAMES.get(self.0 as usize).copied().unwrap_or("UNKNOWN")
    }
}

/// `struct perf_header_string`: u32 len (including NUL and padding), then the bytes.
/// Returns the string and the bytes consumed.
pub(crate) fn read_string(b: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let len = u32_at(b, at)? as usize;
    let s = slice_at(b, at + 4, len)?;
    Some((cstr(s), 4 + len))
}

/// Decodes a string feature section (HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID).
pub fn decode_string(section: &[u8]) -> Option<String> {
    read_string(section, 0).map(|(s, _)| String::from_utf8_lossy(s).into_owned())
}

/// Decodes CMDLINE: u32 count, then that many strings.
pub fn decode_cmdline(section: &[u8]) -> Option<Vec<String>> {
    let n = u32_at(section, 0)?;
    let mut at = 4;
    let mut out = Vec::new();
    for _ in 0..n {
        let (s, used) = read_string(section, at)?;
        out.push(String::from_utf8_lossy(s).into_owned());
        at += used;
    }
    Some(out)
}

/// Decodes NRCPUS: (cpus available, cpus online).
pub fn decode_nrcpus(section: &[u8]) -> Option<(u32, u32)> {
    Some((u32_at(section, 0)?, u32_at(section, 4)?))
}

/// One EVENT_DESC entry: an attr (again), its name and its ids.
pub(crate) struct EventDesc {
    pub name: String,
    pub ids: Vec<u64>,
}

/// Decodes EVENT_DESC: u32 nr, u32 attr_size, then per event: attr, u32 nr_ids, string
/// name, u64 ids[nr_ids].
pub(crate) fn decode_event_desc(section: &[u8]) -> Option<Vec<EventDesc>> {
    let nr = u32_at(section, 0)?;
    let attr_size = u32_at(section, 4)? as usize;
    EventAttr::decode(slice_at(section, 8, attr_size)?)?;
    let mut at = 8usize;
    let mut out = Vec::new();
    for _ in 0..nr {
        at = at.checked_add(attr_size)?;
        let nids = u32_at(section, at)? as usize;
        at += 4;
        let (name, used) = read_string(section, at)?;
        at += used;
        let ids = slice_at(section, at, nids.checked_mul(8)?)?;
        at += ids.len();
        out.push(EventDesc {
            name: String::from_utf8_lossy(name).into_owned(),
            ids: (0..nids).filter_map(|i| u64_at(ids, i * 8)).collect(),
        });
    }
    Some(out)
}

/// Appends a `perf_header_string` (NUL-terminated, padded to 64 bytes as perf does).
pub(crate) fn encode_string(out: &mut Vec<u8>, s: &str) {
    let len = (s.len() + 1).div_ceil(64) * 64;
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
    out.resize(out.len() + len - s.len(), 0);
}
