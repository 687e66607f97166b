//! `kfdo merge-raw`: many host files into one, exactly as the contract (and so the
//! fleet's Spark job) says.
//!
//! Two passes, each over the files side by side on every core. The first reads every
//! file's footer and per-file columns (one row), because selection and the host cap
//! need all files' samples before any count can be scaled. The second checks every
//! row, scales it and adds it up as sorted runs (`runs`: each file is sorted by the
//! contract, so no hash map is needed), merging groups of files into the running sum:
//! memory is bounded by the distinct keys and one group's rows, never by the number of
//! files. All arithmetic is integer, never float, so any implementation of the
//! contract gets the same numbers.

use crate::error::RawError;
use crate::input::RawInput;
use crate::read::{self, Summary};
use crate::runs::{self, Overflow, Run};
use crate::schema::{FileInfo, Row, RECORDER_MIXED};
use crate::write::{write_file, FileKind};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Clone, Debug, Default)]
pub struct MergeOptions {
    /// Keep files of this build-id only (one release).
    pub build_id: Option<String>,
    /// Keep files whose window starts at or after this (ns).
    pub since: Option<i64>,
    /// Keep files whose window ends at or before this (ns).
    pub until: Option<i64>,
    /// Drop unreadable or newer-schema files (counted) instead of failing.
    pub skip_bad: bool,
    /// Most samples one host may contribute.
    pub host_cap: Option<u64>,
    /// (host class, weight in thousandths); unlisted classes weigh 1000.
    pub weights: Vec<(String, u64)>,
}

/// What a merge kept, dropped and wrote.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct MergeReport {
    pub files_in: usize,
    pub kept: usize,
    pub dropped_build_id: usize,
    pub dropped_window: usize,
    /// Files dropped by --skip-bad, each with why.
    pub dropped_bad: Vec<String>,
    pub hosts: usize,
    /// Hosts whose samples were scaled down to the cap.
    pub capped_hosts: usize,
    pub rows_in: u64,
    pub rows_out: u64,
    pub samples: i64,
    /// Wall seconds of each pass: where a merge spends its time.
    pub seconds: MergeSeconds,
}

/// Wall seconds of a merge's passes.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct MergeSeconds {
    /// Footers and the first row of every file (selection, caps).
    pub footers: f64,
    /// Every kept row read, checked, scaled and summed.
    pub rows: f64,
    /// The merged file written.
    pub write: f64,
}

/// `CLASS=W`: W a non-negative decimal with at most 3 decimals, as thousandths.
pub fn parse_weight(s: &str) -> Result<(String, u64), RawError> {
    let bad = |why: &str| {
        RawError::Request(format!(
            "--weight {s}: {why}; write CLASS=W with W a decimal such as 2 or 0.5 (at most 3 decimals)"
        ))
    };
    let (class, w) = s.rsplit_once('=').ok_or_else(|| bad("no `=`"))?;
    let (int, frac) = w.split_once('.').unwrap_or((w, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(bad("no weight"));
    }
    if frac.len() > 3 {
        return Err(bad("more than 3 decimals"));
    }
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !digits(frac) {
        return Err(bad("not a non-negative decimal"));
    }
    let i: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| bad("too large"))?
    };
    let f: u64 = format!("{frac:0<3}").parse().unwrap_or(0);
    let k = i
        .checked_mul(1000)
        .and_then(|v| v.checked_add(f))
        .ok_or_else(|| bad("too large"))?;
    Ok((class.to_string(), k))
}

/// Files and directories to files: a directory gives every `*.parquet` under it,
/// recursively, sorted by path; one without any is an error.
pub fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, RawError> {
    let mut files = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input)
            .map_err(|e| RawError::bad(input, format!("cannot read: {e}")))?;
        if !meta.is_dir() {
            files.push(input.clone());
            continue;
        }
        let mut found = Vec::new();
        walk(input, &mut found)?;
        if found.is_empty() {
            return Err(RawError::bad(
                input,
                "no *.parquet files under this directory: point merge-raw at the directory \
                 the hosts' `kfdo profile --raw-out` files were collected into",
            ));
        }
        found.sort();
        files.extend(found);
    }
    if files.is_empty() {
        return Err(RawError::Request(
            "no input: give raw files or directories of them".into(),
        ));
    }
    Ok(files)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), RawError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| RawError::bad(dir, format!("cannot list: {e}")))?;
    for e in entries {
        let e = e.map_err(|e| RawError::bad(dir, format!("cannot list: {e}")))?;
        let p = e.path();
        let ty = e
            .file_type()
            .map_err(|e| RawError::bad(&p, format!("cannot stat: {e}")))?;
        if ty.is_dir() {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "parquet") {
            out.push(p);
        }
    }
    Ok(())
}

/// floor(c * num / den), exactly.
fn scale(c: u128, num: u128, den: u128) -> u128 {
    c * num / den
}

/// How one kept file's counts scale: the host cap, then the class weight.
#[derive(Clone, Copy, Debug)]
struct Factor {
    cap: Option<(u128, u128)>,
    weight: u128,
}

