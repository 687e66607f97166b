//! BOLT's profile (`llvm-bolt -data=FILE`, the fdata perf2bolt writes) from perf.data
//! branch samples: the same records and counts as `perf2bolt -p perf.data -o FILE
//! BINARY` on the same recording and binary, without its `perf script` text stage.
//!
//! * `functions`: the functions and the names BOLT gives them;
//! * `cfg`: their basic blocks, as BOLT builds them;
//! * `aggregate`: LBR stacks to branches and fall-through traces to records;
//! * `fdata`: the records and their text form.

mod aggregate;
mod cfg;
pub mod fdata;
mod functions;

use std::path::{Path, PathBuf};

use kfdo_aggregate::target::TargetBinary;
use kfdo_aggregate::AggregateError;
use kfdo_elf::{Binary, ElfError};

pub use aggregate::TraceStats;
pub use fdata::{Counts, Fdata, Location};
pub use functions::{Function, FunctionTable};

#[derive(Debug, thiserror::Error)]
pub enum BoltError {
    #[error(transparent)]
    Elf(#[from] ElfError),
    #[error(transparent)]
    Aggregate(#[from] AggregateError),
    #[error("{binary} is an {arch} program: kfdo's BOLT profile decodes x86-64 code only (its CFG reader uses iced-x86); for {arch} use the AutoFDO profile (`kfdo profile`)")]
    Arch {
        binary: PathBuf,
        arch: kfdo_elf::Arch,
    },
    #[error("{binary}: cannot list its functions: {what}")]
    Functions { binary: PathBuf, what: String },
    #[error("{perf}: none of the {samples} samples of {binary} has a branch stack: BOLT's profile needs LBR (record with `kfdo record`, which emulates it where the CPU has none, or `perf record -b`)")]
    NoBranchStacks {
        perf: PathBuf,
        binary: PathBuf,
        samples: u64,
    },
    #[error("{binary}: the recordings hold no branch of its functions ({entries} LBR records read): the samples are of other code; profile the binary that ran")]
    NoRecords { binary: PathBuf, entries: u64 },
}

/// What the conversion read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoltStats {
    pub samples: u64,
    pub samples_with_branches: u64,
    /// Samples with a branch record from or to the binary.
    pub samples_in_binary: u64,
    pub traces: TraceStats,
    pub records: usize,
}

/// The profile and its statistics.
#[derive(Debug)]
pub struct BoltProfile {
    pub fdata: Fdata,
    pub stats: BoltStats,
}

impl BoltProfile {
    /// Functions with at least one record.
    pub fn functions(&self) -> usize {
        let mut names: Vec<&str> = self
            .fdata
            .records
            .keys()
            .flat_map(|(a, b)| [a.function.as_deref(), b.function.as_deref()])
            .flatten()
            .collect();
        names.sort_unstable();
        names.dedup();
        names.len()
    }
}

/// Reads `perf_data` (one or more recordings) and turns the samples of `binary` into
/// BOLT's records. Errors: the binary cannot be read, no recording maps it (or maps
/// another build of it), no sample has a branch stack, or no record lands in it.
pub fn bolt_profile(binary: &Path, perf_data: &[PathBuf]) -> Result<BoltProfile, BoltError> {
    let bin = Binary::open(binary)?;
    if bin.arch() != kfdo_elf::Arch::X86_64 {
        return Err(BoltError::Arch {
            binary: binary.to_owned(),
            arch: bin.arch(),
        });
    }
    let funcs = FunctionTable::new(&bin).map_err(|what| BoltError::Functions {
        binary: binary.to_owned(),
        what,
    })?;
    let target = TargetBinary::new(&bin, None, bin.is_kernel());
    let mut agg = aggregate::Aggregation::default();
    let mut stats = BoltStats::default();
    for perf in perf_data {
        let (mut samples, mut with_branches, mut in_binary) = (0u64, 0u64, 0u64);
        kfdo_aggregate::count::for_each_sample(perf, &target, |s, view| {
            samples += 1;
            if s.branch_stack.is_empty() {
                return;
            }
            with_branches += 1;
            // The binary's samples as `kfdo profile` counts them: a record from or to it.
            let mut hit = false;
            let records = s.branch_stack.iter().map(|b| {
                let (from, to) = (view.translate(b.from), view.translate(b.to));
                hit |= from.is_some_and(|a| a != 0) || to.is_some_and(|a| a != 0);
                aggregate::Record {
                    from,
                    to,
                    raw_from: b.from,
                    raw_to: b.to,
                    mispred: b.mispred(),
                }
            });
            agg.add_stack(&funcs, records);
            in_binary += u64::from(hit);
        })?;
        if with_branches == 0 {
            return Err(BoltError::NoBranchStacks {
                perf: perf.clone(),
                binary: binary.to_owned(),
                samples,
            });
        }
        stats.samples += samples;
        stats.samples_with_branches += with_branches;
        stats.samples_in_binary += in_binary;
    }
    let code = |f: &Function| -> Option<&[u8]> {
        let off = bin.vaddr_to_file_offset(f.addr)? as usize;
        bin.data().get(off..off.checked_add(f.size as usize)?)
    };
    let read = |addr: u64, n: usize| -> Option<u64> {
        let off = bin.vaddr_to_file_offset(addr)? as usize;
        let b = bin.data().get(off..off + n)?;
        Some(b.iter().rev().fold(0u64, |v, &x| v << 8 | u64::from(x)))
    };
    let (fdata, traces) = agg.finish(&funcs, &code, &read);
    stats.traces = traces;
    stats.records = fdata.records.len();
    if fdata.is_empty() {
        return Err(BoltError::NoRecords {
            binary: binary.to_owned(),
            entries: traces.lbr_entries,
        });
    }
    Ok(BoltProfile { fdata, stats })
}
