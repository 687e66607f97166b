//! The read step, shared by every writer but BOLT's (which reads perf.data on its own
//! terms): every input of a request read for one binary into one raw profile (counts
//! add).

use std::path::Path;

use kfdo_aggregate::count::{
    count_perf_data, count_perf_script, CountOptions, CountStats, SampleMode,
};
use kfdo_aggregate::target::TargetBinary;
use kfdo_aggregate::{CodeMap, RawProfile};

use crate::error::ProfileError;
use crate::outcome::ProfileOutcome;
use crate::parquet_input::read_parquet;
use crate::request::{Input, ProfileRequest};

/// What the read step hands a writer: the binary's instructions, the counts of every
/// input, and what each input held.
pub(crate) struct Read {
    pub(crate) code: kfdo_elf::Code,
    pub(crate) raw: RawProfile,
    pub(crate) inputs: Vec<CountStats>,
}

/// The read step of a request for its own binary (`req.binary`, opened as `bin`).
pub(crate) fn read(
    req: &ProfileRequest,
    bin: &kfdo_elf::Binary,
    on_input: &mut dyn FnMut(&Path),
) -> Result<Read, ProfileError> {
    let code = kfdo_elf::Code::new(bin)?;
    let target = TargetBinary::new(bin, req.binary_name.as_deref(), req.kernel);
    let (raw, inputs) = read_inputs(req, bin, &target, &code, on_input)?;
    Ok(Read { code, raw, inputs })
}

/// Reads every input for the binary `bin` (the request's own, or a kernel module).
pub(crate) fn read_inputs(
    req: &ProfileRequest,
    bin: &kfdo_elf::Binary,
    target: &TargetBinary,
    code: &kfdo_elf::Code,
    on_input: &mut dyn FnMut(&Path),
) -> Result<(RawProfile, Vec<CountStats>), ProfileError> {
    let codemap = CodeMap::from_code(code);
    let opts = CountOptions {
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
                let (r, s) = count_perf_data(p, target, &codemap, &opts)?;
                raw.merge(r);
                inputs.push(s);
            }
            Input::PerfScript(p) => {
                let (r, s) = count_perf_script(p, target, &codemap, &opts)?;
                raw.merge(r);
                inputs.push(s);
            }
            Input::Unsymbolized(p) => raw.merge(RawProfile::read_text(p, bin.preferred_base())?),
            Input::Parquet(p) => {
                let (r, s) = read_parquet(req, p, bin)?;
                raw.merge(r);
                inputs.push(s);
            }
        }
    }
    Ok((raw, inputs))
}

/// Refuses counts that hold nothing for the binary: no profile is written from them.
pub(crate) fn require_counts(req: &ProfileRequest, raw: &RawProfile) -> Result<(), ProfileError> {
    if raw.is_empty() {
        return Err(ProfileError::Request(format!(
            "no samples: the inputs hold no range or branch counts for {}",
            req.binary.display()
        )));
    }
    Ok(())
}

/// The outcome of a conversion of `raw`, read from `inputs`, before anything is
/// symbolized: the counts it holds, with no functions yet.
pub(crate) fn counted_outcome(
    req: &ProfileRequest,
    inputs: Vec<CountStats>,
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