impl Factor {
    fn apply(self, c: i64) -> u128 {
        let mut c = c.max(0) as u128;
        if let Some((n, s)) = self.cap {
            c = scale(c, n, s);
        }
        scale(c, self.weight, 1000)
    }
}

/// Rows (by the files' own counts) decoded before they are merged into the running
/// sum: memory is the distinct keys plus this, whatever the number of files.
const GROUP_ROWS: u64 = 1 << 23;

/// Merges `inputs` (files and directories) into `output` per `opts`.
pub fn merge(
    inputs: &[PathBuf],
    opts: &MergeOptions,
    output: &Path,
) -> Result<MergeReport, RawError> {
    let files: Vec<RawInput> = expand_inputs(inputs)?
        .into_iter()
        .map(RawInput::local)
        .collect();
    merge_files(&files, opts, output)
}

/// Merges `files` (files only, in this order) into `output` per `opts`; every message
/// and the report name each file by its [`RawInput::name`].
pub fn merge_files(
    files: &[RawInput],
    opts: &MergeOptions,
    output: &Path,
) -> Result<MergeReport, RawError> {
    merge_in_groups(files, opts, output, GROUP_ROWS)
}

/// [`merge_files`], decoding up to `group_rows` rows before each merge into the sum.
pub(crate) fn merge_in_groups(
    files: &[RawInput],
    opts: &MergeOptions,
    output: &Path,
    group_rows: u64,
) -> Result<MergeReport, RawError> {
    if files.is_empty() {
        return Err(RawError::Request(
            "no input: give raw files or directories of them".into(),
        ));
    }
    let mut report = MergeReport {
        files_in: files.len(),
        ..Default::default()
    };
    let clock = Instant::now();
    // Pass 1: every file's footer and per-file columns (its first row), side by side.
    let firsts: Vec<Result<Summary, RawError>> =
        files.par_iter().map(read::first_row_named).collect();
    let mut readable: Vec<Summary> = Vec::new();
    for s in firsts {
        match s {
            Ok(s) => readable.push(s),
            Err(e @ RawError::BadFile { .. }) if opts.skip_bad => {
                report.dropped_bad.push(e.to_string())
            }
            Err(e) => return Err(e),
        }
    }
    if opts.build_id.is_none() {
        if let Some(first) = readable.first() {
            if let Some(other) = readable
                .iter()
                .find(|s| s.info.build_id != first.info.build_id)
            {
                return Err(RawError::Request(format!(
                    "mixed build-ids: {} has build-id `{}` but {} has `{}`; merge one release \
                     at a time with --build-id ID",
                    first.name.display(),
                    first.info.build_id,
                    other.name.display(),
                    other.info.build_id
                )));
            }
        }
    }
    let mut kept = Vec::new();
    report.seconds.footers = clock.elapsed().as_secs_f64();
    for s in readable {
        if opts
            .build_id
            .as_ref()
            .is_some_and(|id| *id != s.info.build_id)
        {
            report.dropped_build_id += 1;
        } else if opts.since.is_some_and(|t| s.info.window_start_ns < t)
            || opts.until.is_some_and(|t| s.info.window_end_ns > t)
        {
            report.dropped_window += 1;
        } else {
            kept.push(s);
        }
    }
    // Pass 2: every row of the kept files, checked, scaled and summed. A file found bad
    // only here (a broken row) is dropped with --skip-bad and the pass run again
    // without it, since its host's cap counted its samples: the result is always that
    // of merging the good files alone.
    let (sum, mut info) = loop {
        if kept.is_empty() {
            return Err(RawError::Request(format!(
                "no input file left to merge: of {} file(s), {} had another build-id, {} lay \
                 outside the time window, {} were unreadable; check --build-id, --since and --until",
                report.files_in,
                report.dropped_build_id,
                report.dropped_window,
                report.dropped_bad.len()
            )));
        }
        let clock = Instant::now();
        let mut r = report.clone();
        let factors = factors(&kept, opts, &mut r);
        let info = merged_info(&kept, &factors)?;
        match sum_files(&kept, &factors, group_rows) {
            Ok((sum, rows_in)) => {
                report = r;
                report.rows_in = rows_in;
                report.seconds.rows = clock.elapsed().as_secs_f64();
                break (sum, info);
            }
            Err((at, e @ RawError::BadFile { .. })) if opts.skip_bad => {
                report.dropped_bad.push(e.to_string());
                kept.remove(at);
            }
            Err((_, e)) => return Err(e),
        }
    };
    let clock = Instant::now();
    let rows: Vec<Row> = sum
        .keys
        .iter()
        .zip(&sum.counts)
        .map(|(&k, &count)| {
            let (kind, from, to) = runs::unkey(k);
            Row {
                kind,
                from,
                to,
                count: count as i64,
            }
        })
        .collect();
    drop(sum);
    if rows.is_empty() {
        return Err(RawError::Request(format!(
            "every count became 0 after the host cap and weights: nothing written to {}",
            output.display()
        )));
    }
    report.rows_out = rows.len() as u64;
    report.kept = kept.len();
    report.hosts = kept
        .iter()
        .map(|s| &s.info.host)
        .collect::<FxHashSet<_>>()
        .len();
    report.samples = info.samples;
    info.host.clear();
    info.host_class.clear();
    let kind = FileKind::Merged {
        hosts: report.hosts as u64,
        files: kept.len() as u64,
    };
    write_file(output, &kind, &info, rows)?;
    report.seconds.write = clock.elapsed().as_secs_f64();
    Ok(report)
}

