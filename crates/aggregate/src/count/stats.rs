//! What a count is asked for ([`CountOptions`]) and what it reports ([`CountStats`]);
//! the per-thread tallies ([`Counts`]) the passes add up.

/// What to count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleMode {
    /// Branch stacks (LBR): ranges and branches.
    Lbr,
    /// The sampled IP alone (`perf record -e cpu-clock`): one-instruction ranges.
    IpOnly,
}

#[derive(Clone, Debug)]
pub struct CountOptions {
    pub mode: SampleMode,
    /// Only these processes (empty: all).
    pub pids: Vec<u32>,
}

/// What happened while reading one input, for the summary and for errors.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CountStats {
    pub input: String,
    pub samples: u64,
    pub samples_used: u64,
    pub samples_in_binary: u64,
    pub branch_records: u64,
    pub dropped_range_count: u64,
    pub mapped_by_build_id: bool,
    /// Earliest and latest sample time of the recording (perf clock, ns; any process),
    /// perf.data only: the recording's time window (fleet raw files carry it).
    pub first_time: Option<u64>,
    pub last_time: Option<u64>,
    /// The file name the recording mapped the binary under (the first match).
    pub mapped_as: Option<String>,
    /// Executable files mapped in the recording (for "no samples" errors).
    #[serde(skip)]
    pub mapped_files: Vec<String>,
}

/// How many input bytes a streaming pass reads before handing their pages back.
pub(super) const RELEASE_EVERY: u64 = 8 << 20;

/// One thread's tallies of the samples it counted.
#[derive(Default, Clone, Copy)]
pub(super) struct Counts {
    pub(super) samples: u64,
    pub(super) any_branches: bool,
    pub(super) used: u64,
    pub(super) in_binary: u64,
    pub(super) records: u64,
}

impl Counts {
    /// What was counted since `before`.
    pub(super) fn since(&self, before: &Counts) -> Counts {
        Counts {
            samples: self.samples - before.samples,
            any_branches: self.any_branches,
            used: self.used - before.used,
            in_binary: self.in_binary - before.in_binary,
            records: self.records - before.records,
        }
    }

    pub(super) fn add(&mut self, d: &Counts) {
        self.samples += d.samples;
        self.any_branches |= d.any_branches;
        self.used += d.used;
        self.in_binary += d.in_binary;
        self.records += d.records;
    }
}
