//! Numeric constants of the perf ABI (include/uapi/linux/perf_event.h and
//! tools/perf/util/event.h), named as there so they can be grepped for.

/// `perf_event_attr.type` values.
pub mod perf_type {
    pub const HARDWARE: u32 = 0;
    pub const SOFTWARE: u32 = 1;
    pub const TRACEPOINT: u32 = 2;
    pub const HW_CACHE: u32 = 3;
    pub const RAW: u32 = 4;
    pub const BREAKPOINT: u32 = 5;
}

/// `perf_event_attr.config` for `perf_type::HARDWARE`.
pub mod hw {
    pub const CPU_CYCLES: u64 = 0;
    pub const INSTRUCTIONS: u64 = 1;
    pub const BRANCH_INSTRUCTIONS: u64 = 4;
}

/// `perf_event_attr.config` for `perf_type::SOFTWARE`.
pub mod sw {
    pub const CPU_CLOCK: u64 = 0;
    pub const TASK_CLOCK: u64 = 1;
}

/// `perf_event_attr.sample_type` bits, in the order the kernel writes the fields
/// (except IDENTIFIER, which is written first).
pub mod sample {
    pub const IP: u64 = 1 << 0;
    pub const TID: u64 = 1 << 1;
    pub const TIME: u64 = 1 << 2;
    pub const ADDR: u64 = 1 << 3;
    pub const READ: u64 = 1 << 4;
    pub const CALLCHAIN: u64 = 1 << 5;
    pub const ID: u64 = 1 << 6;
    pub const CPU: u64 = 1 << 7;
    pub const PERIOD: u64 = 1 << 8;
    pub const STREAM_ID: u64 = 1 << 9;
    pub const RAW: u64 = 1 << 10;
    pub const BRANCH_STACK: u64 = 1 << 11;
    pub const REGS_USER: u64 = 1 << 12;
    pub const STACK_USER: u64 = 1 << 13;
    pub const WEIGHT: u64 = 1 << 14;
    pub const DATA_SRC: u64 = 1 << 15;
    pub const IDENTIFIER: u64 = 1 << 16;
    pub const TRANSACTION: u64 = 1 << 17;
    pub const REGS_INTR: u64 = 1 << 18;
    pub const PHYS_ADDR: u64 = 1 << 19;
    pub const AUX: u64 = 1 << 20;
    pub const CGROUP: u64 = 1 << 21;
    pub const DATA_PAGE_SIZE: u64 = 1 << 22;
    pub const CODE_PAGE_SIZE: u64 = 1 << 23;
    pub const WEIGHT_STRUCT: u64 = 1 << 24;
}

/// `perf_event_attr.read_format` bits.
pub mod read_format {
    pub const TOTAL_TIME_ENABLED: u64 = 1 << 0;
    pub const TOTAL_TIME_RUNNING: u64 = 1 << 1;
    pub const ID: u64 = 1 << 2;
    pub const GROUP: u64 = 1 << 3;
    pub const LOST: u64 = 1 << 4;
}

/// `perf_event_attr.branch_sample_type` bits.
pub mod branch {
    pub const USER: u64 = 1 << 0;
    pub const KERNEL: u64 = 1 << 1;
    pub const HV: u64 = 1 << 2;
    pub const ANY: u64 = 1 << 3;
    pub const ANY_CALL: u64 = 1 << 4;
    pub const ANY_RETURN: u64 = 1 << 5;
    pub const IND_CALL: u64 = 1 << 6;
    pub const ABORT_TX: u64 = 1 << 7;
    pub const IN_TX: u64 = 1 << 8;
    pub const NO_TX: u64 = 1 << 9;
    pub const COND: u64 = 1 << 10;
    pub const CALL_STACK: u64 = 1 << 11;
    pub const IND_JUMP: u64 = 1 << 12;
    pub const CALL: u64 = 1 << 13;
    pub const NO_FLAGS: u64 = 1 << 14;
    pub const NO_CYCLES: u64 = 1 << 15;
    pub const TYPE_SAVE: u64 = 1 << 16;
    /// The branch stack is preceded by a `u64 hw_idx`.
    pub const HW_INDEX: u64 = 1 << 17;
    pub const PRIV_SAVE: u64 = 1 << 18;
    /// The branch entries are followed by one `u64` of event counters each.
    pub const COUNTERS: u64 = 1 << 19;
}