/// The scaled counts of all `kept` files summed, and the rows read; on a bad file, its
/// index in `kept` (the first in order, whatever ran first) and why.
fn sum_files(
    kept: &[Summary],
    factors: &[Factor],
    group_rows: u64,
) -> Result<(Run, u64), (usize, RawError)> {
    let mut sum = Run::default();
    let mut rows_in = 0;
    let mut start = 0;
    while start < kept.len() {
        // A group: files until `group_rows` rows, at least one.
        let mut end = start;
        let mut rows = 0;
        while end < kept.len() && (end == start || rows + kept[end].rows <= group_rows) {
            rows += kept[end].rows;
            end += 1;
        }
        let decoded: Vec<Result<(Run, u64), RawError>> = (start..end)
            .into_par_iter()
            .map(|i| file_run(&kept[i], factors[i]))
            .collect();
        let mut group = Vec::with_capacity(decoded.len() + 1);
        group.push(std::mem::take(&mut sum));
        for (i, d) in (start..end).zip(decoded) {
            let (run, n) = d.map_err(|e| (i, e))?;
            rows_in += n;
            group.push(run);
        }
        sum = Run::merge_all(group).map_err(|o| (start, overflow(o)))?;
        start = end;
    }
    Ok((sum, rows_in))
}

/// One file's rows, checked and scaled (zeros dropped), as a sorted run.
fn file_run(s: &Summary, factor: Factor) -> Result<(Run, u64), RawError> {
    let mut r = read::open_named(&RawInput::named(&s.path, &s.name))?;
    let mut keys = Vec::with_capacity(s.rows as usize);
    let mut counts = Vec::with_capacity(s.rows as usize);
    let mut rows = 0u64;
    let mut big = None;
    while r.next_columns(|now, c| {
        if *now != s.info {
            return Err(RawError::bad(&s.name, "changed while it was being merged"));
        }
        rows += c.kinds.len() as u64;
        for (i, &kind) in c.kinds.iter().enumerate() {
            let scaled = factor.apply(c.count[i]);
            if scaled == 0 {
                continue;
            }
            let k = runs::key(kind, c.from[i], c.to[i]);
            if scaled > i64::MAX as u128 {
                big.get_or_insert(k);
            }
            keys.push(k);
            counts.push(scaled.min(i64::MAX as u128) as u64);
        }
        Ok(())
    })? {}
    if let Some(k) = big {
        return Err(overflow(Overflow(k)));
    }
    let run = Run::from_pairs(keys, counts).map_err(overflow)?;
    Ok((run, rows))
}

fn overflow(o: Overflow) -> RawError {
    let (kind, from, to) = runs::unkey(o.0);
    RawError::Request(format!(
        "the merged count of ({}, {from}, {to}) is beyond int64: merge fewer files or use \
         smaller weights",
        kind.as_str()
    ))
}

/// Each kept file's factor: its host's cap (over all that host's kept files), then its
/// class's weight.
fn factors(kept: &[Summary], opts: &MergeOptions, report: &mut MergeReport) -> Vec<Factor> {
    let mut per_host: FxHashMap<&str, u128> = FxHashMap::default();
    for s in kept {
        *per_host.entry(&s.info.host).or_insert(0) += s.info.samples.max(0) as u128;
    }
    if let Some(n) = opts.host_cap {
        report.capped_hosts = per_host.values().filter(|&&s| s > n as u128).count();
    }
    kept.iter()
        .map(|s| {
            let total = per_host[s.info.host.as_str()];
            let cap = opts
                .host_cap
                .filter(|&n| total > n as u128)
                .map(|n| (n as u128, total));
            let weight = opts
                .weights
                .iter()
                .rev()
                .find(|(class, _)| *class == s.info.host_class)
                .map_or(1000, |&(_, k)| k) as u128;
            Factor { cap, weight }
        })
        .collect()
}

/// The merged file's per-file columns (host and class are emptied by the caller).
fn merged_info(kept: &[Summary], factors: &[Factor]) -> Result<FileInfo, RawError> {
    let first = &kept[0].info;
    let mut info = first.clone();
    let mut samples: u128 = 0;
    for (s, f) in kept.iter().zip(factors) {
        let i = &s.info;
        if i.binary_path < info.binary_path {
            info.binary_path = i.binary_path.clone();
        }
        if i.recorder != info.recorder {
            info.recorder = RECORDER_MIXED.into();
        }
        info.window_start_ns = info.window_start_ns.min(i.window_start_ns);
        info.window_end_ns = info.window_end_ns.max(i.window_end_ns);
        samples += f.apply(i.samples);
    }
    info.samples = i64::try_from(samples)
        .map_err(|_| RawError::Request(format!("the merged samples {samples} are beyond int64")))?;
    Ok(info)
}
