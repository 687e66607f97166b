//! PERF_RECORD_SAMPLE: decoding every `sample_type` layout in the kernel's field order
//! (see `perf_output_sample()` in kernel/events/core.c), borrowing variable-length parts
//! (callchain, branch stack, raw data, registers, user stack) straight from the file bytes.

use crate::bytes::{u64_at, Cursor};
use crate::consts::{branch, misc, read_format as rf, sample as st};

/// Where a sample (or record) was taken, from `misc & PERF_RECORD_MISC_CPUMODE_MASK`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpuMode {
    Unknown,
    Kernel,
    User,
    Hypervisor,
    GuestKernel,
    GuestUser,
}

impl CpuMode {
    pub fn from_misc(m: u16) -> CpuMode {
        match m & misc::CPUMODE_MASK {
            misc::KERNEL => CpuMode::Kernel,
            misc::USER => CpuMode::User,
            misc::HYPERVISOR => CpuMode::Hypervisor,
            misc::GUEST_KERNEL => CpuMode::GuestKernel,
            misc::GUEST_USER => CpuMode::GuestUser,
            _ => CpuMode::Unknown,
        }
    }
}

/// A borrowed array of little-endian `u64`s (callchains, registers, counters). The file
/// bytes are not necessarily 8-aligned in memory, so elements are read, not referenced.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct U64Slice<'a> {
    bytes: &'a [u8],
}

impl<'a> U64Slice<'a> {
    /// Wraps bytes; a trailing partial word is ignored.
    pub fn new(bytes: &'a [u8]) -> Self {
        U64Slice {
            bytes: &bytes[..bytes.len() / 8 * 8],
        }
    }
    pub fn len(&self) -> usize {
        self.bytes.len() / 8
    }
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
    pub fn get(&self, i: usize) -> Option<u64> {
        u64_at(self.bytes, i.checked_mul(8)?)
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = u64> + ExactSizeIterator + 'a {
        self.bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
    }
    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

impl std::fmt::Debug for U64Slice<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|v| format!("{v:#x}")))
            .finish()
    }
}

/// One LBR entry (`struct perf_branch_entry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BranchEntry {
    pub from: u64,
    pub to: u64,
    /// The packed bitfield: mispred:1 predicted:1 in_tx:1 abort:1 cycles:16 type:4 spec:2
    /// new_type:4 priv:3.
    pub flags: u64,
}

impl BranchEntry {
    pub fn new(from: u64, to: u64) -> Self {
        BranchEntry { from, to, flags: 0 }
    }
    pub fn mispred(&self) -> bool {
        self.flags & 1 != 0
    }
    pub fn predicted(&self) -> bool {
        self.flags & 2 != 0
    }
    pub fn in_tx(&self) -> bool {
        self.flags & 4 != 0
    }
    pub fn abort(&self) -> bool {
        self.flags & 8 != 0
    }
    /// Cycles since the previous branch (0 when the hardware does not report it).
    pub fn cycles(&self) -> u16 {
        (self.flags >> 4) as u16
    }
    /// `PERF_BR_*` type (see [`crate::consts::br_type`]); 0 unless recorded with `save_type`.
    pub fn branch_type(&self) -> u8 {
        ((self.flags >> 20) & 0xf) as u8
    }
    pub fn spec(&self) -> u8 {
        ((self.flags >> 24) & 0x3) as u8
    }
    pub fn new_type(&self) -> u8 {
        ((self.flags >> 26) & 0xf) as u8
    }
    pub fn privilege(&self) -> u8 {
        ((self.flags >> 30) & 0x7) as u8
    }
    /// Packs the flags fields (values are masked to their widths).
    pub fn make_flags(
        mispred: bool,
        predicted: bool,
        in_tx: bool,
        abort: bool,
        cycles: u16,
        branch_type: u8,
    ) -> u64 {
        u64::from(mispred)
            | u64::from(predicted) << 1
            | u64::from(in_tx) << 2
            | u64::from(abort) << 3
            | u64::from(cycles) << 4
            | u64::from(branch_type & 0xf) << 20
    }
}

/// A sample's branch stack (LBR), borrowed from the file: entries newest first, as perf
/// stores them.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct BranchStack<'a> {
    /// The hardware LBR index, when the event had PERF_SAMPLE_BRANCH_HW_INDEX. perf uses
    /// `u64::MAX` for "not available" (e.g. a software-filtered stack).
    pub hw_idx: Option<u64>,
    entries: &'a [u8],
    counters: &'a [u8],
}

const ENTRY: usize = 24;

