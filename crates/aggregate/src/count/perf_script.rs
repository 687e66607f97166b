//! `perf script -F ip,brstack [--show-mmap-events]` text in: pass 1 reads only the
//! mapping lines, pass 2 counts the sample lines in parallel runs, each run counting
//! a line it has seen before from its first reading.

use std::path::Path;

use kfdo_perf::{OwnedMmap, ScriptFile, ScriptItem, ScriptReader};
use rayon::prelude::*;

use crate::code::CodeMap;
use crate::error::AggregateError;
use crate::raw::RawProfile;
use crate::space::Spaces;
use crate::stacks::{SeenLines, StackCache};
use crate::target::TargetBinary;

use super::combine::combine;
use super::mappings::Mappings;
use super::sample::count_sample;
use super::stats::{CountOptions, CountStats, Counts, SampleMode, RELEASE_EVERY};

/// Read one `perf script -F ip,brstack [--show-mmap-events]` text file.
pub fn count_perf_script(
    path: &Path,
    target: &TargetBinary,
    code: &CodeMap,
    opts: &CountOptions,
) -> Result<(RawProfile, CountStats), AggregateError> {
    let file = ScriptFile::open(path)?;
    let (spaces, mut stats, map_positions) = map_script(&file, path, target)?;
    // One run of lines per thread: each learns the lines it sees repeated once (more,
    // smaller runs measured more memory and fewer lines recognized).
    let n_chunks = rayon::current_num_threads().max(1);
    let parts: Vec<_> = file
        .script_chunks(n_chunks)
        .into_par_iter()
        .map(|chunk| {
            let run = Run {
                file: &file,
                path,
                code,
                spaces: &spaces,
                map_positions: &map_positions,
                opts,
            };
            run.count(chunk)
        })
        .collect();
    let parts: Vec<(RawProfile, Counts)> =
        parts.into_iter().collect::<Result<_, AggregateError>>()?;
    stats.samples = parts.iter().map(|(_, c)| c.samples).sum();
    require_branches(path, &parts, stats.samples, opts)?;
    combine(
        parts.into_iter().map(Ok).collect(),
        stats,
        path,
        target,
        code,
        opts,
    )
}

/// Pass 1: the mapping lines applied in file order. Returns the address spaces, the
/// statistics so far, and the positions where the mappings change (lines between two
/// of these are read in the same state).
fn map_script(
    file: &ScriptFile,
    path: &Path,
    target: &TargetBinary,
) -> Result<(Spaces, CountStats, Vec<u64>), AggregateError> {
    // A position is the byte offset of the line.
    let mut m = Mappings::new(target, path);
    let mut map_positions: Vec<u64> = Vec::new();
    for maps in find_mmaps(file, path) {
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
    let (spaces, stats) = match m.finish(path) {
        Ok(x) => x,
        // Like llvm-profgen: without mmap lines, assume the binary ran at its
        // preferred address (right for non-PIE executables and the kernel).
        Err(_) if no_mmaps => (
            Spaces::identity(),
            CountStats {
                input: path.display().to_string(),
                ..Default::default()
            },
        ),
        Err(e) => return Err(e),
    };
    Ok((spaces, stats, map_positions))
}

/// The mapping lines of each block of the file, with their byte offsets, blocks in
/// file order. Found with a vectorized search; blocks are scanned in parallel, each
/// handing its pages back when done.
#[allow(clippy::type_complexity)]
fn find_mmaps(
    file: &ScriptFile,
    path: &Path,
) -> Vec<Result<Vec<(usize, OwnedMmap)>, AggregateError>> {
    let text = file.as_bytes();
    let finder = memchr::memmem::Finder::new(b"PERF_RECORD_MMAP");
    let block = RELEASE_EVERY as usize;
    (0..text.len().div_ceil(block))
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
                let mut reader = ScriptReader::new(path, &text[start..end]);
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
        .collect()
}

/// Mapping lines are parsed one at a time; give their errors the file's line number.
fn at_line(e: kfdo_perf::PerfError, text: &[u8], start: usize) -> String {
    let line = memchr::memchr_iter(b'\n', &text[..start]).count() + 1;
    e.to_string().replacen(":1:", &format!(":{line}:"), 1)
}

/// What pass 2 reads every run of lines with.
struct Run<'a> {
    file: &'a ScriptFile,
    path: &'a Path,
    code: &'a CodeMap,
    spaces: &'a Spaces,
    map_positions: &'a [u64],
    opts: &'a CountOptions,
}

