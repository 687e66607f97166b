//! Reading recordings into a raw profile.
//!
//! Two passes over the input. The first, sequential, follows the mapping
//! records (MMAP, FORK, COMM exec) and counts samples per chunk; it decodes
//! no branch stacks and is cheap. The second, in parallel over the same
//! chunks, translates every sample's addresses into the binary and counts
//! ranges and branches into per-thread raw profiles that are then merged
//! (counts add, so the result does not depend on the split).

use crate::code::CodeMap;
use crate::error::AggregateError;
use crate::lbr;
use crate::raw::RawProfile;
use crate::space::{SpaceBuilder, Spaces, KERNEL_PID};
use crate::target::{hex, Match, TargetBinary};
use kfdo_perf::{PerfData, Record};
use rayon::prelude::*;
use std::path::Path;

/// What to count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleMode {
    /// Branch stacks (LBR): ranges and branches.
    Lbr,
    /// The sampled IP alone (`perf record -e cpu-clock`): one-instruction ranges.
    IpOnly,
}

#[derive(Clone, Debug)]
pub struct CollectOptions {
    pub mode: SampleMode,
    /// Only these processes (empty: all).
    pub pids: Vec<u32>,
}

/// What happened while reading one input, for the summary and for errors.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CollectStats {
    pub input: String,
    pub samples: u64,
    pub samples_used: u64,
    pub samples_in_binary: u64,
    pub branch_records: u64,
    pub dropped_range_count: u64,
    pub mapped_by_build_id: bool,
    /// Executable files mapped in the recording (for "no samples" errors).
    #[serde(skip)]
    pub mapped_files: Vec<String>,
}

/// The mapping-relevant part of a record, and samples reduced to what counting needs.
enum Event<'a> {
    Sample {
        pid: u32,
        ip: u64,
        branches: kfdo_perf::BranchStack<'a>,
    },
    Mmap {
        pid: u32,
        start: u64,
        len: u64,
        pgoff: u64,
        filename: &'a str,
        build_id: Option<&'a [u8]>,
        exec: bool,
    },
    Fork {
        parent: u32,
        child: u32,
    },
    Exec {
        pid: u32,
    },
    Other,
}

fn event<'a>(r: Record<'a>) -> Event<'a> {
    match r {
        Record::Sample(s) => Event::Sample {
            pid: s.pid,
            ip: s.ip,
            branches: s.branch_stack,
        },
        Record::Mmap(m) => Event::Mmap {
            pid: m.pid,
            start: m.start,
            len: m.len,
            pgoff: m.pgoff,
            filename: m.filename,
            build_id: m.build_id,
            exec: m.is_executable(),
        },
        Record::Fork(f) => Event::Fork {
            parent: f.ppid,
            child: f.pid,
        },
        Record::Comm(c) if c.exec => Event::Exec { pid: c.pid },
        _ => Event::Other,
    }
}

