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
use crate::space::{SpaceBuilder, Spaces, View, ANY_PID, KERNEL_PID};
use crate::stacks::{SeenLines, StackCache};
use crate::target::{hex, Match, TargetBinary};
use kfdo_perf::{PerfData, Record, ScriptFile, ScriptItem};
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
    /// Earliest and latest sample time of the recording (perf clock, ns; any process),
    /// perf.data only: the recording's time window (fleet raw files carry it).
    pub first_time: Option<u64>,
    pub last_time: Option<u64>,
    /// The file name the recording mapped the binary under (the first match).
    pub mapped_as: Option<String>,
    /// Executable files mapped in the recording (for "no samples" errors).
    #[serde(skip)]
    pub mapped_files: Vec<String>,
}

/// The mapping-relevant part of a record, and samples reduced to what counting needs.
enum Event<'a> {
    Sample {
        pid: u32,
        ip: u64,
        time: u64,
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
            time: s.time,
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

/// Pass 1 state: mappings in stream order, keyed by the byte offset of their record.
struct Mappings<'t> {
    target: &'t TargetBinary,
    spaces: SpaceBuilder,
    /// Byte offset of the record being read: the position mapping changes take effect at.
    pos: u64,
    samples: u64,
    mismatch: Option<(String, Vec<u8>)>,
    stats: CollectStats,
}

