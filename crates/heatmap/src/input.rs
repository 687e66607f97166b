//! Samples of one binary out of perf.data: each sample's runtime address turned into
//! the binary's link-time address, with its time. Which samples are the binary's is the
//! aggregate crate's decision (build-id, FORK, exec), so a heat map shows exactly the
//! samples `kfdo profile` converts, forked children included.

use std::path::Path;

use kfdo_aggregate::target::TargetBinary;
use kfdo_aggregate::AggregateError;
use kfdo_elf::Binary;

use crate::points::{HotFunction, Point};

/// Which address of a sample to plot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum AddrSource {
    /// The sampled instruction pointer.
    Ip,
    /// The target of every branch in the sample's branch stack (LBR).
    BranchTargets,
}

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{path}: {msg}")]
    Perf { path: String, msg: String },
    #[error("{path}: {msg}")]
    Elf { path: String, msg: String },
    /// The recording's file of the binary's name has another build-id (the message names
    /// both, and the fix).
    #[error("{0}")]
    BuildIdMismatch(String),
    #[error("{perf}: no sample falls in {binary} ({total} samples in all; mapped executables: {mapped}); \
             pass the binary the samples were taken in, or record it with `perf record -e cpu-clock -- {binary} ...`")]
    NoSamples {
        perf: String,
        binary: String,
        total: u64,
        mapped: String,
    },
    #[error("{perf}: --source branch-targets needs samples with branch stacks (perf record -b, or kfdo record); \
             this file has none")]
    NoBranchStacks { perf: String },
    #[error("{binary}: no executable section: is it an ELF program or vmlinux?")]
    NoText { binary: String },
}

/// Everything the heat map needs from the inputs.
#[derive(Debug, Clone)]
pub struct Input {
    pub points: Vec<Point>,
    /// [lo, hi) of the executable sections.
    pub text_lo: u64,
    pub text_hi: u64,
    /// Functions with samples, hottest first.
    pub functions: Vec<HotFunction>,
    /// Samples recorded, of every process.
    pub samples_total: u64,
    /// Samples of the binary, counted as `kfdo profile` counts them: a branch record
    /// from or to the binary, or (no branch stack) the IP in it.
    pub samples_in_binary: u64,
    /// Samples (or branch targets) that fell in the binary's text.
    pub samples_in_text: u64,
    pub build_id: Option<String>,
    pub kernel: bool,
}

pub fn read(perf_path: &Path, binary_path: &Path, source: AddrSource) -> Result<Input, InputError> {
    let perf_s = perf_path.display().to_string();
    let bin_s = binary_path.display().to_string();
    let bin = Binary::open(binary_path).map_err(|e| InputError::Elf {
        path: bin_s.clone(),
        msg: e.to_string(),
    })?;
    let kernel = bin.is_kernel();
    let build_id = bin.build_id().map(kfdo_aggregate::target::hex);

    // Text range: the union of executable sections with an address.
    let (mut text_lo, mut text_hi) = (u64::MAX, 0u64);
    for s in bin.sections() {
        if s.is_executable() && s.addr != 0 && s.size > 0 {
            text_lo = text_lo.min(s.addr);
            text_hi = text_hi.max(s.addr + s.size);
        }
    }
    if text_lo >= text_hi {
        return Err(InputError::NoText { binary: bin_s });
    }

    // Which samples are the binary's, and where: the aggregate crate's matching (build-id
    // or name, every process that forked from or exec'd into it, kernel anchors), the same
    // as `kfdo profile`'s.
    let target = TargetBinary::new(&bin, None, kernel);
    let mut points = Vec::new();
    let mut samples_total = 0u64;
    let mut samples_in_binary = 0u64;
    let mut with_branches = 0u64;
    let mut keep = |time_ns: u64, addr: Option<u64>| {
        if let Some(va) = addr.filter(|&va| va >= text_lo && va < text_hi) {
            points.push(Point { time_ns, addr: va });
        }
    };
    let walked = kfdo_aggregate::count::for_each_sample(perf_path, &target, |s, view| {
        samples_total += 1;
        let in_binary = if s.branch_stack.is_empty() {
            view.translate(s.ip).is_some()
        } else {
            s.branch_stack.iter().any(|b| {
                view.translate(b.from).is_some_and(|a| a != 0)
                    || view.translate(b.to).is_some_and(|a| a != 0)
            })
        };
        samples_in_binary += u64::from(in_binary);
        match source {
            AddrSource::Ip => keep(s.time, view.translate(s.ip)),
            AddrSource::BranchTargets => {
                with_branches += u64::from(!s.branch_stack.is_empty());
                for b in s.branch_stack.iter() {
                    keep(s.time, view.translate(b.to));
                }
            }
        }
    });
    let mapped = |files: &[String]| {
        if files.is_empty() {
            "none".to_string()
        } else {
            files.iter().take(6).cloned().collect::<Vec<_>>().join(", ")
        }
    };
    let stats = match walked {
        Ok(stats) => stats,
        Err(AggregateError::NotMapped {
            samples,
            mapped_files,
            ..
        }) => {
            return Err(InputError::NoSamples {
                perf: perf_s,
                binary: bin_s,
                total: samples,
                mapped: mapped(&mapped_files),
            })
        }
        Err(AggregateError::BuildIdMismatch(msg)) => return Err(InputError::BuildIdMismatch(msg)),
        Err(e) => {
            return Err(InputError::Perf {
                path: perf_s,
                msg: e.to_string(),
            })
        }
    };
    if source == AddrSource::BranchTargets && with_branches == 0 {
        return Err(InputError::NoBranchStacks { perf: perf_s });
    }
    if points.is_empty() {
        return Err(InputError::NoSamples {
            perf: perf_s,
            binary: bin_s,
            total: samples_total,
            mapped: mapped(&stats.mapped_files),
        });
    }

    // Functions: STT_FUNC symbols with a size, counted by binary search.
    let data = bin.data();
    let mut funcs: Vec<HotFunction> = bin
        .symbols()
        .symtab()
        .iter()
        .filter(|s| s.st_type == 2 && s.size > 0 && s.addr >= text_lo && s.addr < text_hi)
        .map(|s| HotFunction {
            name: String::from_utf8_lossy(s.name(data)).into_owned(),
            addr: s.addr,
            size: s.size,
            samples: 0,
        })
        .collect();
    funcs.sort_by_key(|f| (f.addr, std::cmp::Reverse(f.size)));
    funcs.dedup_by_key(|f| f.addr);
    for p in &points {
        let i = funcs.partition_point(|f| f.addr <= p.addr);
        if i > 0 {
            let f = &mut funcs[i - 1];
            if p.addr < f.addr + f.size {
                f.samples += 1;
            }
        }
    }
    funcs.retain(|f| f.samples > 0);
    funcs.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.addr.cmp(&b.addr)));

    Ok(Input {
        samples_in_text: points.len() as u64,
        points,
        text_lo,
        text_hi,
        functions: funcs,
        samples_total,
        samples_in_binary,
        build_id,
        kernel,
    })
}
