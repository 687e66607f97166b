//! What a conversion read and wrote: [`ProfileOutcome`] (`kfdo profile --json`), with
//! the format-specific parts the BOLT and Propeller writers fill in.

use kfdo_afdo::builder::BuildStats;
use kfdo_aggregate::count::CountStats;

/// What a conversion read and wrote (`kfdo profile --json`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProfileOutcome {
    pub binary: String,
    pub output: String,
    pub format: &'static str,
    pub inputs: Vec<CountStats>,
    pub ranges: usize,
    pub branches: usize,
    pub functions: usize,
    pub total_samples: u64,
    pub build: Option<BuildStats>,
    /// A sample profile's locations with a discriminator (0: the binary has none; it
    /// was built without -fdebug-info-for-profiling); `None` for other formats.
    pub locations_with_discriminators: Option<usize>,
    /// `--format gcov`: the GCC release the profile is for, and where that came from.
    pub gcc: Option<GccRelease>,
    /// Each module of `ProfileRequest::modules`: what it added.
    pub modules: Vec<ModuleOutcome>,
    /// `--format bolt`: the traces and records.
    pub bolt: Option<BoltSummary>,
    /// `--format propeller`: the CFG and the layout.
    pub propeller: Option<PropellerSummary>,
    pub seconds: f64,
}

/// A kernel module's part of a kernel profile.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ModuleOutcome {
    pub module: String,
    pub inputs: Vec<CountStats>,
    pub functions: usize,
    pub total_samples: u64,
}

impl ProfileOutcome {
    /// Samples of all inputs that fell in the binary (BOLT's conversion counts them over
    /// all inputs together).
    pub fn samples_in_binary(&self) -> u64 {
        match &self.bolt {
            Some(b) => b.samples_in_binary,
            None => self.inputs.iter().map(|s| s.samples_in_binary).sum(),
        }
    }
}

/// The GCC release a gcov profile is written for (its file version must be the one
/// that release reads), and how kfdo chose it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GccRelease {
    pub major: u32,
    pub source: GccSource,
    /// What the choice rests on, in words (the DWARF producer, `gcc --version`'s line).
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GccSource {
    /// `--gcc-version`.
    Option,
    /// The `DW_AT_producer` of the binary's compile units: the GCC that built it.
    Binary,
    /// `gcc --version` on PATH (the binary names no GCC).
    Path,
}

impl std::fmt::Display for GccRelease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let from = match self.source {
            GccSource::Option => "--gcc-version",
            GccSource::Binary => "the binary's DWARF producer",
            GccSource::Path => "the gcc on PATH",
        };
        write!(f, "GCC {} (from {from}: {})", self.major, self.detail)
    }
}

/// What a BOLT conversion saw (`kfdo profile --json`), in perf2bolt's terms.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BoltSummary {
    pub samples: u64,
    pub samples_with_branches: u64,
    /// Samples with a branch record from or to the binary.
    pub samples_in_binary: u64,
    pub lbr_entries: u64,
    pub traces: u64,
    /// Traces the functions' blocks cannot explain ("mismatching disassembled function
    /// contents"; many mean the binary is not the one recorded).
    pub invalid_traces: u64,
    /// Traces with an end outside the binary ("involving unknown regions").
    pub long_range_traces: u64,
    pub records: usize,
}

/// What a Propeller conversion built (`kfdo profile --json`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct PropellerSummary {
    pub cc_profile: String,
    pub ld_profile: String,
    pub mapped_functions: usize,
    pub hot_functions: usize,
    pub hot_blocks: usize,
    pub split_functions: usize,
    /// Hot functions another mapped function shares a name with (left alone).
    pub ambiguous_functions: usize,
    pub branch_weight: u64,
    pub edge_weight: u64,
    /// Branches (not returns) into the middle of a block.
    pub dubious_weight: u64,
    pub dropped_fallthrough_weight: u64,
    pub ext_tsp_score_before: f64,
    pub ext_tsp_score_after: f64,
}
