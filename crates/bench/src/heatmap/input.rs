//! Samples of one binary out of perf.data: follow the MMAP records of that
//! binary, turn each sample's runtime address into the binary's link-time
//! address, and keep its time.

use std::path::{Path, PathBuf};

use kfdo_elf::Binary;
use kfdo_perf::{CpuMode, PerfData, Record};

use super::{HotFunction, Point};

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
    #[error("{perf}: the binary {binary} has build-id {want}, but perf.data recorded {file} with build-id {got}: \
             a different build; record again, or pass the binary that ran")]
    BuildIdMismatch {
        perf: String,
        binary: String,
        file: String,
        want: String,
        got: String,
    },
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
    pub samples_total: u64,
    /// Samples (or branch targets) that fell in the binary's text.
    pub samples_in_text: u64,
    pub build_id: Option<String>,
    pub kernel: bool,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

struct Map {
    pid: u32,
    start: u64,
    end: u64,
    pgoff: u64,
}

fn same_file(recorded: &str, binary: &Path, canonical: &Option<PathBuf>) -> bool {
    let r = Path::new(recorded);
    if r == binary {
        return true;
    }
    if let (Some(c), Ok(rc)) = (canonical, std::fs::canonicalize(r)) {
        return *c == rc;
    }
    false
}

pub fn read(perf_path: &Path, binary_path: &Path, source: AddrSource) -> Result<Input, InputError> {
    let perf_s = perf_path.display().to_string();
    let bin_s = binary_path.display().to_string();
    let bin = Binary::open(binary_path).map_err(|e| InputError::Elf {
        path: bin_s.clone(),
        msg: e.to_string(),
    })?;
    let pd = PerfData::open(perf_path).map_err(|e| InputError::Perf {
        path: perf_s.clone(),
        msg: e.to_string(),
    })?;
    let kernel = bin.is_kernel();
    let build_id = bin.build_id().map(hex);
    let canonical = std::fs::canonicalize(binary_path).ok();

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

    // Which recorded file names are this binary: by build-id when both sides
    // have one (a mismatch is a hard error), else by path.
    let mut names: Vec<String> = Vec::new();
    if let Some(want) = &build_id {
        for e in pd.build_ids() {
            let got = e.build_id_hex();
            let matches_path = same_file(&e.filename, binary_path, &canonical);
            if got == *want {
                names.push(e.filename.clone());
            } else if matches_path {
                return Err(InputError::BuildIdMismatch {
                    perf: perf_s,
                    binary: bin_s,
                    file: e.filename.clone(),
                    want: want.clone(),
                    got,
                });
            }
        }
    }

    let mut maps: Vec<Map> = Vec::new();
    let mut kernel_delta: Option<u64> = None;
    let ktext = bin.symbol_address("_text").unwrap_or(text_lo);
    let mut mapped: Vec<String> = Vec::new();
    let mut points = Vec::new();
    let mut samples_total = 0u64;
    let mut with_branches = 0u64;

    let to_vaddr = |maps: &[Map],
                    kernel_delta: Option<u64>,
                    pid: u32,
                    ip: u64,
                    mode: CpuMode|
     -> Option<u64> {
        if kernel {
            if mode != CpuMode::Kernel {
                return None;
            }
            return Some(ip.wrapping_sub(kernel_delta.unwrap_or(0)));
        }
        let m = maps
            .iter()
            .rev()
            .find(|m| m.pid == pid && ip >= m.start && ip < m.end)?;
        bin.file_offset_to_vaddr(ip - m.start + m.pgoff)
    };

    for rec in pd.records() {
        let rec = rec.map_err(|e| InputError::Perf {
            path: perf_s.clone(),
            msg: e.to_string(),
        })?;
        match rec {
            Record::Mmap(m) => {
                if kernel {
                    if m.pid == u32::MAX && m.filename.starts_with("[kernel.kallsyms]") {
                        // perf's kernel map starts at the runtime _text (KASLR).
                        kernel_delta = Some(m.start.wrapping_sub(ktext));
                    }
                    continue;
                }
                if !m.is_executable() {
                    continue;
                }
                let is_ours = names.iter().any(|n| n == m.filename)
                    || m.build_id.map(hex).as_ref() == build_id.as_ref() && m.build_id.is_some()
                    || same_file(m.filename, binary_path, &canonical);
                if is_ours {
                    if let (Some(want), Some(got)) = (&build_id, m.build_id) {
                        if hex(got) != *want {
                            return Err(InputError::BuildIdMismatch {
                                perf: perf_s,
                                binary: bin_s,
                                file: m.filename.to_string(),
                                want: want.clone(),
                                got: hex(got),
                            });
                        }
                    }
                    maps.push(Map {
                        pid: m.pid,
                        start: m.start,
                        end: m.start + m.len,
                        pgoff: m.pgoff,
                    });
                } else if mapped.len() < 6 && !mapped.iter().any(|x| x == m.filename) {
                    mapped.push(m.filename.to_string());
                }
            }
            Record::Sample(s) => {
                samples_total += 1;
                match source {
                    AddrSource::Ip => {
                        if let Some(va) = to_vaddr(&maps, kernel_delta, s.pid, s.ip, s.cpumode()) {
                            if va >= text_lo && va < text_hi {
                                points.push(Point {
                                    time_ns: s.time,
                                    addr: va,
                                });
                            }
                        }
                    }
                    AddrSource::BranchTargets => {
                        if !s.branch_stack.is_empty() {
                            with_branches += 1;
                        }
                        for b in s.branch_stack.iter() {
                            if let Some(va) =
                                to_vaddr(&maps, kernel_delta, s.pid, b.to, s.cpumode())
                            {
                                if va >= text_lo && va < text_hi {
                                    points.push(Point {
                                        time_ns: s.time,
                                        addr: va,
                                    });
                                }
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    if source == AddrSource::BranchTargets && with_branches == 0 {
        return Err(InputError::NoBranchStacks { perf: perf_s });
    }
    if points.is_empty() {
        return Err(InputError::NoSamples {
            perf: perf_s,
            binary: bin_s,
            total: samples_total,
            mapped: if mapped.is_empty() {
                "none".into()
            } else {
                mapped.join(", ")
            },
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
        build_id,
        kernel,
    })
}
