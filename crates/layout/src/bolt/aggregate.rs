//! From LBR stacks to fdata records, the way perf2bolt aggregates them:
//!
//! 1. per sample, newest record first: each record is a taken branch (its ends kept
//!    only if some function holds them, else 0), and the run from a record's target to
//!    the next newer record's source is a fall-through trace, kept when one function
//!    holds both ends; it is "external" when the branch that started it came from
//!    outside that function (a return into it). Records touching kernel addresses are
//!    dropped first, as perf2bolt drops interrupts;
//! 2. each trace becomes the fall-through edges between the blocks it crossed
//!    ([`FunctionCfg::fallthroughs`]), each taken branch a record: inside a function
//!    (not to its entry) an intra-function record; otherwise a call / entry record, the
//!    entry side written only when its source is unknown. Branches from a return
//!    instruction are not recorded.

use rustc_hash::FxHashMap;

use super::cfg::FunctionCfg;
use super::fdata::{Fdata, Location};
use super::functions::{Function, FunctionTable};

/// perf2bolt's `KernelBaseAddr`: records with an end at or above it are interrupts.
const KERNEL_BASE: u64 = 0xffff_8000_0000_0000;

/// What the aggregation saw, for the user.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    pub lbr_entries: u64,
    pub traces: u64,
    /// Traces a function's blocks cannot explain (or in a function kfdo cannot analyse).
    pub invalid_traces: u64,
    /// Traces with an end outside the binary's functions.
    pub long_range_traces: u64,
}

#[derive(Default)]
pub struct Aggregation {
    /// (from, to) addresses, 0 for outside the functions: (taken, mispredicted).
    branches: FxHashMap<(u64, u64), (u64, u64)>,
    /// (start, end) addresses: (internal starts, external starts).
    traces: FxHashMap<(u64, u64), (u64, u64)>,
    pub stats: TraceStats,
}

/// One LBR record: (from, to) as link-time addresses of the binary (`None` outside it),
/// the raw runtime addresses (for the kernel filter), and the mispredict bit.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    pub from: Option<u64>,
    pub to: Option<u64>,
    pub raw_from: u64,
    pub raw_to: u64,
    pub mispred: bool,
}

impl Aggregation {
    /// Adds one sample's stack, newest record first.
    pub fn add_stack(&mut self, funcs: &FunctionTable, records: impl Iterator<Item = Record>) {
        let func_of = |a: Option<u64>| a.and_then(|a| funcs.containing(a));
        let mut next_pc: Option<u64> = None;
        for r in records {
            if r.raw_from >= KERNEL_BASE || r.raw_to >= KERNEL_BASE {
                continue;
            }
            self.stats.lbr_entries += 1;
            if let Some(end) = next_pc {
                // Ran from this record's target to the newer record's source.
                let holder = func_of(r.to);
                match (holder, r.to) {
                    (Some(f), Some(start)) if contains(f, end) => {
                        let t = self.traces.entry((start, end)).or_default();
                        if r.from.is_some_and(|a| contains(f, a)) {
                            t.0 += 1;
                        } else {
                            t.1 += 1;
                        }
                    }
                    (Some(_), _) if funcs.containing(end).is_some() => {
                        self.stats.invalid_traces += 1
                    }
                    _ => self.stats.long_range_traces += 1,
                }
                self.stats.traces += 1;
            }
            // A source outside the binary ends the next trace where no function is.
            next_pc = Some(r.from.unwrap_or(u64::MAX));
            let from = func_of(r.from).and(r.from).unwrap_or(0);
            let to = func_of(r.to).and(r.to).unwrap_or(0);
            if from == 0 && to == 0 {
                continue;
            }
            let b = self.branches.entry((from, to)).or_default();
            b.0 += 1;
            b.1 += u64::from(r.mispred);
        }
    }

    /// The fdata records. `bytes_of(function)` gives a function's code, `read` the
    /// binary's data at an address.
    pub fn finish<'b>(
        mut self,
        funcs: &FunctionTable,
        bytes_of: &dyn Fn(&Function) -> Option<&'b [u8]>,
        read: &dyn Fn(u64, usize) -> Option<u64>,
    ) -> (Fdata, TraceStats) {
        let mut out = Fdata::default();
        let mut cfgs: FxHashMap<u64, FunctionCfg> = FxHashMap::default();
        let mut traces: Vec<_> = self.traces.drain().collect();
        traces.sort_unstable();
        for ((start, end), (intern, extern_)) in traces {
            let f = funcs
                .containing(start)
                .expect("kept traces lie in a function");
            let cfg = cfgs.entry(f.addr).or_insert_with(|| match bytes_of(f) {
                Some(b) => FunctionCfg::build(b, f.addr, read),
                None => FunctionCfg::build(&[], f.addr, read),
            });
            for (n, external) in [(intern, false), (extern_, true)] {
                if n == 0 {
                    continue;
                }
                match cfg.fallthroughs(start - f.addr, end - f.addr, external) {
                    Some(edges) => {
                        for (a, b) in edges {
                            out.add(Location::at(&f.name, a), Location::at(&f.name, b), n, 0);
                        }
                    }
                    None => self.stats.invalid_traces += n,
                }
            }
        }
        for ((from, to), (n, mispreds)) in self.branches {
            let src = funcs.containing(from).filter(|_| from != 0);
            if let Some(f) = src {
                if is_return(bytes_of(f), from - f.addr) {
                    continue;
                }
            }
            let dst = funcs.containing(to).filter(|_| to != 0);
            let here = |f: &Function, a: u64| Location::at(&f.name, a - f.addr);
            match (src, dst) {
                (Some(s), Some(d)) if s.addr == d.addr && to != d.addr => {
                    out.add(here(s, from), here(d, to), n, mispreds);
                }
                (Some(s), d) => {
                    let to_loc = d.map_or_else(Location::unknown, |d| here(d, to));
                    out.add(here(s, from), to_loc, n, mispreds);
                }
                (None, Some(d)) => out.add(Location::unknown(), here(d, to), n, mispreds),
                (None, None) => {}
            }
        }
        (out, self.stats)
    }
}

fn contains(f: &Function, addr: u64) -> bool {
    addr >= f.addr && addr < f.addr + f.size
}

/// Whether the instruction at `off` of a function's code is a return.
fn is_return(code: Option<&[u8]>, off: u64) -> bool {
    let Some(bytes) = code.and_then(|c| c.get(off as usize..)) else {
        return false;
    };
    let mut d = iced_x86::Decoder::new(64, bytes, iced_x86::DecoderOptions::NONE);
    d.can_decode() && d.decode().flow_control() == iced_x86::FlowControl::Return
}
