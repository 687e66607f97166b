//! Emulated counters: instructions, taken and conditional branches, L1 instruction-cache
//! and iTLB misses from a simple LRU model, split user / kernel. Deterministic for a
//! single-threaded program: the model sees the executed code addresses in program order,
//! with no timing or sampling. A program that starts threads is not: how the threads
//! interleave (who waits, spins or wins a lock) changes from run to run, and the counts
//! with it; each process's `threads` says how many it ran.

use crate::emulated::stream_format::Counts;
use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

/// The instruction-side model: a set-associative L1i with LRU replacement, and a fully
/// associative LRU iTLB. Each executed block touches every line and page it spans.
///
/// The iTLB's pages are the sizes each mode really uses: user code (and module code)
/// 4 KiB pages, the kernel image's text large pages (x86-64 and arm64 kernels map their
/// text with 2 MiB pages). One entry covers one page of either size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheModel {
    pub l1i_size: u64,
    pub l1i_ways: u32,
    pub l1i_line: u64,
    pub itlb_entries: u32,
    /// The page size of user code (and of kernel code outside the kernel image).
    pub itlb_page: u64,
    /// The page size of the kernel image's text. Counters files written before it was
    /// part of the model had 4 KiB pages there too.
    #[serde(default = "CacheModel::small_pages")]
    pub itlb_kernel_page: u64,
}

impl Default for CacheModel {
    fn default() -> Self {
        CacheModel {
            l1i_size: 32 * 1024,
            l1i_ways: 8,
            l1i_line: 64,
            itlb_entries: 64,
            itlb_page: 4096,
            itlb_kernel_page: 2 << 20,
        }
    }
}

impl CacheModel {
    fn small_pages() -> u64 {
        4096
    }

    pub fn validate(&self) -> Result<(), String> {
        if !self.l1i_line.is_power_of_two()
            || !self.itlb_page.is_power_of_two()
            || !self.itlb_kernel_page.is_power_of_two()
        {
            return Err("cache line and page sizes must be powers of two".into());
        }
        if self.l1i_ways == 0
            || self.l1i_ways > 64
            || self.l1i_size < self.l1i_line * self.l1i_ways as u64
        {
            return Err(format!(
                "L1i of {} bytes cannot have {} ways of {}-byte lines",
                self.l1i_size, self.l1i_ways, self.l1i_line
            ));
        }
        if self.itlb_entries == 0 || self.itlb_entries > 4096 {
            return Err("iTLB entries must be 1..=4096".into());
        }
        Ok(())
    }

    /// The plugin arguments for this model.
    pub fn plugin_args(&self) -> [String; 2] {
        [
            format!("l1i={}:{}:{}", self.l1i_size, self.l1i_ways, self.l1i_line),
            format!(
                "itlb={}:{}:{}",
                self.itlb_entries, self.itlb_page, self.itlb_kernel_page
            ),
        ]
    }

    /// The name of the iTLB counter in reports, with the model it counts in, e.g.
    /// "iTLB misses (model: 64 entries, 4 KiB user / 2 MiB kernel pages)".
    pub fn itlb_label(&self) -> String {
        format!(
            "iTLB misses (model: {} entries, {} user / {} kernel pages)",
            self.itlb_entries,
            byte_size(self.itlb_page),
            byte_size(self.itlb_kernel_page)
        )
    }
}

/// A power-of-two size in the largest binary unit that divides it: "4 KiB", "2 MiB".
fn byte_size(b: u64) -> String {
    for (unit, name) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if b >= unit && b.is_multiple_of(unit) {
            return format!("{} {name}", b / unit);
        }
    }
    format!("{b} bytes")
}

/// Counts of one privilege domain.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DomainCounts {
    pub instructions: u64,
    pub taken_branches: u64,
    pub conditional_branches: u64,
    pub l1i_accesses: u64,
    pub l1i_misses: u64,
    pub itlb_accesses: u64,
    pub itlb_misses: u64,
}

impl DomainCounts {
    fn from_stream(r: &Counts, k: usize) -> DomainCounts {
        DomainCounts {
            instructions: r.insns[k],
            taken_branches: r.taken[k],
            conditional_branches: r.cond[k],
            l1i_accesses: r.l1i_access[k],
            l1i_misses: r.l1i_miss[k],
            itlb_accesses: r.itlb_access[k],
            itlb_misses: r.itlb_miss[k],
        }
    }
    fn add(&mut self, o: &DomainCounts) {
        self.instructions += o.instructions;
        self.taken_branches += o.taken_branches;
        self.conditional_branches += o.conditional_branches;
        self.l1i_accesses += o.l1i_accesses;
        self.l1i_misses += o.l1i_misses;
        self.itlb_accesses += o.itlb_accesses;
        self.itlb_misses += o.itlb_misses;
    }
}

/// User and kernel counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub user: DomainCounts,
    pub kernel: DomainCounts,
}

impl Counters {
    /// The counts of a stream's COUNTERS record.
    pub fn from_stream(r: &Counts) -> Counters {
        Counters {
            user: DomainCounts::from_stream(r, 0),
            kernel: DomainCounts::from_stream(r, 1),
        }
    }
    pub fn add(&mut self, o: &Counters) {
        self.user.add(&o.user);
        self.kernel.add(&o.kernel);
    }
}

/// [`CountersFile::source`] of a user-mode recording.
pub const USER_SOURCE: &str = "kfdo-vlbr emulated counters";