impl<'a> BranchStack<'a> {
    /// Wraps raw entry bytes (24 bytes each; a partial entry is ignored).
    pub fn from_raw(hw_idx: Option<u64>, entries: &'a [u8]) -> Self {
        BranchStack {
            hw_idx,
            entries: &entries[..entries.len() / ENTRY * ENTRY],
            counters: &[],
        }
    }
    pub fn len(&self) -> usize {
        self.entries.len() / ENTRY
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    pub fn get(&self, i: usize) -> Option<BranchEntry> {
        let o = i.checked_mul(ENTRY)?;
        Some(BranchEntry {
            from: u64_at(self.entries, o)?,
            to: u64_at(self.entries, o + 8)?,
            flags: u64_at(self.entries, o + 16)?,
        })
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = BranchEntry> + ExactSizeIterator + 'a {
        self.entries.chunks_exact(ENTRY).map(|c| {
            let w = |o: usize| {
                u64::from_le_bytes([
                    c[o],
                    c[o + 1],
                    c[o + 2],
                    c[o + 3],
                    c[o + 4],
                    c[o + 5],
                    c[o + 6],
                    c[o + 7],
                ])
            };
            BranchEntry {
                from: w(0),
                to: w(8),
                flags: w(16),
            }
        })
    }
    /// Per-entry event counters (PERF_SAMPLE_BRANCH_COUNTERS); empty when not recorded.
    pub fn counters(&self) -> U64Slice<'a> {
        U64Slice::new(self.counters)
    }
}

impl std::fmt::Debug for BranchStack<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BranchStack")
            .field("hw_idx", &self.hw_idx)
            .field("entries", &self.iter().collect::<Vec<_>>())
            .finish()
    }
}

/// Registers sampled with REGS_USER / REGS_INTR: an ABI word and one value per bit set in
/// the attr's register mask (none when `abi` is 0, i.e. no registers were available).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Regs<'a> {
    pub abi: u64,
    pub mask: u64,
    pub values: U64Slice<'a>,
}

/// READ values (`struct read_format`), borrowed.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct ReadValues<'a> {
    /// The attr's read_format.
    pub format: u64,
    pub time_enabled: Option<u64>,
    pub time_running: Option<u64>,
    /// value[, id][, lost] per counter (one counter unless PERF_FORMAT_GROUP).
    entries: &'a [u8],
}

/// One counter of a READ value.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct ReadValue {
    pub value: u64,
    pub id: Option<u64>,
    pub lost: Option<u64>,
}

impl<'a> ReadValues<'a> {
    fn stride(&self) -> usize {
        8 * (1 + usize::from(self.format & rf::ID != 0) + usize::from(self.format & rf::LOST != 0))
    }
    pub fn len(&self) -> usize {
        self.entries.len() / self.stride()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn iter(&self) -> impl Iterator<Item = ReadValue> + 'a {
        let (stride, has_id, has_lost) = (
            self.stride(),
            self.format & rf::ID != 0,
            self.format & rf::LOST != 0,
        );
        self.entries.chunks_exact(stride).map(move |c| {
            let w = |i: usize| u64_at(c, i * 8).unwrap_or(0);
            ReadValue {
                value: w(0),
                id: has_id.then(|| w(1)),
                lost: has_lost.then(|| w(1 + usize::from(has_id))),
            }
        })
    }
}

/// One PERF_RECORD_SAMPLE. Fields absent from the attr's `sample_type` are 0 or empty.
#[derive(Clone, Copy, Default, Debug)]
pub struct Sample<'a> {
    /// Index into [`crate::PerfData::attrs`] of the event that took this sample.
    pub attr: usize,
    pub misc: u16,
    pub ip: u64,
    pub pid: u32,
    pub tid: u32,
    pub time: u64,
    pub addr: u64,
    /// IDENTIFIER or ID.
    pub id: u64,
    pub stream_id: u64,
    pub cpu: u32,
    /// PERIOD, or for a fixed-period event (no PERIOD in sample_type, not `freq`) the
    /// attr's `sample_period`, as perf reports it.
    pub period: u64,
    pub read: ReadValues<'a>,
    /// Return addresses, innermost first, with `PERF_CONTEXT_*` markers as the kernel wrote them.
    pub callchain: U64Slice<'a>,
    pub raw: &'a [u8],
    pub branch_stack: BranchStack<'a>,
    pub regs_user: Regs<'a>,
    /// The copied user stack (STACK_USER), trimmed to the dynamic size actually dumped.
    pub stack_user: &'a [u8],
    /// WEIGHT: the whole value; WEIGHT_STRUCT: `var1_dw` (the weight).
    pub weight: u64,
    /// WEIGHT_STRUCT `var2_w` (instruction latency on x86).
    pub ins_lat: u16,
    /// WEIGHT_STRUCT `var3_w`.
    pub weight_var3: u16,
    pub data_src: u64,
    pub transaction: u64,
    pub regs_intr: Regs<'a>,
    pub phys_addr: u64,
    pub cgroup: u64,
    pub data_page_size: u64,
    pub code_page_size: u64,
    pub aux: &'a [u8],
}

