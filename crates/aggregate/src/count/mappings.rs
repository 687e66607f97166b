//! Pass 1 of both readers: the mapping records (MMAP, FORK, COMM exec) followed in
//! stream order, deciding where the binary is mapped in each process, and the error
//! that says why it is mapped nowhere.

use std::path::Path;

use kfdo_perf::Record;

use crate::error::AggregateError;
use crate::space::{SpaceBuilder, Spaces, ANY_PID, KERNEL_PID};
use crate::target::{hex, Match, TargetBinary};

use super::stats::CountStats;

/// The mapping-relevant part of a record, and samples reduced to what counting needs.
pub(super) enum Event<'a> {
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

pub(super) fn event<'a>(r: Record<'a>) -> Event<'a> {
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
pub(super) struct Mappings<'t> {
    target: &'t TargetBinary,
    pub(super) spaces: SpaceBuilder,
    /// Byte offset of the record being read: the position mapping changes take effect at.
    pub(super) pos: u64,
    pub(super) samples: u64,
    mismatch: Option<(String, Vec<u8>)>,
    pub(super) stats: CountStats,
}

impl<'t> Mappings<'t> {
    pub(super) fn new(target: &'t TargetBinary, input: &Path) -> Self {
        Self {
            target,
            spaces: SpaceBuilder::default(),
            pos: 0,
            samples: 0,
            mismatch: None,
            stats: CountStats {
                input: input.display().to_string(),
                ..Default::default()
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn mmap(
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

    pub(super) fn finish(self, path: &Path) -> Result<(Spaces, CountStats), AggregateError> {
        let mut stats = self.stats;
        stats.samples = self.samples;
        let spaces = self.spaces.build();
        if !spaces.mapped_anywhere() {
            return Err(not_mapped(path, self.target, &stats, self.mismatch));
        }
        Ok((spaces, stats))
    }
}

fn not_mapped(
    path: &Path,
    target: &TargetBinary,
    stats: &CountStats,
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