/// Read one perf.data file.
pub fn collect_perf_data(
    path: &Path,
    target: &TargetBinary,
    code: &CodeMap,
    opts: &CollectOptions,
) -> Result<(RawProfile, CollectStats), AggregateError> {
    let data = PerfData::open(path)?;
    let mut stats = CollectStats {
        input: path.display().to_string(),
        ..Default::default()
    };

    if opts.mode == SampleMode::Lbr && !data.attrs().iter().any(|a| a.has_branch_stack()) {
        return Err(AggregateError::Input(format!(
            "{}: the recording has no branch stacks (its events were recorded without -b / branch sampling); \
             record with `kfdo record` or `perf record -b`, or convert the IP samples alone with --ip-only",
            path.display()
        )));
    }

    // The build-id table says which recorded file names are this binary.
    let mut table_ids: Vec<(String, Vec<u8>)> = Vec::new();
    for e in data.build_ids() {
        table_ids.push((e.filename.clone(), e.build_id.clone()));
    }
    let id_of = |filename: &str| -> Option<&[u8]> {
        table_ids
            .iter()
            .find(|(f, _)| f == filename)
            .map(|(_, id)| id.as_slice())
    };

    let threads = rayon::current_num_threads().max(1);
    let chunks = data.record_chunks(threads * 4);

    // Pass 1: mappings, and sample counts per chunk.
    let mut spaces = SpaceBuilder::default();
    let mut chunk_base = Vec::with_capacity(chunks.len());
    let mut pos = 0u64;
    let mut mismatch: Option<(String, Vec<u8>)> = None;
    for chunk in data.record_chunks(threads * 4) {
        chunk_base.push(pos);
        for rec in chunk {
            match event(rec?) {
                Event::Sample { .. } => pos += 1,
                Event::Mmap {
                    pid,
                    start,
                    len,
                    pgoff,
                    filename,
                    build_id,
                    exec,
                } => {
                    if !exec {
                        continue;
                    }
                    if !stats.mapped_files.iter().any(|f| f == filename)
                        && stats.mapped_files.len() < 64
                    {
                        stats.mapped_files.push(filename.to_string());
                    }
                    let id = build_id.or_else(|| id_of(filename));
                    let delta = match target.matches(filename, id) {
                        Match::Yes => {
                            stats.mapped_by_build_id |= id.is_some() && target.build_id.is_some();
                            target.mapping_delta(filename, start, pgoff)
                        }
                        Match::BuildIdDiffers(theirs) => {
                            mismatch.get_or_insert((filename.to_string(), theirs));
                            None
                        }
                        Match::No => None,
                    };
                    let pid = if target.kernel_symbols.is_some()
                        && filename.starts_with("[kernel.kallsyms]")
                    {
                        KERNEL_PID
                    } else {
                        pid
                    };
                    spaces.mmap(pos, pid, start, len, delta);
                }
                Event::Fork { parent, child } => spaces.fork(pos, parent, child),
                Event::Exec { pid } => spaces.exec(pos, pid),
                Event::Other => {}
            }
        }
    }
    stats.samples = pos;
    let spaces = spaces.build();
    if !spaces.mapped_anywhere() {
        return Err(not_mapped(path, target, &stats, mismatch));
    }

    // Pass 2: count, in parallel.
    let parts: Vec<Result<(RawProfile, Counts), AggregateError>> = chunks
        .into_par_iter()
        .zip(chunk_base.into_par_iter())
        .map(|(chunk, base)| {
            let mut raw = RawProfile::default();
            let mut c = Counts::default();
            let mut ordinal = base;
            for rec in chunk {
                if let Event::Sample { pid, ip, branches } = event(rec?) {
                    count_sample(
                        &mut raw, &mut c, code, &spaces, opts, ordinal, pid, ip, &branches,
                    );
                    ordinal += 1;
                }
            }
            Ok((raw, c))
        })
        .collect();
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

#[derive(Default)]
struct Counts {
    used: u64,
    in_binary: u64,
    records: u64,
}

#[allow(clippy::too_many_arguments)]
#[inline]
fn count_sample(
    raw: &mut RawProfile,
    c: &mut Counts,
    code: &CodeMap,
    spaces: &Spaces,
    opts: &CollectOptions,
    ordinal: u64,
    pid: u32,
    ip: u64,
    branches: &kfdo_perf::BranchStack<'_>,
) {
    if !opts.pids.is_empty() && !opts.pids.contains(&pid) {
        return;
    }
    let view = spaces.view(pid, ordinal);
    if view.is_empty() {
        return;
    }
    c.used += 1;
    match opts.mode {
        SampleMode::IpOnly => {
            if let Some(a) = view.translate(ip) {
                c.in_binary += 1;
                lbr::add_ip(raw, code, a, 1);
            }
        }
        SampleMode::Lbr => {
            if branches.is_empty() {
                return;
            }
            c.records += branches.len() as u64;
            // Not in the binary: 0, which is never code, so it counts as external.
            let mut hit = false;
            let entries = branches.iter().map(|e| {
                let from = view.translate(e.from).unwrap_or(0);
                let to = view.translate(e.to).unwrap_or(0);
                hit |= from != 0 || to != 0;
                (from, to)
            });
            lbr::add_lbr_stack(raw, code, entries, 1);
            c.in_binary += hit as u64;
        }
    }
}

fn not_mapped(
    path: &Path,
    target: &TargetBinary,
    stats: &CollectStats,
    mismatch: Option<(String, Vec<u8>)>,
) -> AggregateError {
    if let Some((file, theirs)) = mismatch {
        let ours = target
            .build_id
            .as_deref()
            .map(hex)
            .unwrap_or_else(|| "none".into());
        return AggregateError::Input(format!(
            "{}: build-id mismatch: the recording's {file} has build-id {}, but {} has build-id {ours}; \
             pass the exact binary that was profiled (rebuilding changes the build-id)",
            path.display(),
            hex(&theirs),
            target.path,
        ));
    }
    let files = if stats.mapped_files.is_empty() {
        "none (was it recorded without mmap events, e.g. by a tool that drops them?)".to_string()
    } else {
        stats
            .mapped_files
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    };
    AggregateError::Input(format!(
        "{}: no mapping of {} (name `{}`{}) in the recording; executable files it maps: {files}. \
         Check the binary, or use --binary-name NAME if it ran under another name",
        path.display(),
        target.path,
        target.name,
        target
            .build_id
            .as_deref()
            .map(|b| format!(", build-id {}", hex(b)))
            .unwrap_or_default(),
    ))
}

fn no_samples(
    path: &Path,
    target: &TargetBinary,
    stats: &CollectStats,
    opts: &CollectOptions,
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
