//! Process address spaces, as far as the profiled binary is concerned.
//!
//! perf records where each process mapped each executable file (MMAP/MMAP2),
//! when processes fork (the child inherits the parent's mappings and perf does
//! not repeat them) and when they exec (the old mappings die). From those we
//! answer, for a sample of process `pid` at stream position `pos`: which of its
//! runtime addresses fall in the binary, and what link-time address each one is.
//!
//! Answers depend on the position so that records can be processed out of
//! order, in parallel chunks: every change is kept as a snapshot keyed by the
//! position where it happened.

use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Kernel samples live in one address space shared by all processes; perf
/// gives its mapping the pid -1.
pub const KERNEL_PID: u32 = u32::MAX;

/// The address space of samples that carry no pid (`perf script -F ip,brstack`):
/// the latest mapping of the binary in any process, as llvm-profgen assumes.
pub const ANY_PID: u32 = u32::MAX - 1;

/// `[start, end)` of runtime addresses that hold the binary; link-time address
/// = runtime address + `delta` (wrapping).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub end: u64,
    pub delta: u64,
}

impl Region {
    #[inline]
    fn translate(&self, addr: u64) -> Option<u64> {
        (addr >= self.start && addr < self.end).then(|| addr.wrapping_add(self.delta))
    }
}

type Snapshot = Arc<[Region]>;

/// Collects mapping events in stream order; [`SpaceBuilder::build`] freezes them.
#[derive(Default)]
pub struct SpaceBuilder {
    current: FxHashMap<u32, Snapshot>,
    history: FxHashMap<u32, Vec<(u64, Snapshot)>>,
    mapped_anywhere: bool,
}

impl SpaceBuilder {
    fn set(&mut self, pos: u64, pid: u32, regions: Snapshot) {
        self.current.insert(pid, regions.clone());
        self.history.entry(pid).or_default().push((pos, regions));
    }

    /// An executable mapping at `[start, start+len)` in `pid`. `target` gives
    /// the delta when the mapped file is the profiled binary, `None` for any
    /// other file (which then hides whatever of the binary it overlaps).
    pub fn mmap(&mut self, pos: u64, pid: u32, start: u64, len: u64, target: Option<u64>) {
        let end = start.saturating_add(len);
        let old = self.current.get(&pid).cloned();
        if old.is_none() && target.is_none() {
            return;
        }
        let mut regions: Vec<Region> = Vec::new();
        for r in old.iter().flat_map(|s| s.iter()) {
            // Keep the parts of old regions that the new mapping does not cover.
            if r.end <= start || r.start >= end {
                regions.push(*r);
                continue;
            }
            if r.start < start {
                regions.push(Region {
                    start: r.start,
                    end: start,
                    delta: r.delta,
                });
            }
            if r.end > end {
                regions.push(Region {
                    start: end,
                    end: r.end,
                    delta: r.delta,
                });
            }
        }
        if let Some(delta) = target {
            regions.push(Region { start, end, delta });
            self.mapped_anywhere = true;
        }
        regions.sort_unstable_by_key(|r| r.start);
        self.set(pos, pid, regions.into());
    }

    /// A new process `child` forked from `parent` inherits its mappings.
    pub fn fork(&mut self, pos: u64, parent: u32, child: u32) {
        if parent == child {
            return; // a new thread: same address space
        }
        match self.current.get(&parent).cloned() {
            Some(s) => self.set(pos, child, s),
            None => {
                if self.current.contains_key(&child) {
                    self.set(pos, child, Arc::from(Vec::new()));
                }
            }
        }
    }

    /// `pid` called exec: its old mappings are gone.
    pub fn exec(&mut self, pos: u64, pid: u32) {
        if self.current.contains_key(&pid) {
            self.set(pos, pid, Arc::from(Vec::new()));
        }
    }

    pub fn build(self) -> Spaces {
        Spaces {
            history: self.history,
            mapped_anywhere: self.mapped_anywhere,
            identity: false,
        }
    }
}

/// Frozen mapping history; cheap to share between threads.
pub struct Spaces {
    history: FxHashMap<u32, Vec<(u64, Snapshot)>>,
    mapped_anywhere: bool,
    /// Built by [`Spaces::identity`]: every process sees the binary at its link-time addresses.
    identity: bool,
}