/// The JSON file `--counters` writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountersFile {
    /// "kfdo-vlbr emulated counters".
    pub source: String,
    pub model: CacheModel,
    /// Sum over every process recorded.
    pub total: Counters,
    /// Per process, in the order they started (the program first).
    pub processes: Vec<ProcessCounters>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessCounters {
    pub pid: i32,
    /// The guest threads the process started, itself included (vCPUs in system mode);
    /// 0 in files written before it was counted. More than one: the counts are not
    /// deterministic.
    #[serde(default)]
    pub threads: u32,
    #[serde(flatten)]
    pub counts: Counters,
}

/// One process's last COUNTERS record in a capture stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CountedProcess {
    pub pid: i32,
    pub threads: u32,
    pub counts: Counts,
}

impl CountersFile {
    /// The file for these processes' counts (each as its last COUNTERS record says), in
    /// this order, with their sum.
    pub(crate) fn from_processes<'a>(
        source: String,
        model: CacheModel,
        counts: impl IntoIterator<Item = &'a CountedProcess>,
    ) -> CountersFile {
        let mut total = Counters::default();
        let processes = counts
            .into_iter()
            .map(|p| {
                let c = Counters::from_stream(&p.counts);
                total.add(&c);
                ProcessCounters {
                    pid: p.pid,
                    threads: p.threads,
                    counts: c,
                }
            })
            .collect();
        CountersFile {
            source,
            model,
            total,
            processes,
        }
    }

    /// The most threads any one process ran (0: unknown, a file from before threads were
    /// counted). Over 1, the counts are not deterministic; separate single-threaded
    /// processes (a fork) are.
    pub fn threads(&self) -> u32 {
        self.processes.iter().map(|p| p.threads).max().unwrap_or(0)
    }

    /// Writes the file as JSON, atomically: complete at `path`, or not at all.
    pub(crate) fn write(&self, path: &Path) -> Result<(), Error> {
        let dir = kfdo_outfile::parent_dir(path);
        let out_err = |what: String| Error::Output {
            path: path.to_path_buf(),
            what,
        };
        let mut tmp = kfdo_outfile::temp_in(&dir)
            .map_err(|e| out_err(kfdo_outfile::create_error(&dir, &e)))?;
        let mut text =
            serde_json::to_vec_pretty(self).map_err(|e| out_err(format!("cannot write: {e}")))?;
        text.push(b'\n');
        tmp.as_file_mut()
            .write_all(&text)
            .map_err(|e| out_err(format!("cannot write: {e}")))?;
        tmp.persist(path)
            .map_err(|e| out_err(format!("cannot write: {}", e.error)))?;
        Ok(())
    }
}

/// The counters file a recording was asked for (`path`), written from the capture's
/// per-process counts; None when none was asked for. One place for user and system mode.
pub(crate) fn write_counters(
    path: Option<&Path>,
    source: String,
    model: CacheModel,
    counts: &[CountedProcess],
) -> Result<Option<CountersFile>, Error> {
    let Some(path) = path else {
        return Ok(None);
    };
    let file = CountersFile::from_processes(source, model, counts);
    file.write(path)?;
    Ok(Some(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_says_each_modes_page_size() {
        let m = CacheModel::default();
        assert_eq!(
            m.itlb_label(),
            "iTLB misses (model: 64 entries, 4 KiB user / 2 MiB kernel pages)"
        );
        assert_eq!(m.plugin_args()[1], "itlb=64:4096:2097152");
        let odd = CacheModel {
            itlb_page: 512,
            itlb_kernel_page: 1 << 30,
            ..m
        };
        assert_eq!(
            odd.itlb_label(),
            "iTLB misses (model: 64 entries, 512 bytes user / 1 GiB kernel pages)"
        );
        let bad = CacheModel {
            itlb_kernel_page: 3 << 20,
            ..m
        };
        assert!(bad.validate().is_err());
    }

    #[test]
    fn the_file_says_the_most_threads_of_one_process() {
        let one = |pid, threads| CountedProcess {
            pid,
            threads,
            counts: Counts::default(),
        };
        let f = CountersFile::from_processes(
            USER_SOURCE.into(),
            CacheModel::default(),
            &[one(10, 1), one(11, 4), one(12, 1)],
        );
        assert_eq!(f.threads(), 4);
        assert_eq!(f.processes[1].threads, 4);
        // Forked processes of one thread each: still one thread at a time.
        let forks = CountersFile::from_processes(
            USER_SOURCE.into(),
            CacheModel::default(),
            &[one(10, 1), one(11, 1)],
        );
        assert_eq!(forks.threads(), 1);
        // A file from before threads were counted reads as unknown (0).
        let old = r#"{"pid":7,"user":{"instructions":1,"taken_branches":0,"conditional_branches":0,
            "l1i_accesses":0,"l1i_misses":0,"itlb_accesses":0,"itlb_misses":0},
            "kernel":{"instructions":0,"taken_branches":0,"conditional_branches":0,
            "l1i_accesses":0,"l1i_misses":0,"itlb_accesses":0,"itlb_misses":0}}"#;
        let p: ProcessCounters = serde_json::from_str(old).unwrap();
        assert_eq!((p.pid, p.threads, p.counts.user.instructions), (7, 0, 1));
    }

    #[test]
    fn older_counters_files_had_small_kernel_pages() {
        let old =
            r#"{"l1i_size":32768,"l1i_ways":8,"l1i_line":64,"itlb_entries":64,"itlb_page":4096}"#;
        let m: CacheModel = serde_json::from_str(old).unwrap();
        assert_eq!((m.itlb_page, m.itlb_kernel_page), (4096, 4096));
    }
}
