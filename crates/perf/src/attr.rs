//! `struct perf_event_attr`: decoding any size perf has used (VER0 = 64 bytes and up) and
//! encoding the size this machine's perf writes (VER7 = 128 bytes).

use crate::bytes::{u16_at, u32_at, u64_at};
use crate::consts::{attr_flag, sample};

/// The smallest attr perf ever wrote (PERF_ATTR_SIZE_VER0).
pub const ATTR_SIZE_VER0: usize = 64;
/// The size this crate writes (PERF_ATTR_SIZE_VER7, what perf 5.13..6.2 write).
pub const ATTR_SIZE_WRITTEN: usize = 128;

/// One event's attributes, as recorded in the file, plus its sample ids and name.
///
/// The named booleans mirror bits of `flags`; when writing, the named booleans win over the
/// corresponding bits of `flags`, so that either can be used to build an attr.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EventAttr {
    /// `PERF_TYPE_*` (see [`crate::consts::perf_type`]).
    pub type_: u32,
    /// The `size` field as found in the file (0 when built by hand; the writer fills it).
    pub size: u32,
    pub config: u64,
    /// Sample period, or frequency when `freq`.
    pub sample_period_or_freq: u64,
    pub freq: bool,
    /// `PERF_SAMPLE_*` bits (see [`crate::consts::sample`]).
    pub sample_type: u64,
    /// `PERF_FORMAT_*` bits (see [`crate::consts::read_format`]).
    pub read_format: u64,
    /// `PERF_SAMPLE_BRANCH_*` bits (see [`crate::consts::branch`]).
    pub branch_sample_type: u64,
    pub sample_id_all: bool,
    pub exclude_kernel: bool,
    pub exclude_user: bool,
    pub exclude_hv: bool,
    /// Skid constraint, 0..=3 (`:p`, `:pp`, `:ppp`).
    pub precise_ip: u8,
    /// Every flag bit as found (`disabled`, `inherit`, `mmap`, `comm`, `mmap2`, ...).
    pub flags: u64,
    pub wakeup_events: u32,
    pub bp_type: u32,
    /// `bp_addr` / `kprobe_func` / `uprobe_path` / `config1`.
    pub config1: u64,
    /// `bp_len` / `kprobe_addr` / `probe_offset` / `config2`.
    pub config2: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub aux_sample_size: u32,
    pub sig_data: u64,
    pub config3: u64,
    /// The sample ids that name this event in records (one per CPU/thread the event was
    /// opened on). Samples find their attr through these.
    pub ids: Vec<u64>,
    /// The event name (from EVENT_DESC, or EVENT_UPDATE in pipe mode), e.g. `cpu-clock`.
    pub name: Option<String>,
}

impl EventAttr {
    /// An attr for `type_`/`config` sampling every `period` events, with the flags perf sets
    /// for a typical `perf record` (mmap, mmap2, comm, comm_exec, sample_id_all) and
    /// `sample_type` IP|TID|TIME|PERIOD.
    pub fn new(type_: u32, config: u64, period: u64) -> Self {
        EventAttr {
            type_,
            config,
            sample_period_or_freq: period,
            sample_type: sample::IP | sample::TID | sample::TIME | sample::PERIOD,
            sample_id_all: true,
            flags: attr_flag::MMAP | attr_flag::MMAP2 | attr_flag::COMM | attr_flag::COMM_EXEC,
            ..Default::default()
        }
    }

    /// True when samples of this event carry a branch stack.
    pub fn has_branch_stack(&self) -> bool {
        self.sample_type & sample::BRANCH_STACK != 0
    }

    /// True when branch stacks carry a leading `hw_idx` word.
    pub fn has_branch_hw_idx(&self) -> bool {
        self.has_branch_stack() && self.branch_sample_type & crate::consts::branch::HW_INDEX != 0
    }

    /// Decodes one attr from `b` (exactly the attr's bytes as framed by the container).
    /// Fields beyond the attr's own `size` are 0, as the kernel treats them.
    /// Returns `None` when fewer than VER0's 64 bytes are present.
    pub(crate) fn decode(b: &[u8]) -> Option<EventAttr> {
        if b.len() < ATTR_SIZE_VER0 {
            return None;
        }
        let size = u32_at(b, 4)?;
        // Trust the smaller of the attr's own size and its frame; size 0 means VER0.
        let own = if size == 0 {
            ATTR_SIZE_VER0
        } else {
            size as usize
        };
        let b = &b[..own.clamp(ATTR_SIZE_VER0, b.len())];
        let q = |off: usize| u64_at(b, off).unwrap_or(0);
        let d = |off: usize| u32_at(b, off).unwrap_or(0);
        let flags = q(40);
        Some(EventAttr {
            type_: d(0),
            size,
            config: q(8),
            sample_period_or_freq: q(16),
            sample_type: q(24),
            read_format: q(32),
            freq: flags & attr_flag::FREQ != 0,
            sample_id_all: flags & attr_flag::SAMPLE_ID_ALL != 0,
            exclude_kernel: flags & attr_flag::EXCLUDE_KERNEL != 0,
            exclude_user: flags & attr_flag::EXCLUDE_USER != 0,
            exclude_hv: flags & attr_flag::EXCLUDE_HV != 0,
            precise_ip: ((flags >> attr_flag::PRECISE_IP_SHIFT) & 3) as u8,
            flags,
            wakeup_events: d(48),
            bp_type: d(52),
            config1: q(56),
            config2: q(64),
            branch_sample_type: q(72),
            sample_regs_user: q(80),
            sample_stack_user: d(88),
            clockid: d(92) as i32,
            sample_regs_intr: q(96),
            aux_watermark: d(104),
            sample_max_stack: u16_at(b, 108).unwrap_or(0),
            aux_sample_size: d(112),
            sig_data: q(120),
            config3: q(128),
            ids: Vec::new(),
            name: None,
        })
    }

