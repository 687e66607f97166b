//! The side-band events of a capture stream (everything but the samples), gathered in one
//! pass: mappings, threads, forks, exits, counters, and how the stream ended.

use crate::emulated::counters::CountedProcess;
use crate::emulated::maps::Map;
use crate::emulated::stream::{Event, Stream, Tail};

/// Side-band events of the capture (everything but samples), in stream order.
pub(crate) struct Capture {
    pub raw_maps: Vec<Map>,
    pub threads: Vec<(u64, i32, i32)>,
    pub forks: Vec<(u64, i32, i32, i32, i32)>,
    pub exits: Vec<(u64, i32, i32, i32)>,
    pub counters: Vec<CountedProcess>,
    pub pids: Vec<i32>,
    pub first_pc: Option<u64>,
    pub ended: bool,
    pub write_failed: bool,
    pub execs: usize,
    /// Measurement windows the guest opened (`window=markers`).
    pub windows: usize,
    /// The lowest kernel-text address executed (system mode).
    pub lowest_kernel_text: Option<u64>,
    pub tail: Tail,
}

impl Capture {
    pub fn collect(stream: &Stream<'_>) -> Capture {
        let mut c = Capture {
            raw_maps: Vec::new(),
            threads: Vec::new(),
            forks: Vec::new(),
            exits: Vec::new(),
            counters: Vec::new(),
            pids: Vec::new(),
            first_pc: None,
            ended: false,
            write_failed: false,
            execs: 0,
            windows: 0,
            lowest_kernel_text: None,
            tail: Tail::Clean,
        };
        let mut ev = stream.events();
        for e in ev.by_ref() {
            match e {
                Event::Sample(_) => {}
                Event::Mmap(m) => c.raw_maps.push(m),
                Event::Thread { time, pid, tid } => {
                    if !c.pids.contains(&pid) {
                        c.pids.push(pid);
                    }
                    c.threads.push((time, pid, tid))
                }
                Event::Fork {
                    time,
                    pid,
                    ppid,
                    tid,
                    ptid,
                } => {
                    if !c.pids.contains(&pid) {
                        c.pids.push(pid);
                    }
                    c.forks.push((time, pid, ppid, tid, ptid))
                }
                Event::Exit {
                    time,
                    pid,
                    ppid,
                    tid,
                    write_failed,
                } => {
                    c.write_failed |= write_failed;
                    c.exits.push((time, pid, ppid, tid))
                }
                Event::Counters {
                    pid,
                    threads,
                    counts,
                } => {
                    // Cumulative per process: the last record wins (an exec that failed
                    // writes one early).
                    let last = CountedProcess {
                        pid,
                        threads,
                        counts,
                    };
                    match c.counters.iter_mut().find(|p| p.pid == pid) {
                        Some(slot) => *slot = last,
                        None => c.counters.push(last),
                    }
                }
                Event::Info { first_pc, .. } => {
                    if c.first_pc.is_none() {
                        c.first_pc = Some(first_pc)
                    }
                }
                Event::End { .. } => c.ended = true,
                Event::Exec { .. } => c.execs += 1,
                Event::Window { open, .. } => c.windows += usize::from(open),
                Event::KernelText { lowest } => c.lowest_kernel_text = Some(lowest),
                Event::Unknown { .. } => {}
            }
        }
        c.tail = ev.tail();
        c
    }
}
