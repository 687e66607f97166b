//! `kfdo raw split`: one real recording as a simulated fleet, for tests and benches.
//!
//! The recording's samples, in file order, are cut into N consecutive parts, one per
//! host; each part is counted as `kfdo profile --raw-out` counts a whole recording and
//! written as `<prefix>-NNNN.parquet`. The perf.data is read once, whatever N: samples
//! are counted into the current host's profile as they stream by. A seeded generator
//! (ChaCha8: the same files for the same seed on any machine) gives each host a class
//! and, unless `--no-perturb`, an integer count factor 1..=4; one host in eight is cut
//! into two files of the same host (`-NNNN-2.parquet`), so per-host caps see hosts with
//! several files. Without perturbation the split is exact: merging the files gives
//! the counts of the whole recording.

use crate::error::RawError;
use crate::profile::rows_of;
use crate::schema::{FileInfo, RECORDER_IP};
use crate::write::{write_file, FileKind};
use kfdo_aggregate::count::for_each_sample_with;
use kfdo_aggregate::target::TargetBinary;
use kfdo_aggregate::{lbr, CodeMap, RawProfile};
use rand::{Rng, SeedableRng};
use std::path::PathBuf;

#[derive(Clone, Debug)]
pub struct SplitOptions {
    pub binary: PathBuf,
    pub perf_data: PathBuf,
    pub hosts: usize,
    pub seed: u64,
    pub out: PathBuf,
    pub prefix: String,
    /// Host classes to draw from (empty: every class is "").
    pub classes: Vec<String>,
    /// Scale each host's counts by a seeded factor 1..=4.
    pub perturb: bool,
    pub ip_only: bool,
}

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SplitReport {
    pub samples: u64,
    pub files: usize,
    /// Hosts whose part held no sample of the binary (no file written).
    pub empty_hosts: usize,
}

/// One output file: the samples before `end` (after the previous part's), of `host`.
struct Part {
    end: u64,
    host: usize,
    second: bool,
}

struct HostDraw {
    class: String,
    factor: i64,
}

/// The parts and each host's draw, from the sample count and the seed.
fn plan(opts: &SplitOptions, total: u64) -> (Vec<Part>, Vec<HostDraw>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(opts.seed);
    let n = opts.hosts as u64;
    let mut parts = Vec::new();
    let mut draws = Vec::new();
    for h in 0..opts.hosts {
        let class = if opts.classes.is_empty() {
            String::new()
        } else {
            opts.classes[rng.gen_range(0..opts.classes.len())].clone()
        };
        let factor = rng.gen_range(1..=4i64);
        let two_files = rng.gen_ratio(1, 8);
        draws.push(HostDraw {
            class,
            factor: if opts.perturb { factor } else { 1 },
        });
        let (lo, hi) = (total * h as u64 / n, total * (h as u64 + 1) / n);
        if two_files && hi - lo >= 2 {
            let mid = lo + (hi - lo) / 2;
            parts.push(Part {
                end: mid,
                host: h,
                second: false,
            });
            parts.push(Part {
                end: hi,
                host: h,
                second: true,
            });
        } else {
            parts.push(Part {
                end: hi,
                host: h,
                second: false,
            });
        }
    }
    (parts, draws)
}

/// The part being counted.
#[derive(Default)]
struct Current {
    raw: RawProfile,
    in_binary: u64,
    first: Option<u64>,
    last: Option<u64>,
}

