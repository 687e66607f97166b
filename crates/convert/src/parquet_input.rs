//! `kfdo profile --from-raw`: a raw Parquet file (`kfdo-rawfleet`, after a fleet merge
//! say) read back into the same [`RawProfile`] a direct conversion builds, so every
//! output format follows unchanged.

use std::path::Path;

use kfdo_aggregate::count::CountStats;
use kfdo_aggregate::RawProfile;
use kfdo_rawfleet::schema::{RowKind, RECORDER_IP};
use kfdo_rawfleet::{profile as rows, read};

use crate::error::ProfileError;
use crate::request::{Input, ProfileRequest};

/// `req` with `ip_only` set when one of its raw Parquet inputs holds IP samples (the
/// recorder `ip`): such a file converts as `--ip-only` without being told.
pub(crate) fn with_recorded_mode(req: &ProfileRequest) -> Result<ProfileRequest, ProfileError> {
    let mut req = req.clone();
    for input in &req.inputs {
        if let Input::Parquet(p) = input {
            req.ip_only |= parquet_recorder(p)? == RECORDER_IP;
        }
    }
    Ok(req)
}

/// The recorder of a raw file (its first row's), to choose IP-only symbolization.
fn parquet_recorder(path: &Path) -> Result<String, ProfileError> {
    let mut r = read::open(path)?;
    let mut rows = Vec::new();
    r.next_rows(&mut rows)?;
    Ok(r.info().map(|i| i.recorder.clone()).unwrap_or_default())
}

/// `--from-raw`: a raw file's counts, if it is of this very binary, and its samples as
/// an input's statistics.
pub(crate) fn read_parquet(
    req: &ProfileRequest,
    path: &Path,
    bin: &kfdo_elf::Binary,
) -> Result<(RawProfile, CountStats), ProfileError> {
    let ours = rows::build_id_hex(bin);
    let base = bin.preferred_base();
    let mut raw = RawProfile::default();
    let (mut ip, mut lbr) = (0u64, 0u64);
    let summary = read::scan(path, |info, batch| {
        if info.build_id != ours {
            return Err(kfdo_rawfleet::RawError::bad(
                path,
                format!(
                    "holds counts of build-id `{}`, but {} has build-id `{ours}`: pass the \
                     binary of that release (or merge with --build-id {ours})",
                    info.build_id,
                    req.binary.display()
                ),
            ));
        }
        for r in batch {
            if r.kind == RowKind::Ip {
                ip += 1;
            } else {
                lbr += 1;
            }
        }
        rows::add_rows(&mut raw, batch, base);
        Ok(())
    })?;
    let what = match (ip > 0, lbr > 0, req.ip_only) {
        (true, true, _) => Some(
            "mixes IP-only counts with branch-stack counts, which symbolize differently: \
             merge the IP-only hosts and the branch-stack hosts into separate files",
        ),
        (true, false, false) => Some("holds IP-only counts: convert it with --ip-only"),
        (false, true, true) => Some("holds branch-stack counts: drop --ip-only"),
        _ => None,
    };
    if let Some(what) = what {
        return Err(ProfileError::Request(format!(
            "{}: {what} (recorder `{}`)",
            path.display(),
            summary.info.recorder
        )));
    }
    // The file's samples stand for the recording's in the summary.
    let samples = summary.info.samples.max(0) as u64;
    let stats = CountStats {
        input: path.display().to_string(),
        samples,
        samples_used: samples,
        samples_in_binary: samples,
        ..Default::default()
    };
    Ok((raw, stats))
}