/// `perf_branch_entry` branch types (`PERF_BR_*`), the 4-bit `type` field of the flags.
pub mod br_type {
    pub const UNKNOWN: u8 = 0;
    pub const COND: u8 = 1;
    pub const UNCOND: u8 = 2;
    pub const IND: u8 = 3;
    pub const CALL: u8 = 4;
    pub const IND_CALL: u8 = 5;
    pub const RET: u8 = 6;
    pub const SYSCALL: u8 = 7;
    pub const SYSRET: u8 = 8;
    pub const COND_CALL: u8 = 9;
    pub const COND_RET: u8 = 10;
    pub const ERET: u8 = 11;
    pub const IRQ: u8 = 12;
    pub const SERROR: u8 = 13;
    pub const NO_TX: u8 = 14;
    pub const EXTEND_ABI: u8 = 15;
}

/// `perf_event_header.type` values: kernel records (< 64) and perf's own (>= 64).
pub mod record {
    pub const MMAP: u32 = 1;
    pub const LOST: u32 = 2;
    pub const COMM: u32 = 3;
    pub const EXIT: u32 = 4;
    pub const THROTTLE: u32 = 5;
    pub const UNTHROTTLE: u32 = 6;
    pub const FORK: u32 = 7;
    pub const READ: u32 = 8;
    pub const SAMPLE: u32 = 9;
    pub const MMAP2: u32 = 10;
    pub const AUX: u32 = 11;
    pub const ITRACE_START: u32 = 12;
    pub const LOST_SAMPLES: u32 = 13;
    pub const SWITCH: u32 = 14;
    pub const SWITCH_CPU_WIDE: u32 = 15;
    pub const NAMESPACES: u32 = 16;
    pub const KSYMBOL: u32 = 17;
    pub const BPF_EVENT: u32 = 18;
    pub const CGROUP: u32 = 19;
    pub const TEXT_POKE: u32 = 20;
    pub const AUX_OUTPUT_HW_ID: u32 = 21;

    pub const HEADER_ATTR: u32 = 64;
    pub const HEADER_EVENT_TYPE: u32 = 65;
    pub const HEADER_TRACING_DATA: u32 = 66;
    pub const HEADER_BUILD_ID: u32 = 67;
    pub const FINISHED_ROUND: u32 = 68;
    pub const ID_INDEX: u32 = 69;
    pub const AUXTRACE_INFO: u32 = 70;
    /// Followed by `size` bytes of AUX data that `header.size` does not count.
    pub const AUXTRACE: u32 = 71;
    pub const AUXTRACE_ERROR: u32 = 72;
    pub const THREAD_MAP: u32 = 73;
    pub const CPU_MAP: u32 = 74;
    pub const STAT_CONFIG: u32 = 75;
    pub const STAT: u32 = 76;
    pub const STAT_ROUND: u32 = 77;
    pub const EVENT_UPDATE: u32 = 78;
    pub const TIME_CONV: u32 = 79;
    pub const HEADER_FEATURE: u32 = 80;
    /// zstd-compressed records (`perf record -z`).
    pub const COMPRESSED: u32 = 81;
    pub const FINISHED_INIT: u32 = 82;

    /// The name perf prints for a record type (`PERF_RECORD_<name>` in `perf script -D`).
    pub fn name(kind: u32) -> &'static str {
        const KERNEL: [&str; 22] = [
            "UNKNOWN",
            "MMAP",
            "LOST",
            "COMM",
            "EXIT",
            "THROTTLE",
            "UNTHROTTLE",
            "FORK",
            "READ",
            "SAMPLE",
            "MMAP2",
            "AUX",
            "ITRACE_START",
            "LOST_SAMPLES",
            "SWITCH",
            "SWITCH_CPU_WIDE",
            "NAMESPACES",
            "KSYMBOL",
            "BPF_EVENT",
            "CGROUP",
            "TEXT_POKE",
            "AUX_OUTPUT_HW_ID",
        ];
        const USER: [&str; 19] = [
            "ATTR",
            "EVENT_TYPE",
            "TRACING_DATA",
            "BUILD_ID",
            "FINISHED_ROUND",
            "ID_INDEX",
            "AUXTRACE_INFO",
            "AUXTRACE",
            "AUXTRACE_ERROR",
            "THREAD_MAP",
            "CPU_MAP",
            "STAT_CONFIG",
            "STAT",
            "STAT_ROUND",
            "EVENT_UPDATE",
            "TIME_CONV",
            "FEATURE",
            "COMPRESSED",
            "FINISHED_INIT",
        ];
        match kind {
            0..=21 => KERNEL[kind as usize],
            64..=82 => USER[(kind - 64) as usize],
            _ => "UNKNOWN",
        }
    }
}

