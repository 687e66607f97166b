//! Writing the capture as perf.data through `kfdo-perf`'s writer: one event (the
//! taken-branch event, as `perf record -b -e br_inst_retired.near_taken -c PERIOD` would
//! open it), COMM / FORK / EXIT, MMAP2 per executable segment, samples with branch stacks,
//! and the BUILD_ID feature. Written to a temporary file beside the output and renamed.

use crate::emulated::maps::{ElfInfo, Map};
use crate::emulated::stream::{Event, Header, Stream};
use crate::error::Error;
use kfdo_perf::consts::{branch, misc, sample};
use kfdo_perf::{BranchEntry, BuildIdEntry, EventAttr, FeatureId, Fork, PerfWriter, SampleOut};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// `br_inst_retired.near_taken` on Intel cores (event 0xc4, umask 0x20), as a raw event.
pub const NEAR_TAKEN_CONFIG: u64 = 0x20c4;
const PERF_TYPE_RAW: u32 = 4;

pub(crate) struct Input<'a> {
    pub header: &'a Header,
    pub stream: &'a Stream<'a>,
    pub maps: &'a [Map],
    pub elves: &'a HashMap<Vec<u8>, Option<ElfInfo>>,
    pub threads: &'a [(u64, i32, i32)],
    pub forks: &'a [(u64, i32, i32, i32, i32)],
    pub exits: &'a [(u64, i32, i32, i32)],
    /// Command name of the program (user mode).
    pub comm: &'a [u8],
    pub system: bool,
    /// The guest's architecture (from the program's or kernel's ELF header).
    pub arch: kfdo_elf::Arch,
    /// Whether the run is worth keeping without samples: a counting run (a counters
    /// file was asked for), whose library callers set a period no run reaches. Else a
    /// recording without samples is an error.
    pub counting: bool,
}

pub(crate) struct Written {
    pub samples: u64,
}

/// The attr `perf record -b` would write for the taken-branch event with this filter.
pub fn branch_attr(period: u64, filter: u32) -> EventAttr {
    let mut a = EventAttr::new(PERF_TYPE_RAW, NEAR_TAKEN_CONFIG, period);
    a.sample_type = sample::IP | sample::TID | sample::TIME | sample::PERIOD | sample::BRANCH_STACK;
    a.branch_sample_type = branch::ANY | branch::HW_INDEX;
    let suffix = match filter {
        1 => {
            a.exclude_kernel = true;
            a.exclude_hv = true;
            a.branch_sample_type |= branch::USER;
            ":u"
        }
        2 => {
            a.exclude_user = true;
            a.exclude_hv = true;
            a.branch_sample_type |= branch::KERNEL;
            ":k"
        }
        _ => "",
    };
    a.name = Some(format!("br_inst_retired.near_taken{suffix}"));
    a
}

/// Writes the perf.data, atomically; a capture without samples is an error
/// ([`Error::NoSamples`]) and writes nothing, unless the run is a counting one.
pub(crate) fn write(output: &Path, inp: &Input<'_>) -> Result<Written, Error> {
    let dir = kfdo_outfile::parent_dir(output);
    let out_err = |what: String| Error::Output {
        path: output.to_path_buf(),
        what,
    };
    // Mode 0600, as `perf record` gives its perf.data: a recording shows addresses (with
    // the kernel's KASLR offset) to whoever can read it.
    let tmp = tempfile::Builder::new()
        .prefix(".kfdo-tmp-")
        .tempfile_in(&dir)
        .map_err(|e| out_err(kfdo_outfile::create_error(&dir, &e)))?;
    let written = write_to(tmp.path(), inp).map_err(|e| out_err(format!("{e}")))?;
    if written.samples == 0 && !inp.counting {
        // A recording without samples profiles nothing; the temporary file goes with
        // `tmp`, and whatever `output` held stays.
        return Err(Error::NoSamples {
            path: output.to_path_buf(),
            period: inp.header.period,
        });
    }
    tmp.persist(output)
        .map_err(|e| out_err(format!("cannot rename into place: {}", e.error)))?;
    Ok(written)
}