impl Spaces {
    /// No mapping information at all: the binary ran at its link-time addresses.
    pub fn identity() -> Spaces {
        let all = Region {
            start: 0,
            end: u64::MAX,
            delta: 0,
        };
        let snap: Snapshot = Arc::from(vec![all]);
        let mut history = FxHashMap::default();
        history.insert(ANY_PID, vec![(0, snap.clone())]);
        history.insert(KERNEL_PID, vec![(0, snap)]);
        Spaces {
            history,
            mapped_anywhere: true,
            identity: true,
        }
    }

    /// Whether any process ever mapped the binary.
    pub fn mapped_anywhere(&self) -> bool {
        self.mapped_anywhere
    }

    /// The regions of `pid` in force at stream position `pos` (plus the
    /// kernel's, which every process sees).
    pub fn view(&self, pid: u32, pos: u64) -> View<'_> {
        let user = match self.at(pid, pos) {
            [] if self.identity => self.at(ANY_PID, pos),
            r => r,
        };
        View {
            user,
            kernel: self.at(KERNEL_PID, pos),
        }
    }

    fn at(&self, pid: u32, pos: u64) -> &[Region] {
        let Some(h) = self.history.get(&pid) else {
            return &[];
        };
        // A sample that comes before its process's first mapping change in the file is
        // given that first state: perf writes each CPU's buffer in turn, so a sample taken
        // just after an exec on one CPU can precede the MMAP event of another CPU's
        // buffer in the file (perf itself sorts by time). The first change is the
        // binary's first mapping into the process (or its fork), so the only samples
        // this can misplace are ones taken before it at addresses inside that mapping.
        let i = h.partition_point(|(p, _)| *p <= pos).max(1);
        &h[i - 1].1
    }
}

/// One sample's view: runtime address -> link-time address of the binary.
#[derive(Clone, Copy)]
pub struct View<'a> {
    user: &'a [Region],
    kernel: &'a [Region],
}

impl View<'_> {
    /// The link-time address of `addr`, or `None` when it is not in the binary.
    #[inline]
    pub fn translate(&self, addr: u64) -> Option<u64> {
        // Kernel addresses have the top bit set on every 64-bit architecture we support.
        let regions = if addr >> 63 == 1 {
            self.kernel
        } else {
            self.user
        };
        regions.iter().find_map(|r| r.translate(addr))
    }

    pub fn is_empty(&self) -> bool {
        self.user.is_empty() && self.kernel.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fork_inherits_exec_clears_remap_replaces() {
        let mut b = SpaceBuilder::default();
        b.mmap(10, 100, 0x5000, 0x1000, Some(0u64.wrapping_sub(0x4000)));
        b.fork(20, 100, 200);
        b.exec(30, 200);
        b.mmap(40, 100, 0x5800, 0x100, None); // something else mapped over part of it
        let s = b.build();
        // Before the first mapping event in the file: a late-flushed CPU buffer, placed
        // with the first mapping.
        assert_eq!(
            s.view(100, 5).translate(0x5010),
            Some(0x1010),
            "before the mmap"
        );
        assert_eq!(s.view(100, 15).translate(0x5010), Some(0x1010));
        assert_eq!(s.view(200, 25).translate(0x5010), Some(0x1010), "inherited");
        assert_eq!(s.view(200, 35).translate(0x5010), None, "exec dropped it");
        assert_eq!(
            s.view(100, 45).translate(0x5810),
            None,
            "covered by another file"
        );
        assert_eq!(s.view(100, 45).translate(0x5910), Some(0x1910));
        assert!(s.mapped_anywhere());
    }

    #[test]
    fn kernel_mapping_is_shared() {
        let mut b = SpaceBuilder::default();
        let delta = 0xffff_ffff_8100_0000u64.wrapping_sub(0xffff_ffff_a200_0000);
        b.mmap(
            0,
            KERNEL_PID,
            0xffff_ffff_a200_0000,
            0x100_0000,
            Some(delta),
        );
        let s = b.build();
        assert_eq!(
            s.view(7, 1).translate(0xffff_ffff_a200_0010),
            Some(0xffff_ffff_8100_0010)
        );
        assert_eq!(s.view(7, 1).translate(0x1000), None);
    }
}
