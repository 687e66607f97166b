//! `kfdo profile --raw-out`: the counts the read step found as one host's raw Parquet
//! file (`kfdo-rawfleet`), keyed by the binary's build-id, with the host, window,
//! samples and recorder. `--from-raw` reads such files back (`parquet_input`).

use std::time::Instant;

use kfdo_rawfleet::profile as rows;
use kfdo_rawfleet::schema::{FileInfo, RECORDER_IP};
use kfdo_rawfleet::write::{write_file, FileKind};

use crate::error::ProfileError;
use crate::read::Read;
use crate::request::{Input, ProfileRequest, RawOut};

/// What `kfdo profile --raw-out` wrote (its `--json`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct RawOutOutcome {
    pub output: String,
    pub build_id: String,
    pub binary_path: String,
    pub host: String,
    pub recorder: String,
    pub window_start_ns: i64,
    pub window_end_ns: i64,
    /// The binary's samples (the file's `samples`).
    pub samples: i64,
    /// Every sample the recordings hold, of every process.
    pub samples_recorded: u64,
    pub rows: usize,
    pub seconds: f64,
}

/// Before anything is read: a host file's window and samples come from the
/// recordings, and only perf.data carries both.
pub(crate) fn check_inputs(req: &ProfileRequest) -> Result<(), ProfileError> {
    if let Some(other) = req.inputs.iter().find(|i| !matches!(i, Input::PerfData(_))) {
        return Err(ProfileError::Request(format!(
            "--raw-out reads --perf-data recordings only (they carry the time window and \
             sample count), not {}",
            other.path().display()
        )));
    }
    if req.inputs.is_empty() {
        return Err(ProfileError::Request("no input: give --perf-data".into()));
    }
    Ok(())
}

/// The counts of `req.binary` the read step found, as one host file.
pub(crate) fn write_raw_out(
    req: &ProfileRequest,
    out: &RawOut,
    bin: &kfdo_elf::Binary,
    read: Read,
    started: Instant,
) -> Result<RawOutOutcome, ProfileError> {
    let Read {
        raw, inputs: stats, ..
    } = read;
    let recorder = if req.ip_only {
        RECORDER_IP.to_string()
    } else {
        let mut kinds: Vec<String> = Vec::new();
        for i in &req.inputs {
            kinds.push(rows::recorder_of(i.path())?);
        }
        kinds.sort();
        kinds.dedup();
        if kinds.len() == 1 {
            kinds.remove(0)
        } else {
            kfdo_rawfleet::schema::RECORDER_MIXED.to_string()
        }
    };
    let first = stats.iter().filter_map(|s| s.first_time).min().unwrap_or(0);
    let last = stats.iter().filter_map(|s| s.last_time).max().unwrap_or(0);
    let samples: u64 = stats.iter().map(|s| s.samples_in_binary).sum();
    let info = FileInfo {
        build_id: rows::build_id_hex(bin),
        binary_path: rows::recorded_path(&stats[0], bin),
        host: out.host.clone(),
        host_class: out.host_class.clone(),
        recorder,
        window_start_ns: i64::try_from(first).unwrap_or(i64::MAX),
        window_end_ns: i64::try_from(last).unwrap_or(i64::MAX),
        samples: i64::try_from(samples).unwrap_or(i64::MAX),
    };
    let rows = rows::rows_of(&raw, bin.preferred_base(), req.ip_only)?;
    let n = rows.len();
    write_file(&out.path, &FileKind::Host, &info, rows)?;
    Ok(RawOutOutcome {
        output: out.path.display().to_string(),
        build_id: info.build_id,
        binary_path: info.binary_path,
        host: info.host,
        recorder: info.recorder,
        window_start_ns: info.window_start_ns,
        window_end_ns: info.window_end_ns,
        samples: info.samples,
        samples_recorded: stats.iter().map(|s| s.samples).sum(),
        rows: n,
        seconds: started.elapsed().as_secs_f64(),
    })
}
