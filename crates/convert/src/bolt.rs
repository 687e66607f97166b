//! `kfdo profile --format bolt`: BOLT's fdata from perf.data recordings.

use std::path::Path;
use std::time::Instant;

use kfdo_aggregate::count::CountStats;

use crate::error::ProfileError;
use crate::outcome::{BoltSummary, ProfileOutcome};
use crate::request::{Input, ProfileRequest};

/// Why BOLT's conversion takes neither `--kernel` nor `--module`.
pub(crate) const NO_KERNEL: &str =
    "does not take --kernel or --module (BOLT on vmlinux is experimental)";

/// A request BOLT's conversion cannot do, and what it can.
pub(crate) fn refusal(what: &str) -> ProfileError {
    ProfileError::Request(format!(
        "--format bolt {what}; BOLT's profile is built from perf.data recordings of one binary"
    ))
}

/// BOLT reads perf.data on its own terms (`kfdo-layout`), not through the read step
/// the other formats share.
pub(crate) fn profile_bolt(
    req: &ProfileRequest,
    on_input: &mut dyn FnMut(&Path),
    started: Instant,
) -> Result<ProfileOutcome, ProfileError> {
    let unsupported = |what: &str| Err(refusal(what));
    if req.ip_only {
        return unsupported(
            "needs branch stacks: drop --ip-only (perf2bolt -nl's basic samples are not written)",
        );
    }
    // `--module` was refused with the same reason before (`profile::check_modules`).
    if req.kernel {
        return unsupported(NO_KERNEL);
    }
    if !req.pids.is_empty() || req.binary_name.is_some() {
        return unsupported("does not take --pid or --binary-name yet");
    }
    let mut perf = Vec::new();
    for input in &req.inputs {
        match input {
            Input::PerfData(p) => perf.push(p.clone()),
            other => {
                return unsupported(&format!(
                    "reads --perf-data only, not {}",
                    other.path().display()
                ))
            }
        }
    }
    for p in &perf {
        on_input(p);
    }
    let profile = kfdo_layout::bolt_profile(&req.binary, &perf)?;
    let mut out = kfdo_outfile::AtomicOutput::create(&req.output)?;
    let written = {
        let mut w = std::io::BufWriter::new(out.file());
        profile
            .fdata
            .write(&mut w)
            .and_then(|()| std::io::Write::flush(&mut w))
    };
    written.map_err(|e| out.error(e))?;
    out.commit()?;
    let s = &profile.stats;
    Ok(ProfileOutcome {
        binary: req.binary.display().to_string(),
        output: req.output.display().to_string(),
        format: req.format.name(),
        inputs: perf
            .iter()
            .map(|p| CountStats {
                input: p.display().to_string(),
                ..CountStats::default()
            })
            .collect(),
        ranges: 0,
        branches: s.records,
        functions: profile.functions(),
        total_samples: profile.fdata.total(),
        build: None,
        locations_with_discriminators: None,
        gcc: None,
        modules: Vec::new(),
        bolt: Some(BoltSummary {
            samples: s.samples,
            samples_with_branches: s.samples_with_branches,
            samples_in_binary: s.samples_in_binary,
            lbr_entries: s.traces.lbr_entries,
            traces: s.traces.traces,
            invalid_traces: s.traces.invalid_traces,
            long_range_traces: s.traces.long_range_traces,
            records: s.records,
        }),
        propeller: None,
        seconds: started.elapsed().as_secs_f64(),
    })
}
