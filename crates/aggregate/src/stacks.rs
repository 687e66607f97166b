//! Identical LBR stacks counted once.
//!
//! Real recordings repeat branch stacks: a program spends its time in a few hot loops,
//! so at any sampling period most stacks have been seen before (llvm-profgen aggregates
//! identical samples first for the same reason). Turning a stack into range and branch
//! counts is 64 hash-map updates for 32 records; looking the stack up is one hash of its
//! compact form. [`StackCache`] keeps each distinct stack (as its records' offsets in the
//! binary's code, records with neither end in the code left out, as the counting rules
//! drop them anyway) with how often it was seen, and adds them to a [`RawProfile`] with
//! that repeat count when it fills up or at the end. Counts add, so the result is the
//! same whatever is cached when: exactly what counting every sample on its own gives.
//!
//! Its memory is bounded by [`StackCache::MAX_WORDS`] whatever the input: a recording
//! without repeats only costs the lookups.

use crate::code::CodeMap;
use crate::raw::RawProfile;
use rustc_hash::FxHashMap;

/// An end of a record that is not an instruction start in the binary.
const NOT_CODE: u32 = u32::MAX;

pub(crate) struct StackCache {
    seen: FxHashMap<Box<[u32]>, u64>,
    /// u32 words held by the keys.
    words: usize,
    /// The key being built.
    key: Vec<u32>,
}

impl Default for StackCache {
    fn default() -> Self {
        Self {
            seen: FxHashMap::default(),
            words: 0,
            key: Vec::with_capacity(64),
        }
    }
}

impl StackCache {
    /// About 16 MiB of keys (64 Ki stacks of 32 records) before the cache is emptied into
    /// the counts.
    const MAX_WORDS: usize = 4 << 20;

    /// Counts one LBR stack `repeat` times (newest first, `(from, to)` in canonical addresses; `None`:
    /// outside the binary) once it is added to `raw`, as [`crate::lbr::add_lbr_stack`]
    /// would count it.
    #[inline]
    pub(crate) fn add(
        &mut self,
        raw: &mut RawProfile,
        code: &CodeMap,
        entries: impl Iterator<Item = (Option<u64>, Option<u64>)>,
        repeat: u64,
    ) {
        self.key.clear();
        for (from, to) in entries {
            // Outside the binary is address 0, as count::sample::count_sample has always
            // placed it (never code, except in a relocatable file's text at 0).
            let from = code.offset_of_code(from.unwrap_or(0)).unwrap_or(NOT_CODE);
            let to = code.offset_of_code(to.unwrap_or(0)).unwrap_or(NOT_CODE);
            if from == NOT_CODE && to == NOT_CODE {
                continue; // dropped before pairing (lbr::add_lbr_stack)
            }
            self.key.push(from);
            self.key.push(to);
        }
        if self.key.is_empty() {
            return;
        }
        if let Some(n) = self.seen.get_mut(self.key.as_slice()) {
            *n += repeat;
            return;
        }
        if self.words + self.key.len() > Self::MAX_WORDS {
            self.flush(raw, code);
        }
        self.words += self.key.len();
        self.seen.insert(self.key.as_slice().into(), repeat);
    }

    /// Adds every cached stack to `raw` and empties the cache.
    pub(crate) fn flush(&mut self, raw: &mut RawProfile, code: &CodeMap) {
        for (key, n) in self.seen.drain() {
            let entries = key.chunks_exact(2).map(|p| {
                let at = |o: u32| (o != NOT_CODE).then(|| code.code_at_offset(o));
                (at(p[0]), at(p[1]))
            });
            crate::lbr::add_classified_stack(raw, entries, n);
        }
        self.words = 0;
    }
}

/// `perf script` lines seen before, recognized before they are parsed: a repeated stack
/// costs a hash and a compare of its line instead of reading ~32 branch records' text
/// (parsing was most of the time of reading text; the samples of a line are the same
/// wherever it appears while the mappings stay the same). Only whole lines that read as a
/// sample are kept, with what counting that sample added to the statistics, and how
/// often they were seen again; [`SeenLines::drain`] hands those back to be counted with
/// that repeat. The lines seen first are kept until [`SeenLines::MAX_BYTES`] are held;
/// later new lines are read as usual, so memory stays bounded whatever the input.
///
/// `C` is what the reader counted for a line (its statistics): this cache only keeps it.
pub(crate) struct SeenLines<C> {
    on: bool,
    seen: FxHashMap<Box<[u8]>, Seen<C>>,
    bytes: usize,
}

struct Seen<C> {
    /// The mapping state it was read in (lines read in another are not this one).
    epoch: usize,
    /// Where it was first read (for the mapping state).
    pos: u64,
    counted: C,
    again: u64,
}

impl<C> SeenLines<C> {
    /// The lines are copied (comparing with the mapped input instead would fault its
    /// pages back in, and keep them resident).
    const MAX_BYTES: usize = 16 << 20;

    pub(crate) fn new(on: bool) -> Self {
        Self {
            on,
            seen: FxHashMap::default(),
            bytes: 0,
        }
    }

    /// What counting `line` added when it was first read, if it was and counts the same now.
    #[inline]
    pub(crate) fn seen(&mut self, line: &[u8], epoch: usize) -> Option<&C> {
        if !self.on || self.seen.is_empty() {
            return None;
        }
        let s = self.seen.get_mut(line).filter(|s| s.epoch == epoch)?;
        s.again += 1;
        Some(&s.counted)
    }

    pub(crate) fn insert(&mut self, line: &[u8], epoch: usize, pos: u64, counted: C) {
        if !self.on || self.bytes + line.len() > Self::MAX_BYTES {
            return;
        }
        if !self.seen.contains_key(line) {
            self.bytes += line.len();
            self.seen.insert(
                line.into(),
                Seen {
                    epoch,
                    pos,
                    counted,
                    again: 0,
                },
            );
        }
    }

    /// The lines seen again: (line, where first read, how many more times).
    pub(crate) fn drain(self) -> impl Iterator<Item = (Box<[u8]>, u64, u64)> {
        self.seen
            .into_iter()
            .filter(|(_, s)| s.again > 0)
            .map(|(l, s)| (l, s.pos, s.again))
    }
}