impl Run<'_> {
    /// Pass 2 over one run of lines: every sample line counted, a line seen before in
    /// the same mapping state from its first reading, the repeated ones at the end.
    fn count(&self, chunk: ScriptReader<'_>) -> Result<(RawProfile, Counts), AggregateError> {
        // Counting needs no branch flags.
        let mut chunk = chunk.addresses_only(true);
        let mut raw = RawProfile::default();
        let mut cache = StackCache::default();
        let mut c = Counts::default();
        let mut released = chunk.position();
        let mut lines = SeenLines::new(self.opts.mode == SampleMode::Lbr);
        loop {
            let pos = chunk.position();
            if pos - released >= RELEASE_EVERY {
                self.file.release(released, pos);
                released = pos;
            }
            // The mapping state this line is read in.
            let epoch = self.map_positions.partition_point(|&p| p <= pos);
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
                    &mut raw,
                    &mut cache,
                    &mut c,
                    self.code,
                    self.spaces,
                    self.opts,
                    pos,
                    pid,
                    ip,
                    entries,
                    1,
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
        self.count_repeated(lines, &mut raw, &mut cache);
        self.file.release(released, chunk.position());
        cache.flush(&mut raw, self.code);
        Ok((raw, c))
    }

    /// The lines seen again: their samples, counted once with the repeat count (their
    /// tallies were added when each was seen).
    fn count_repeated(
        &self,
        lines: SeenLines<Counts>,
        raw: &mut RawProfile,
        cache: &mut StackCache,
    ) {
        for (line, pos, repeat) in lines.drain() {
            let mut reader = ScriptReader::new(self.path, &line).addresses_only(true);
            if let Some(Ok(ScriptItem::Sample { pid, ip, branches })) = reader.next_item() {
                let entries = branches.iter().map(|e| (e.from, e.to));
                let mut scratch = Counts::default(); // counted when seen
                count_sample(
                    raw,
                    cache,
                    &mut scratch,
                    self.code,
                    self.spaces,
                    self.opts,
                    pos,
                    pid,
                    ip,
                    entries,
                    repeat,
                );
            }
        }
    }
}

/// A branch-stack conversion of sample lines none of which has a branch stack is
/// refused: it would otherwise say only that no sample fell in the binary.
fn require_branches(
    path: &Path,
    parts: &[(RawProfile, Counts)],
    samples: u64,
    opts: &CountOptions,
) -> Result<(), AggregateError> {
    if samples > 0 && opts.mode == SampleMode::Lbr && !parts.iter().any(|(_, c)| c.any_branches) {
        return Err(AggregateError::Input(format!(
            "{}: no sample line has a branch stack; print them with `perf script -F ip,brstack` \
             from a recording made with branch sampling, or convert the IPs alone with --ip-only",
            path.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(text: &str) -> (RawProfile, CountStats) {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.script");
        std::fs::write(&f, text).unwrap();
        let code = CodeMap::new(
            &[
                0x1150, 0x1152, 0x1158, 0x11b0, 0x1250, 0x1258, 0x1296, 0x12a0,
            ],
            &[0x12a0],
        );
        let opts = CountOptions {
            mode: SampleMode::Lbr,
            pids: Vec::new(),
        };
        count_perf_script(&f, &TargetBinary::named("t"), &code, &opts).unwrap()
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
        let key = |s: &CountStats| {
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
