//! `kfdo profile --raw-out`: the counts the converter collects as one host's raw Parquet
//! file (`kfdo-rawfleet`), keyed by the binary's build-id, with the host, window,
//! samples and recorder. `--from-raw` reads such files back (`parquet_input`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use kfdo_aggregate::target::TargetBinary;
use kfdo_rawfleet::profile as rows;
use kfdo_rawfleet::schema::{FileInfo, RECORDER_IP};
use kfdo_rawfleet::write::{write_file, FileKind};

use crate::collect::collect;
use crate::error::ProfileError;
use crate::request::{Input, OutputFormat, ProfileRequest};

/// Where and as whom to write a host file.
#[derive(Clone, Debug)]
pub struct RawOut {
    pub path: PathBuf,
    pub host: String,
    pub host_class: String,
}

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

/// `kfdo profile --raw-out`: the recordings' counts of `req.binary` as one host file.
pub fn write_raw_parquet(
    req: &ProfileRequest,
    out: &RawOut,
    on_input: &mut dyn FnMut(&Path),
) -> Result<RawOutOutcome, ProfileError> {
    let started = Instant::now();
    // The window and samples come from the recordings: only perf.data carries both.
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
    if !req.modules.is_empty() {
        return Err(ProfileError::Request(
            "--raw-out writes one binary's counts: drop --module (write each .ko's file in its own run)"
                .into(),
        ));
    }
    let bin = kfdo_elf::Binary::open(&req.binary)?;
    crate::arch_check::check_inputs(&req.inputs, &req.binary, bin.arch())?;
    crate::stripped::check_symbols(&bin, OutputFormat::Raw)?;
    let code = kfdo_elf::Code::new(&bin)?;
    let target = TargetBinary::new(&bin, req.binary_name.as_deref(), req.kernel);
    let (raw, stats) = collect(req, &bin, &target, &code, on_input)?;
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
        build_id: rows::build_id_hex(&bin),
        binary_path: rows::recorded_path(&stats[0], &bin),
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
