//! What a conversion read and wrote: [`ProfileOutcome`] (`kfdo profile --json`), with
//! the format-specific parts the BOLT and Propeller writers fill in.

use kfdo_afdo::builder::BuildStats;
use kfdo_aggregate::collect::CollectStats;

/// What a conversion read and wrote (`kfdo profile --json`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProfileOutcome {
    pub binary: String,
    pub output: String,
    pub format: &'static str,
    pub inputs: Vec<CollectStats>,
    pub ranges: usize,
    pub branches: usize,
    pub functions: usize,
    pub total_samples: u64,
    pub build: Option<BuildStats>,
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
    pub inputs: Vec<CollectStats>,
    pub functions: usize,
    pub total_samples: u64,
}

impl ProfileOutcome {
    /// Samples of all inputs that fell in the binary.
    pub fn samples_in_binary(&self) -> u64 {
        self.inputs.iter().map(|s| s.samples_in_binary).sum()
    }
}

/// What a BOLT conversion saw (`kfdo profile --json`), in perf2bolt's terms.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BoltSummary {
    pub samples: u64,
    pub samples_with_branches: u64,
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