/// `perf_event_header.misc` bits.
pub mod misc {
    pub const CPUMODE_MASK: u16 = 7;
    pub const CPUMODE_UNKNOWN: u16 = 0;
    pub const KERNEL: u16 = 1;
    pub const USER: u16 = 2;
    pub const HYPERVISOR: u16 = 3;
    pub const GUEST_KERNEL: u16 = 4;
    pub const GUEST_USER: u16 = 5;
    pub const PROC_MAP_PARSE_TIMEOUT: u16 = 1 << 12;
    /// MMAP: a data (non-executable) mapping.
    pub const MMAP_DATA: u16 = 1 << 13;
    /// COMM: the comm changed because of exec.
    pub const COMM_EXEC: u16 = 1 << 13;
    pub const SWITCH_OUT: u16 = 1 << 13;
    pub const EXACT_IP: u16 = 1 << 14;
    /// MMAP2: the record carries a build-id instead of maj/min/ino/generation.
    pub const MMAP_BUILD_ID: u16 = 1 << 14;
    /// HEADER_BUILD_ID: the size byte after the 20 build-id bytes is valid.
    pub const BUILD_ID_SIZE: u16 = 1 << 15;
}

/// `perf_event_attr` flag bits (the bitfield word at offset 40).
pub mod attr_flag {
    pub const DISABLED: u64 = 1 << 0;
    pub const INHERIT: u64 = 1 << 1;
    pub const PINNED: u64 = 1 << 2;
    pub const EXCLUSIVE: u64 = 1 << 3;
    pub const EXCLUDE_USER: u64 = 1 << 4;
    pub const EXCLUDE_KERNEL: u64 = 1 << 5;
    pub const EXCLUDE_HV: u64 = 1 << 6;
    pub const EXCLUDE_IDLE: u64 = 1 << 7;
    pub const MMAP: u64 = 1 << 8;
    pub const COMM: u64 = 1 << 9;
    pub const FREQ: u64 = 1 << 10;
    pub const INHERIT_STAT: u64 = 1 << 11;
    pub const ENABLE_ON_EXEC: u64 = 1 << 12;
    pub const TASK: u64 = 1 << 13;
    pub const WATERMARK: u64 = 1 << 14;
    /// Two bits: 15 and 16.
    pub const PRECISE_IP_SHIFT: u32 = 15;
    pub const MMAP_DATA: u64 = 1 << 17;
    pub const SAMPLE_ID_ALL: u64 = 1 << 18;
    pub const EXCLUDE_HOST: u64 = 1 << 19;
    pub const EXCLUDE_GUEST: u64 = 1 << 20;
    pub const EXCLUDE_CALLCHAIN_KERNEL: u64 = 1 << 21;
    pub const EXCLUDE_CALLCHAIN_USER: u64 = 1 << 22;
    pub const MMAP2: u64 = 1 << 23;
    pub const COMM_EXEC: u64 = 1 << 24;
    pub const USE_CLOCKID: u64 = 1 << 25;
    pub const CONTEXT_SWITCH: u64 = 1 << 26;
    pub const BUILD_ID: u64 = 1 << 34;
}

/// Callchain context markers (`PERF_CONTEXT_*`): entries >= `MAX` are not addresses.
pub mod context {
    pub const HV: u64 = -32i64 as u64;
    pub const KERNEL: u64 = -128i64 as u64;
    pub const USER: u64 = -512i64 as u64;
    pub const GUEST: u64 = -2048i64 as u64;
    pub const GUEST_KERNEL: u64 = -2176i64 as u64;
    pub const GUEST_USER: u64 = -2560i64 as u64;
    pub const MAX: u64 = -4095i64 as u64;
}

/// `PROT_EXEC` from mman.h, for MMAP2's `prot`.
pub const PROT_EXEC: u32 = 4;
pub const PROT_READ: u32 = 1;
pub const PROT_WRITE: u32 = 2;
/// `MAP_SHARED` from mman.h, for MMAP2's `flags`.
pub const MAP_SHARED: u32 = 1;
pub const MAP_PRIVATE: u32 = 2;