impl Sample<'_> {
    pub fn cpumode(&self) -> CpuMode {
        CpuMode::from_misc(self.misc)
    }
}

/// What the decoder needs from an attr, precomputed once per attr.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SampleLayout {
    pub sample_type: u64,
    pub read_format: u64,
    pub hw_idx: bool,
    pub counters: bool,
    pub regs_user_mask: u64,
    pub regs_intr_mask: u64,
    /// The period of samples without PERIOD: the attr's fixed period (0 with `freq`).
    pub fixed_period: u64,
}

impl SampleLayout {
    pub(crate) fn new(a: &crate::attr::EventAttr) -> Self {
        SampleLayout {
            sample_type: a.sample_type,
            read_format: a.read_format,
            hw_idx: a.branch_sample_type & branch::HW_INDEX != 0,
            counters: a.branch_sample_type & branch::COUNTERS != 0,
            regs_user_mask: a.sample_regs_user,
            regs_intr_mask: a.sample_regs_intr,
            fixed_period: if a.freq { 0 } else { a.sample_period_or_freq },
        }
    }
}

/// Why a sample body did not decode: the field and its offset within the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FieldError {
    pub at: usize,
    pub what: &'static str,
}

macro_rules! need {
    ($e:expr, $c:expr, $what:expr) => {
        match $e {
            Some(v) => v,
            None => {
                return Err(FieldError {
                    at: $c.pos,
                    what: $what,
                })
            }
        }
    };
}

fn regs<'a>(c: &mut Cursor<'a>, mask: u64, what: &'static str) -> Result<Regs<'a>, FieldError> {
    let abi = need!(c.u64(), c, what);
    // With abi == PERF_SAMPLE_REGS_ABI_NONE the kernel writes no values.
    let values = if abi != 0 {
        U64Slice::new(need!(c.words(u64::from(mask.count_ones())), c, what))
    } else {
        U64Slice::default()
    };
    Ok(Regs { abi, mask, values })
}

/// The counter values of a sample (`PERF_SAMPLE_READ`), as `read_format` lays them out.
fn read_values<'a>(c: &mut Cursor<'a>, f: u64) -> Result<ReadValues<'a>, FieldError> {
    let mut rv = ReadValues {
        format: f,
        ..Default::default()
    };
    let group = f & rf::GROUP != 0;
    let nr = if group {
        need!(c.u64(), c, "read_format nr")
    } else {
        1
    };
    if f & rf::TOTAL_TIME_ENABLED != 0 {
        rv.time_enabled = Some(need!(c.u64(), c, "read_format time_enabled"));
    }
    if f & rf::TOTAL_TIME_RUNNING != 0 {
        rv.time_running = Some(need!(c.u64(), c, "read_format time_running"));
    }
    let per = 1 + u64::from(f & rf::ID != 0) + u64::from(f & rf::LOST != 0);
    let words = need!(nr.checked_mul(per), c, "read_format nr (overflows)");
    rv.entries = need!(c.words(words), c, "read_format values");
    Ok(rv)
}

/// The branch stack: its count, the hardware index and the per-entry counters where the
/// attr asks for them.
fn branch_stack<'a>(c: &mut Cursor<'a>, l: &SampleLayout) -> Result<BranchStack<'a>, FieldError> {
    let nr = need!(c.u64(), c, "branch stack nr");
    let hw_idx = if l.hw_idx {
        Some(need!(c.u64(), c, "branch stack hw_idx"))
    } else {
        None
    };
    let len = need!(
        usize::try_from(nr).ok().and_then(|n| n.checked_mul(ENTRY)),
        c,
        "branch stack nr (overflows)"
    );
    let entries = need!(c.bytes(len), c, "branch stack entries");
    let counters = if l.counters {
        need!(c.words(nr), c, "branch stack counters")
    } else {
        &[]
    };
    Ok(BranchStack {
        hw_idx,
        entries,
        counters,
    })
}

/// The user stack dump, cut to the part the kernel says is real.
fn stack_user<'a>(c: &mut Cursor<'a>) -> Result<&'a [u8], FieldError> {
    let size = need!(c.u64(), c, "user stack size");
    let data = need!(
        usize::try_from(size).ok().and_then(|n| c.bytes(n)),
        c,
        "user stack data"
    );
    if size == 0 {
        return Ok(&[]);
    }
    // dyn_size follows only a non-empty dump; it says how much of it is real.
    let dyn_size = need!(c.u64(), c, "user stack dyn_size");
    Ok(data.get(..dyn_size.min(size) as usize).unwrap_or(data))
}

