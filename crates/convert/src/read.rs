//! Every input of a request read for one binary into one raw profile (counts add).

use std::path::Path;

use kfdo_aggregate::collect::{
    collect_perf_data, collect_perf_script, CollectOptions, CollectStats, SampleMode,
};
use kfdo_aggregate::target::TargetBinary;
use kfdo_aggregate::{CodeMap, RawProfile};

use crate::error::ProfileError;
use crate::outcome::ProfileOutcome;
use crate::parquet_input::read_parquet;
use crate::request::{Input, ProfileRequest};

/// Reads every input for the binary `bin`.
pub(crate) fn collect(
    req: &ProfileRequest,
    bin: &kfdo_elf::Binary,
    target: &TargetBinary,
    code: &kfdo_elf::Code,
    on_input: &mut dyn FnMut(&Path),
) -> Result<(RawProfile, Vec<CollectStats>), ProfileError> {
    let codemap = CodeMap::from_code(code);
    let opts = CollectOptions {
        mode: if req.ip_only {
            SampleMode::IpOnly
        } else {
            SampleMode::Lbr
        },
        pids: req.pids.clone(),
    };
    let mut raw = RawProfile::default();
    let mut inputs = Vec::new();
    for input in &req.inputs {
        on_input(input.path());
        match input {
            Input::PerfData(p) => {
                let (r, s) = collect_perf_data(p, target, &codemap, &opts)?;
                raw.merge(r);
                inputs.push(s);
            }
            Input::PerfScript(p) => {
                let (r, s) = collect_perf_script(p, target, &codemap, &opts)?;
                raw.merge(r);
                inputs.push(s);
            }
            Input::Raw(p) => raw.merge(RawProfile::read_text(p, bin.preferred_base())?),
            Input::Parquet(p) => {
                let (r, s) = read_parquet(req, p, bin)?;
                raw.merge(r);
                inputs.push(s);
            }
        }
    }
    Ok((raw, inputs))
}

/// The outcome of a conversion of `raw`, read from `inputs`, before anything is
/// symbolized: the counts it holds, with no functions yet.
pub(crate) fn counted_outcome(
    req: &ProfileRequest,
    inputs: Vec<CollectStats>,
    raw: &RawProfile,
) -> ProfileOutcome {
    ProfileOutcome {
        binary: req.binary.display().to_string(),
        output: req.output.display().to_string(),
        format: req.format.name(),
        inputs,
        ranges: raw.ranges.len(),
        branches: raw.branches.len(),
        functions: 0,
        total_samples: 0,
        build: None,
        locations_with_discriminators: None,
        gcc: None,
        modules: Vec::new(),
        bolt: None,
        propeller: None,
        seconds: 0.0,
    }
}
