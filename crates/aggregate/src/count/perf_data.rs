//! perf.data in: pass 1 (the mappings, sequential and cheap), then pass 2 in parallel
//! over the same chunks; and the walk of every placed sample for readers that want
//! each one.

use std::path::Path;

use kfdo_perf::{PerfData, Record};
use rayon::prelude::*;

use crate::code::CodeMap;
use crate::error::AggregateError;
use crate::raw::RawProfile;
use crate::space::{Spaces, View};
use crate::stacks::StackCache;
use crate::target::TargetBinary;

use super::combine::combine;
use super::mappings::{event, Event, Mappings};
use super::sample::count_sample;
use super::stats::{CountOptions, CountStats, Counts, SampleMode, RELEASE_EVERY};

/// Pass 1 over a perf.data: follows the mapping records (MMAP, FORK, COMM exec) of the
/// binary, counts the samples, and hands the pages it has read back to the kernel.
fn map_perf_data(
    data: &PerfData,
    path: &Path,
    target: &TargetBinary,
    n_chunks: usize,
) -> Result<(Spaces, CountStats), AggregateError> {
    // The build-id table says which recorded file names are this binary.
    let table: Vec<(String, Vec<u8>)> = data
        .build_ids()
        .iter()
        .map(|e| (e.filename.clone(), e.build_id.clone()))
        .collect();
    let id_of = |filename: &str| {
        let find = |name: &str| {
            table
                .iter()
                .find(|(f, _)| f == name)
                .map(|(_, id)| id.as_slice())
        };
        // perf maps the kernel as `[kernel.kallsyms]_text` (or `_stext`) but names its
        // build-id `[kernel.kallsyms]`: without this a recording of another kernel would be
        // read against the given vmlinux, its samples scattered over the wrong code.
        find(filename).or_else(|| {
            filename
                .starts_with("[kernel.kallsyms]")
                .then(|| find("[kernel.kallsyms]"))
                .flatten()
        })
    };
    let has_time = data
        .attrs()
        .iter()
        .all(|a| a.sample_type & kfdo_perf::consts::sample::TIME != 0);
    let mut m = Mappings::new(target, path);
    for mut chunk in data.record_chunks(n_chunks) {
        let mut released = chunk.position();
        while let Some(rec) = chunk.next_with_offset() {
            let (offset, rec) = rec?;
            m.pos = offset;
            match event(rec) {
                Event::Sample { time, .. } => {
                    m.samples += 1;
                    // Without PERF_SAMPLE_TIME every time reads 0: no window then.
                    if has_time {
                        let s = &mut m.stats;
                        s.first_time = Some(s.first_time.map_or(time, |t| t.min(time)));
                        s.last_time = Some(s.last_time.map_or(time, |t| t.max(time)));
                    }
                }
                Event::Mmap {
                    pid,
                    start,
                    len,
                    pgoff,
                    filename,
                    build_id,
                    exec,
                } => m.mmap(
                    pid,
                    start,
                    len,
                    pgoff,
                    filename,
                    build_id.or_else(|| id_of(filename)),
                    exec,
                ),
                Event::Fork { parent, child } => m.spaces.fork(offset, parent, child),
                Event::Exec { pid } => m.spaces.exec(offset, pid),
                Event::Other => {}
            }
            if offset - released >= RELEASE_EVERY {
                data.release(released, offset);
                released = offset;
            }
        }
        data.release(released, chunk.position());
    }
    m.finish(path)
}

/// Walks every sample of a perf.data in file order with the view that places its
/// addresses in the binary: the same matching (build-id, name, FORK, exec, kernel
/// anchors) as the conversion, for readers that want each sample rather than counts
/// (heat maps want its time). Returns what the mapping pass found.
pub fn for_each_sample(
    path: &Path,
    target: &TargetBinary,
    f: impl FnMut(&kfdo_perf::Sample<'_>, View<'_>),
) -> Result<CountStats, AggregateError> {
    for_each_sample_with(path, target, |_| {}, f)
}

/// [`for_each_sample`] that first tells `start` what the mapping pass found (the number
/// of samples, say, for a reader that splits them into parts).
pub fn for_each_sample_with(
    path: &Path,
    target: &TargetBinary,
    start: impl FnOnce(&CountStats),
    mut f: impl FnMut(&kfdo_perf::Sample<'_>, View<'_>),
) -> Result<CountStats, AggregateError> {
    let data = PerfData::open(path)?;
    let (spaces, stats) = map_perf_data(&data, path, target, 1)?;
    start(&stats);
    let mut records = data.records();
    let mut released = 0;
    while let Some(rec) = records.next_with_offset() {
        let (offset, rec) = rec?;
        if let Record::Sample(s) = rec {
            f(&s, spaces.view(s.pid, offset));
        }
        if offset - released >= RELEASE_EVERY {
            data.release(released, offset);
            released = offset;
        }
    }
    Ok(stats)
}

/// Read one perf.data file.
pub fn count_perf_data(
    path: &Path,
    target: &TargetBinary,
    code: &CodeMap,
    opts: &CountOptions,
) -> Result<(RawProfile, CountStats), AggregateError> {
    let data = PerfData::open(path)?;
    if opts.mode == SampleMode::Lbr && !data.attrs().iter().any(|a| a.has_branch_stack()) {
        return Err(AggregateError::Input(format!(
            "{}: the recording has no branch stacks (its events were recorded without -b / branch sampling); \
             record with `kfdo record` or `perf record -b`, or convert the IP samples alone with --ip-only",
            path.display()
        )));
    }
    let n_chunks = rayon::current_num_threads().max(1) * 4;
    let (spaces, stats) = map_perf_data(&data, path, target, n_chunks)?;

    let parts: Vec<_> = data
        .record_chunks(n_chunks)
        .into_par_iter()
        .map(|mut chunk| {
            let mut raw = RawProfile::default();
            let mut cache = StackCache::default();
            let mut c = Counts::default();
            let mut released = chunk.position();
            while let Some(rec) = chunk.next_with_offset() {
                let (offset, rec) = rec?;
                if let Event::Sample {
                    pid, ip, branches, ..
                } = event(rec)
                {
                    let entries = branches.iter().map(|e| (e.from, e.to));
                    count_sample(
                        &mut raw,
                        &mut cache,
                        &mut c,
                        code,
                        &spaces,
                        opts,
                        offset,
                        Some(pid),
                        ip,
                        entries,
                        1,
                    );
                }
                if offset - released >= RELEASE_EVERY {
                    data.release(released, offset);
                    released = offset;
                }
            }
            data.release(released, chunk.position());
            cache.flush(&mut raw, code);
            Ok((raw, c))
        })
        .collect();
    combine(parts, stats, path, target, code, opts)
}