fn write_to(path: &Path, inp: &Input<'_>) -> Result<Written, kfdo_perf::PerfError> {
    let h = inp.header;
    let attr = branch_attr(h.period, h.filter);
    let mut w = PerfWriter::create(path, vec![attr])?;
    let arch = crate::emulated::guest_arch::perf_arch(inp.arch);
    w.set_feature_string(FeatureId::ARCH, arch);
    w.set_feature_string(FeatureId::VERSION, "kfdo-vlbr");
    let qemu = if inp.system { "qemu-system-" } else { "qemu-" };
    w.set_feature_string(
        FeatureId::CPUDESC,
        &format!("QEMU TCG ({qemu}{arch}), emulated LBR"),
    );
    w.set_nr_cpus(1, 1);
    let comm = String::from_utf8_lossy(inp.comm).to_string();

    // Side-band events first, in time order; samples follow (perf orders by time).
    enum Side<'a> {
        Thread(i32, i32),
        Fork(i32, i32, i32, i32),
        Exit(i32, i32, i32),
        Map(&'a Map),
    }
    let mut side: Vec<(u64, Side<'_>)> = Vec::new();
    for &(t, pid, tid) in inp.threads {
        side.push((t, Side::Thread(pid, tid)));
    }
    for &(t, pid, ppid, tid, ptid) in inp.forks {
        side.push((t, Side::Fork(pid, ppid, tid, ptid)));
    }
    for &(t, pid, ppid, tid) in inp.exits {
        side.push((t, Side::Exit(pid, ppid, tid)));
    }
    for m in inp.maps {
        side.push((m.time, Side::Map(m)));
    }
    side.sort_by_key(|(t, _)| *t);
    let mut commed: HashSet<(i32, i32)> = HashSet::new();
    let mut ids: HashSet<(i32, Vec<u8>)> = HashSet::new();
    for (t, s) in &side {
        match s {
            Side::Thread(pid, tid) | Side::Fork(pid, _, tid, _) => {
                if let Side::Fork(pid, ppid, tid, ptid) = s {
                    w.write_fork(&Fork {
                        pid: *pid as u32,
                        ppid: *ppid as u32,
                        tid: *tid as u32,
                        ptid: *ptid as u32,
                        time: *t,
                    })?;
                }
                if !inp.system && commed.insert((*pid, *tid)) {
                    w.write_comm(*pid as u32, *tid as u32, &comm, false)?;
                }
            }
            Side::Exit(pid, ppid, tid) => {
                w.write_exit(&Fork {
                    pid: *pid as u32,
                    ppid: *ppid as u32,
                    tid: *tid as u32,
                    ptid: *tid as u32,
                    time: *t,
                })?;
            }
            Side::Map(m) => {
                let path = String::from_utf8_lossy(&m.path).to_string();
                let bid = inp
                    .elves
                    .get(&m.path)
                    .and_then(|e| e.as_ref())
                    .and_then(|e| e.build_id.clone())
                    .or_else(|| {
                        if m.path.starts_with(b"[") {
                            return None;
                        }
                        ElfInfo::read(Path::new(std::ffi::OsStr::new(&path)))
                            .and_then(|e| e.build_id)
                    });
                let kernel = inp.system && m.start >= 0xffff_8000_0000_0000;
                // The kernel image, as perf writes it: an MMAP (not MMAP2) for pid -1 named
                // `[kernel.kallsyms]_text`, pgoff = runtime address of `_text`; its build-id
                // entry is named `[kernel.kallsyms]`.
                let kmap = kernel && m.path.starts_with(b"[kernel.kallsyms]");
                let mm = m.to_perf(if kernel { misc::KERNEL } else { misc::USER }, !kmap);
                if kmap {
                    w.write_mmap(&mm)?;
                } else {
                    w.write_mmap2(&mm)?;
                }
                if let Some(b) = bid {
                    if ids.insert((m.pid, m.path.clone())) {
                        w.add_build_id(BuildIdEntry {
                            pid: m.pid,
                            misc: if kernel { misc::KERNEL } else { misc::USER },
                            build_id: b,
                            filename: if kmap {
                                "[kernel.kallsyms]".to_string()
                            } else {
                                path
                            },
                        });
                    }
                }
            }
        }
    }

    let mut n = 0u64;
    let mut br: Vec<BranchEntry> = Vec::with_capacity(h.depth as usize);
    for e in inp.stream.events() {
        if let Event::Sample(s) = e {
            br.clear();
            br.extend(s.branches().map(|(f, t)| BranchEntry::new(f, t)));
            let kernel = s.ip >= 0xffff_8000_0000_0000;
            w.write_sample(
                0,
                &SampleOut {
                    misc: if kernel { misc::KERNEL } else { misc::USER },
                    ip: s.ip,
                    pid: s.pid as u32,
                    tid: s.tid as u32,
                    time: s.time,
                    period: s.period,
                    branches: &br,
                    hw_idx: None,
                    ..Default::default()
                },
            )?;
            n += 1;
        }
    }
    w.finish()?;
    Ok(Written { samples: n })
}

/// The warning of a counting run without samples (its perf.data is empty).
pub(crate) fn no_samples_warning(period: u64) -> String {
    format!(
        "no samples: the run was shorter than one sample period (--period {period}); the \
         perf.data is empty, the counters are complete"
    )
}