/// Decodes a sample body (the record minus its 8-byte header).
pub(crate) fn parse_sample<'a>(
    body: &'a [u8],
    l: &SampleLayout,
    attr: usize,
    misc_bits: u16,
) -> Result<Sample<'a>, FieldError> {
    let t = l.sample_type;
    let mut c = Cursor::new(body);
    let mut s = Sample {
        attr,
        misc: misc_bits,
        ..Default::default()
    };
    if t & st::IDENTIFIER != 0 {
        s.id = need!(c.u64(), c, "sample id (IDENTIFIER)");
    }
    if t & st::IP != 0 {
        s.ip = need!(c.u64(), c, "sample ip");
    }
    if t & st::TID != 0 {
        s.pid = need!(c.u32(), c, "sample pid");
        s.tid = need!(c.u32(), c, "sample tid");
    }
    if t & st::TIME != 0 {
        s.time = need!(c.u64(), c, "sample time");
    }
    if t & st::ADDR != 0 {
        s.addr = need!(c.u64(), c, "sample addr");
    }
    if t & st::ID != 0 {
        s.id = need!(c.u64(), c, "sample id");
    }
    if t & st::STREAM_ID != 0 {
        s.stream_id = need!(c.u64(), c, "sample stream_id");
    }
    if t & st::CPU != 0 {
        s.cpu = need!(c.u32(), c, "sample cpu");
        need!(c.u32(), c, "sample cpu reserved word");
    }
    if t & st::PERIOD != 0 {
        s.period = need!(c.u64(), c, "sample period");
    } else {
        // As perf does: a fixed-period event (`-c N`) records no period; it is the attr's.
        s.period = l.fixed_period;
    }
    if t & st::READ != 0 {
        s.read = read_values(&mut c, l.read_format)?;
    }
    if t & st::CALLCHAIN != 0 {
        let nr = need!(c.u64(), c, "callchain nr");
        s.callchain = U64Slice::new(need!(c.words(nr), c, "callchain entries"));
    }
    if t & st::RAW != 0 {
        let size = need!(c.u32(), c, "raw size");
        s.raw = need!(c.bytes(size as usize), c, "raw data");
        // The kernel pads u32 size + data to a multiple of 8 bytes.
        let pad = (8 - (4 + size as usize) % 8) % 8;
        need!(c.bytes(pad), c, "raw padding");
    }
    if t & st::BRANCH_STACK != 0 {
        s.branch_stack = branch_stack(&mut c, l)?;
    }
    if t & st::REGS_USER != 0 {
        s.regs_user = regs(&mut c, l.regs_user_mask, "user registers")?;
    }
    if t & st::STACK_USER != 0 {
        s.stack_user = stack_user(&mut c)?;
    }
    if t & (st::WEIGHT | st::WEIGHT_STRUCT) != 0 {
        let w = need!(c.u64(), c, "sample weight");
        if t & st::WEIGHT_STRUCT != 0 {
            s.weight = w & 0xffff_ffff;
            s.ins_lat = (w >> 32) as u16;
            s.weight_var3 = (w >> 48) as u16;
        } else {
            s.weight = w;
        }
    }
    if t & st::DATA_SRC != 0 {
        s.data_src = need!(c.u64(), c, "sample data_src");
    }
    if t & st::TRANSACTION != 0 {
        s.transaction = need!(c.u64(), c, "sample transaction");
    }
    if t & st::REGS_INTR != 0 {
        s.regs_intr = regs(&mut c, l.regs_intr_mask, "interrupt registers")?;
    }
    if t & st::PHYS_ADDR != 0 {
        s.phys_addr = need!(c.u64(), c, "sample phys_addr");
    }
    if t & st::CGROUP != 0 {
        s.cgroup = need!(c.u64(), c, "sample cgroup");
    }
    if t & st::DATA_PAGE_SIZE != 0 {
        s.data_page_size = need!(c.u64(), c, "sample data_page_size");
    }
    if t & st::CODE_PAGE_SIZE != 0 {
        s.code_page_size = need!(c.u64(), c, "sample code_page_size");
    }
    if t & st::AUX != 0 {
        let size = need!(c.u64(), c, "aux size");
        s.aux = need!(
            usize::try_from(size).ok().and_then(|n| c.bytes(n)),
            c,
            "aux data"
        );
    }
    Ok(s)
}