impl<'t> Mappings<'t> {
    fn new(target: &'t TargetBinary, input: &Path) -> Self {
        Self {
            target,
            spaces: SpaceBuilder::default(),
            pos: 0,
            samples: 0,
            mismatch: None,
            stats: CollectStats {
                input: input.display().to_string(),
                ..Default::default()
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn mmap(
        &mut self,
        pid: u32,
        start: u64,
        len: u64,
        pgoff: u64,
        filename: &str,
        build_id: Option<&[u8]>,
        exec: bool,
    ) {
        if !exec {
            return;
        }
        if !self.stats.mapped_files.iter().any(|f| f == filename)
            && self.stats.mapped_files.len() < 64
        {
            self.stats.mapped_files.push(filename.to_string());
        }
        let delta = match self.target.matches(filename, build_id) {
            Match::Yes => {
                if self.stats.mapped_as.is_none() {
                    self.stats.mapped_as = Some(filename.to_string());
                }
                self.stats.mapped_by_build_id |=
                    build_id.is_some() && self.target.build_id.is_some();
                self.target.mapping_delta(filename, start, pgoff)
            }
            Match::BuildIdDiffers(theirs) => {
                self.mismatch.get_or_insert((filename.to_string(), theirs));
                None
            }
            Match::No => None,
        };
        let kernel_map =
            self.target.kernel_symbols.is_some() && filename.starts_with("[kernel.kallsyms]");
        let pid = if kernel_map { KERNEL_PID } else { pid };
        self.spaces.mmap(self.pos, pid, start, len, delta);
        if delta.is_some() && !kernel_map {
            // Inputs without pids (`perf script -F ip,brstack`) use the latest mapping.
            self.spaces.mmap(self.pos, ANY_PID, start, len, delta);
        }
    }

    fn finish(self, path: &Path) -> Result<(Spaces, CollectStats), AggregateError> {
        let mut stats = self.stats;
        stats.samples = self.samples;
        let spaces = self.spaces.build();
        if !spaces.mapped_anywhere() {
            return Err(not_mapped(path, self.target, &stats, self.mismatch));
        }
        Ok((spaces, stats))
    }
}

/// Merge per-chunk results and drop impossible ranges.
fn combine(
    parts: Vec<Result<(RawProfile, Counts), AggregateError>>,
    mut stats: CollectStats,
    path: &Path,
    target: &TargetBinary,
    code: &CodeMap,
    opts: &CollectOptions,
) -> Result<(RawProfile, CollectStats), AggregateError> {
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

/// Pass 1 over a perf.data: follows the mapping records (MMAP, FORK, COMM exec) of the
/// binary, counts the samples, and hands the pages it has read back to the kernel.
fn map_perf_data(
    data: &PerfData,
    path: &Path,
    target: &TargetBinary,
    n_chunks: usize,
) -> Result<(Spaces, CollectStats), AggregateError> {
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
) -> Result<CollectStats, AggregateError> {
    for_each_sample_with(path, target, |_| {}, f)
}

/// [`for_each_sample`] that first tells `start` what the mapping pass found (the number
/// of samples, say, for a reader that splits them into parts).
pub fn for_each_sample_with(
    path: &Path,
    target: &TargetBinary,
    start: impl FnOnce(&CollectStats),
    mut f: impl FnMut(&kfdo_perf::Sample<'_>, View<'_>),
) -> Result<CollectStats, AggregateError> {
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
pub fn collect_perf_data(
    path: &Path,
    target: &TargetBinary,
    code: &CodeMap,
    opts: &CollectOptions,
) -> Result<(RawProfile, CollectStats), AggregateError> {
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

/// Read one `perf script -F ip,brstack [--show-mmap-events]` text file.
pub fn collect_perf_script(
    path: &Path,
    target: &TargetBinary,
    code: &CodeMap,
    opts: &CollectOptions,
) -> Result<(RawProfile, CollectStats), AggregateError> {
    let file = ScriptFile::open(path)?;
    let text = file.as_bytes();
    // Pass 1 reads only the mapping lines, found with a vectorized search;
    // a position is the byte offset of the line.
    let mut m = Mappings::new(target, path);
    // Blocks are scanned in parallel, each handing its pages back when done;
    // the mappings found are then applied in file order.
    let finder = memchr::memmem::Finder::new(b"PERF_RECORD_MMAP");
    let block = RELEASE_EVERY as usize;
    let found: Vec<Result<Vec<(usize, kfdo_perf::OwnedMmap)>, AggregateError>> = (0..text
        .len()
        .div_ceil(block))
        .into_par_iter()
        .map(|k| {
            let (lo, hi) = (k * block, ((k + 1) * block).min(text.len()));
            // Let a match start in this block and run past its end.
            let search_end = (hi + 32).min(text.len());
            let mut maps = Vec::new();
            for hit in finder
                .find_iter(&text[lo..search_end])
                .map(|i| lo + i)
                .filter(|&i| i < hi)
            {
                let start = memchr::memrchr(b'\n', &text[..hit]).map_or(0, |i| i + 1);
                let end = memchr::memchr(b'\n', &text[hit..]).map_or(text.len(), |i| hit + i + 1);
                let mut reader = kfdo_perf::ScriptReader::new(path, &text[start..end]);
                if let Some(item) = reader.next_item() {
                    match item {
                        Ok(ScriptItem::Mmap(mm)) => maps.push((start, mm)),
                        Ok(_) => {}
                        Err(e) => return Err(AggregateError::Input(at_line(e, text, start))),
                    }
                }
            }
            file.release(lo as u64, hi as u64);
            Ok(maps)
        })
        .collect();
    // Where the mappings change: lines between two of these are read in the same state.
    let mut map_positions: Vec<u64> = Vec::new();
    for maps in found {
        for (start, mm) in maps? {
            map_positions.push(start as u64);
            m.pos = start as u64;
            let exec = mm.is_executable();
            m.mmap(
                mm.pid,
                mm.start,
                mm.len,
                mm.pgoff,
                &mm.filename,
                mm.build_id.as_deref(),
                exec,
            );
        }
    }
    let no_mmaps = m.stats.mapped_files.is_empty();
    let (spaces, mut stats) = match m.finish(path) {
        Ok(x) => x,
        // Like llvm-profgen: without mmap lines, assume the binary ran at its
        // preferred address (right for non-PIE executables and the kernel).
        Err(_) if no_mmaps => (
            Spaces::identity(),
            CollectStats {
                input: path.display().to_string(),
                ..Default::default()
            },
        ),
        Err(e) => return Err(e),
    };

    // One run of lines per thread: each learns the lines it sees repeated once (more,
    // smaller runs measured more memory and fewer lines recognized).
    let n_chunks = rayon::current_num_threads().max(1);
    let parts: Vec<_> = file
        .script_chunks(n_chunks)
        .into_par_iter()
        .map(|chunk| {
            // Counting needs no branch flags.
            let mut chunk = chunk.addresses_only(true);
            let mut raw = RawProfile::default();
            let mut cache = StackCache::default();
            let mut c = Counts::default();
            let mut released = chunk.position();
            let mut lines = SeenLines::new(opts.mode == SampleMode::Lbr);
            loop {
                let pos = chunk.position();
                if pos - released >= RELEASE_EVERY {
                    file.release(released, pos);
                    released = pos;
                }
                // The mapping state this line is read in.
                let epoch = map_positions.partition_point(|&p| p <= pos);
                let line = chunk.peek_line();
                if let Some(line) = line {
                    if let Some(seen) = lines.seen(line, epoch) {
                        c.add(seen);
                        chunk.skip_line();
                        continue;
                    }
                }
                let Some(item) = chunk.next_item() else { break };
                if let ScriptItem::Sample { pid, ip, branches } = item? {
                    let before = c;
                    let has_branches = !branches.is_empty();
                    c.samples += 1;
                    c.any_branches |= has_branches;
                    let entries = branches.iter().map(|e| (e.from, e.to));
                    count_sample(
                        &mut raw, &mut cache, &mut c, code, &spaces, opts, pos, pid, ip, entries, 1,
                    );
                    // The sample is that line's (no blank or skipped line came first): the
                    // reader stopped just past it.
                    let end = chunk.position();
                    if let Some(line) = line.filter(|l| {
                        let len = l.len() as u64;
                        end == pos + len + 1 || end == pos + len
                    }) {
                        let mut counted = c.since(&before);
                        counted.any_branches = has_branches;
                        lines.insert(line, epoch, pos, counted);
                    }
                }
            }
            // The lines seen again: their samples, counted once with the repeat count.
            for (line, pos, repeat) in lines.drain() {
                let mut reader = kfdo_perf::ScriptReader::new(path, &line).addresses_only(true);
                if let Some(Ok(ScriptItem::Sample { pid, ip, branches })) = reader.next_item() {
                    let entries = branches.iter().map(|e| (e.from, e.to));
                    let mut scratch = Counts::default(); // counted when seen
                    count_sample(
                        &mut raw,
                        &mut cache,
                        &mut scratch,
                        code,
                        &spaces,
                        opts,
                        pos,
                        pid,
                        ip,
                        entries,
                        repeat,
                    );
                }
            }
            file.release(released, chunk.position());
            cache.flush(&mut raw, code);
            Ok((raw, c))
        })
        .collect();
    let parts: Vec<(RawProfile, Counts)> =
        parts.into_iter().collect::<Result<_, AggregateError>>()?;
    stats.samples = parts.iter().map(|(_, c)| c.samples).sum();
    if stats.samples > 0
        && opts.mode == SampleMode::Lbr
        && !parts.iter().any(|(_, c)| c.any_branches)
    {
        return Err(AggregateError::Input(format!(
            "{}: no sample line has a branch stack; print them with `perf script -F ip,brstack` \
             from a recording made with branch sampling, or convert the IPs alone with --ip-only",
            path.display()
        )));
    }
    combine(
        parts.into_iter().map(Ok).collect(),
        stats,
        path,
        target,
        code,
        opts,
    )
}

/// Mapping lines are parsed one at a time; give their errors the file's line number.
fn at_line(e: kfdo_perf::PerfError, text: &[u8], start: usize) -> String {
    let line = memchr::memchr_iter(b'\n', &text[..start]).count() + 1;
    e.to_string().replacen(":1:", &format!(":{line}:"), 1)
}

impl Counts {
    /// What was counted since `before`.
    fn since(&self, before: &Counts) -> Counts {
        Counts {
            samples: self.samples - before.samples,
            any_branches: self.any_branches,
            used: self.used - before.used,
            in_binary: self.in_binary - before.in_binary,
            records: self.records - before.records,
        }
    }

    fn add(&mut self, d: &Counts) {
        self.samples += d.samples;
        self.any_branches |= d.any_branches;
        self.used += d.used;
        self.in_binary += d.in_binary;
        self.records += d.records;
    }
}

/// How many input bytes a streaming pass reads before handing their pages back.
const RELEASE_EVERY: u64 = 8 << 20;

#[derive(Default, Clone, Copy)]
pub(crate) struct Counts {
    samples: u64,
    any_branches: bool,
    used: u64,
    in_binary: u64,
    records: u64,
}

#[allow(clippy::too_many_arguments)]
#[inline]
fn count_sample(
    raw: &mut RawProfile,
    cache: &mut StackCache,
    c: &mut Counts,
    code: &CodeMap,
    spaces: &Spaces,
    opts: &CollectOptions,
    pos: u64,
    pid: Option<u32>,
    ip: u64,
    entries: impl ExactSizeIterator<Item = (u64, u64)>,
    repeat: u64,
) {
    if let Some(pid) = pid {
        if !opts.pids.is_empty() && !opts.pids.contains(&pid) {
            return;
        }
    }
    let view = spaces.view(pid.unwrap_or(ANY_PID), pos);
    if view.is_empty() {
        return;
    }
    c.used += repeat;
    match opts.mode {
        SampleMode::IpOnly => {
            if let Some(a) = view.translate(ip) {
                c.in_binary += repeat;
                lbr::add_ip(raw, code, a, repeat);
            }
        }
        SampleMode::Lbr => {
            if entries.len() == 0 {
                return;
            }
            c.records += entries.len() as u64 * repeat;
            // Not in the binary: 0, which is never code, so it counts as external.
            let mut hit = false;
            let entries = entries.map(|(from, to)| {
                let from = view.translate(from);
                let to = view.translate(to);
                hit |= from.is_some_and(|a| a != 0) || to.is_some_and(|a| a != 0);
                (from, to)
            });
            cache.add(raw, code, entries, repeat);
            c.in_binary += hit as u64 * repeat;
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
        return AggregateError::BuildIdMismatch(format!(
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
    let message = format!(
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
    );
    AggregateError::NotMapped {
        message,
        samples: stats.samples,
        mapped_files: stats.mapped_files.clone(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(text: &str) -> (RawProfile, CollectStats) {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.script");
        std::fs::write(&f, text).unwrap();
        let code = CodeMap::new(
            &[
                0x1150, 0x1152, 0x1158, 0x11b0, 0x1250, 0x1258, 0x1296, 0x12a0,
            ],
            &[0x12a0],
        );
        let opts = CollectOptions {
            mode: SampleMode::Lbr,
            pids: Vec::new(),
        };
        collect_perf_script(&f, &TargetBinary::named("t"), &code, &opts).unwrap()
    }

    /// Lines seen again are counted from the cache: the same counts and statistics as
    /// reading every line (made unique here with trailing blanks, which parse the same).
    #[test]
    fn repeated_lines_count_as_read() {
        let lines = [
            "  1258 0x1258/0x11b0/P/-/-/0/  0x1152/0x1296/P/-/-/0/  0x7fff0000/0x1150/P/-/-/0/",
            "  1258 0x1258/0x11b0/P/-/-/0/  0x1258/0x11b0/P/-/-/0/  0x1152/0x1296/P/-/-/0/",
            "",
            "  12a0 0x12a0/0x1150/-/-/-/0/  0x1250/0x1296/-/-/-/0/",
            "     1 0x7f000000/0x7f000010/-/-/-/0/",
            " 6099/6099     1150 0x1152/0x1158/-/-/-/0/",
        ];
        let mut same = String::new();
        let mut unique = String::new();
        for i in 0..300 {
            let l = lines[(i * 7 + i / 5) % lines.len()];
            same.push_str(l);
            same.push('\n');
            unique.push_str(l);
            if !l.is_empty() {
                unique.push_str(&" ".repeat(i + 1));
            }
            unique.push('\n');
        }
        let (a, sa) = counted(&same);
        let (b, sb) = counted(&unique);
        assert_eq!(a, b);
        assert!(!a.is_empty());
        let key = |s: &CollectStats| {
            (
                s.samples,
                s.samples_used,
                s.samples_in_binary,
                s.branch_records,
                s.dropped_range_count,
            )
        };
        assert_eq!(key(&sa), key(&sb));
        assert!(sa.samples > 200 && sa.samples < 300, "{}", sa.samples);
    }
}