    /// The flag word with the named booleans applied.
    pub(crate) fn effective_flags(&self) -> u64 {
        let mut f = self.flags;
        let mut set = |bit: u64, on: bool| {
            if on {
                f |= bit
            } else {
                f &= !bit
            }
        };
        set(attr_flag::FREQ, self.freq);
        set(attr_flag::SAMPLE_ID_ALL, self.sample_id_all);
        set(attr_flag::EXCLUDE_KERNEL, self.exclude_kernel);
        set(attr_flag::EXCLUDE_USER, self.exclude_user);
        set(attr_flag::EXCLUDE_HV, self.exclude_hv);
        f &= !(3 << attr_flag::PRECISE_IP_SHIFT);
        f |= u64::from(self.precise_ip & 3) << attr_flag::PRECISE_IP_SHIFT;
        f
    }

    /// Encodes the attr as `ATTR_SIZE_WRITTEN` bytes (its `size` field set accordingly).
    pub(crate) fn encode(&self) -> [u8; ATTR_SIZE_WRITTEN] {
        let mut b = [0u8; ATTR_SIZE_WRITTEN];
        let mut put = |off: usize, v: &[u8]| b[off..off + v.len()].copy_from_slice(v);
        put(0, &self.type_.to_le_bytes());
        put(4, &(ATTR_SIZE_WRITTEN as u32).to_le_bytes());
        put(8, &self.config.to_le_bytes());
        put(16, &self.sample_period_or_freq.to_le_bytes());
        put(24, &self.sample_type.to_le_bytes());
        put(32, &self.read_format.to_le_bytes());
        put(40, &self.effective_flags().to_le_bytes());
        put(48, &self.wakeup_events.to_le_bytes());
        put(52, &self.bp_type.to_le_bytes());
        put(56, &self.config1.to_le_bytes());
        put(64, &self.config2.to_le_bytes());
        put(72, &self.branch_sample_type.to_le_bytes());
        put(80, &self.sample_regs_user.to_le_bytes());
        put(88, &self.sample_stack_user.to_le_bytes());
        put(92, &self.clockid.to_le_bytes());
        put(96, &self.sample_regs_intr.to_le_bytes());
        put(104, &self.aux_watermark.to_le_bytes());
        put(108, &self.sample_max_stack.to_le_bytes());
        put(112, &self.aux_sample_size.to_le_bytes());
        put(120, &self.sig_data.to_le_bytes());
        // config3 (VER8) does not fit in 128 bytes; perf 6.1 would reject a larger attr with
        // non-zero tail bytes, so it is not written.
        b
    }
}

/// Where, inside a sample record's body, the event id sits; the same for every attr of a
/// file (perf refuses files where it is not), so it is computed once from the first attr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdPos {
    /// No id in samples: every sample belongs to attr 0.
    None,
    /// Byte offset of the id from the start of the sample body.
    At(usize),
}

impl IdPos {
    pub(crate) fn for_sample_type(st: u64) -> IdPos {
        if st & sample::IDENTIFIER != 0 {
            return IdPos::At(0);
        }
        if st & sample::ID == 0 {
            return IdPos::None;
        }
        // ID comes after IP, TID, TIME and ADDR, each one u64.
        let before = [sample::IP, sample::TID, sample::TIME, sample::ADDR]
            .iter()
            .filter(|&&b| st & b != 0)
            .count();
        IdPos::At(before * 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        let mut a = EventAttr::new(1, 0, 4000);
        a.freq = true;
        a.precise_ip = 2;
        a.branch_sample_type = 0x20000 | 1;
        a.sample_regs_user = 0xff;
        a.sample_max_stack = 127;
        let b = a.encode();
        let mut d = EventAttr::decode(&b).unwrap();
        assert_eq!(d.size, 128);
        d.size = 0;
        d.flags = a.flags; // decoded flags include the named bits
        assert_eq!(d.effective_flags(), a.effective_flags());
        assert_eq!(
            d,
            EventAttr {
                flags: a.flags,
                ..a.clone()
            }
        );
    }

    #[test]
    fn short_and_odd_sizes() {
        assert!(EventAttr::decode(&[0u8; 63]).is_none());
        let mut b = [0u8; 64];
        b[4..8].copy_from_slice(&1000u32.to_le_bytes()); // claims more than framed
        b[24] = 7;
        let a = EventAttr::decode(&b).unwrap();
        assert_eq!(a.sample_type, 7);
        assert_eq!(a.branch_sample_type, 0);
    }

    #[test]
    fn id_pos() {
        assert_eq!(
            IdPos::for_sample_type(sample::IP | sample::IDENTIFIER | sample::ID),
            IdPos::At(0)
        );
        assert_eq!(
            IdPos::for_sample_type(sample::IP | sample::TID | sample::ID),
            IdPos::At(16)
        );
        assert_eq!(IdPos::for_sample_type(sample::IP), IdPos::None);
    }
}
