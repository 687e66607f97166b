//! The end of both readers: per-chunk results added up, impossible ranges dropped,
//! and an empty result refused with the reason.

use std::path::Path;

use crate::code::CodeMap;
use crate::error::AggregateError;
use crate::lbr;
use crate::raw::RawProfile;
use crate::target::TargetBinary;

use super::stats::{CountOptions, CountStats, Counts};

/// Merge per-chunk results and drop impossible ranges.
pub(super) fn combine(
    parts: Vec<Result<(RawProfile, Counts), AggregateError>>,
    mut stats: CountStats,
    path: &Path,
    target: &TargetBinary,
    code: &CodeMap,
    opts: &CountOptions,
) -> Result<(RawProfile, CountStats), AggregateError> {
    let mut raw = RawProfile::default();
    for part in parts {
        let (r, c) = part?;
        raw.merge(r);
        stats.samples_used += c.used;
        stats.samples_in_binary += c.in_binary;
        stats.branch_records += c.records;
    }
    stats.dropped_range_count = lbr::finish_ranges(&mut raw, code);
    if raw.is_empty() {
        return Err(no_samples(path, target, &stats, opts));
    }
    Ok((raw, stats))
}

fn no_samples(
    path: &Path,
    target: &TargetBinary,
    stats: &CountStats,
    opts: &CountOptions,
) -> AggregateError {
    let pid_note = if opts.pids.is_empty() {
        String::new()
    } else {
        format!(" for pid(s) {:?}", opts.pids)
    };
    AggregateError::Input(format!(
        "{}: none of the {} samples{pid_note} fall in {}'s code ({} used, {} touched the binary); \
         the workload may not have run the binary, or the binary does not match the recording",
        path.display(),
        stats.samples,
        target.path,
        stats.samples_used,
        stats.samples_in_binary,
    ))
}