/// Splits `opts.perf_data` into host files under `opts.out`.
pub fn split(opts: &SplitOptions) -> Result<SplitReport, RawError> {
    if opts.hosts == 0 {
        return Err(RawError::Request("--hosts must be at least 1".into()));
    }
    let bin = kfdo_elf::Binary::open(&opts.binary).map_err(|e| RawError::Request(e.to_string()))?;
    let code = kfdo_elf::Code::new(&bin).map_err(|e| RawError::Request(e.to_string()))?;
    let codemap = CodeMap::from_code(&code);
    let target = TargetBinary::new(&bin, None, false);
    let base = bin.preferred_base();
    let recorder = if opts.ip_only {
        RECORDER_IP.to_string()
    } else {
        crate::profile::recorder_of(&opts.perf_data)?
    };
    std::fs::create_dir_all(&opts.out)
        .map_err(|e| RawError::bad(&opts.out, format!("cannot create the directory: {e}")))?;
    let mut report = SplitReport::default();
    // Set by the mapping pass (which counts the samples), read by the sample pass.
    let planned: std::cell::OnceCell<(Vec<Part>, Vec<HostDraw>, String)> = Default::default();
    let mut current = Current::default();
    let (mut index, mut part) = (0u64, 0usize);
    let mut failed: Option<RawError> = None;
    let finish = |part: &Part, draws: &[HostDraw], c: &mut Current, path: &str| {
        let mut c = std::mem::take(c);
        lbr::finish_ranges(&mut c.raw, &codemap);
        let draw = &draws[part.host];
        let mut rows = rows_of(&c.raw, base, opts.ip_only)?;
        if rows.is_empty() {
            return Ok(false);
        }
        for r in &mut rows {
            r.count *= draw.factor;
        }
        let info = FileInfo {
            build_id: crate::profile::build_id_hex(&bin),
            binary_path: path.to_string(),
            host: format!("{}-{:04}", opts.prefix, part.host),
            host_class: draw.class.clone(),
            recorder: recorder.clone(),
            window_start_ns: c.first.unwrap_or(0) as i64,
            window_end_ns: c.last.unwrap_or(0) as i64,
            samples: c.in_binary as i64 * draw.factor,
        };
        let name = format!(
            "{}-{:04}{}.parquet",
            opts.prefix,
            part.host,
            if part.second { "-2" } else { "" }
        );
        write_file(&opts.out.join(name), &FileKind::Host, &info, rows)?;
        Ok::<bool, RawError>(true)
    };
    let mut written = 0usize;
    let mut has_file = vec![false; opts.hosts];
    let stats = for_each_sample_with(
        &opts.perf_data,
        &target,
        |stats| {
            let (parts, draws) = plan(opts, stats.samples);
            let path = crate::profile::recorded_path(stats, &bin);
            let _ = planned.set((parts, draws, path));
        },
        |s, view| {
            let Some((parts, draws, binary_path)) = planned.get() else {
                return;
            };
            if failed.is_some() {
                return;
            }
            while parts.get(part).is_some_and(|p| index >= p.end) {
                match finish(&parts[part], draws, &mut current, binary_path) {
                    Ok(w) => {
                        written += w as usize;
                        has_file[parts[part].host] |= w;
                    }
                    Err(e) => failed = Some(e),
                }
                part += 1;
            }
            index += 1;
            let c = &mut current;
            c.first = Some(c.first.map_or(s.time, |t| t.min(s.time)));
            c.last = Some(c.last.map_or(s.time, |t| t.max(s.time)));
            if view.is_empty() {
                return;
            }
            if opts.ip_only {
                if let Some(a) = view.translate(s.ip) {
                    c.in_binary += 1;
                    lbr::add_ip(&mut c.raw, &codemap, a, 1);
                }
                return;
            }
            // As the converter counts: an end outside the binary is address 0 (never code).
            let mut hit = false;
            let entries: Vec<(u64, u64)> = s
                .branch_stack
                .iter()
                .map(|e| {
                    let (f, t) = (view.translate(e.from), view.translate(e.to));
                    hit |= f.is_some_and(|a| a != 0) || t.is_some_and(|a| a != 0);
                    (f.unwrap_or(0), t.unwrap_or(0))
                })
                .collect();
            c.in_binary += hit as u64;
            lbr::add_lbr_stack(&mut c.raw, &codemap, entries.into_iter(), 1);
        },
    )?;
    if let Some(e) = failed {
        return Err(e);
    }
    let Some((parts, draws, binary_path)) = planned.get() else {
        return Err(RawError::Request("the recording was not read".into()));
    };
    while part < parts.len() {
        let w = finish(&parts[part], draws, &mut current, binary_path)?;
        written += w as usize;
        has_file[parts[part].host] |= w;
        part += 1;
    }
    report.samples = stats.samples;
    report.files = written;
    report.empty_hosts = has_file.iter().filter(|&&h| !h).count();
    Ok(report)
}
