//! A function's basic blocks as BOLT builds them when it disassembles the binary, which
//! is what turns a fall-through trace (from one LBR record's target to the next
//! record's source) into BOLT's fall-through edges:
//!
//! * a block starts at the entry, at each direct jump target inside the function, and
//!   after each terminator (conditional or unconditional jump, return, `ud2`); an
//!   unconditional jump right after a conditional one joins the conditional's block
//!   (a two-way branch), unless something jumps to it;
//! * calls do not end blocks;
//! * a direct jump out of the function is a tail call; a conditional one falls through;
//! * an indirect jump through an absolute jump table (`jmp *TABLE(,%reg,8)`, what
//!   clang emits for a `switch` outside PIC code) has the table's entries as successors,
//!   read as BOLT reads them: 8-byte entries from the table's address while each is an
//!   instruction of the function (one just past its end is an unreachable case), and
//!   each entry starts a block;
//!   so does a PIC jump table (4-byte offsets from the table, found from the `lea` /
//!   `movslq` / `add` sequence before the jump); any other indirect jump is a tail call;
//! * a function BOLT could not fully analyse is not "simple" and gets no fall-through
//!   edges: here, one with an undecodable byte, a jump into the middle of an
//!   instruction, or a jump table without a single entry in the function.

use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic, OpKind, Register};

/// How a block's last instruction leaves it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Exit {
    /// Runs into the next block (no terminator: a jump target follows).
    FallThrough,
    /// A conditional jump to `target` inside the function, else the next block.
    Cond { target: u64 },
    /// A conditional jump out of the function (a conditional tail call), else the next block.
    CondTailCall,
    /// A conditional jump to `cond` followed by an unconditional jump to `jump`.
    TwoWay { cond: u64, jump: u64 },
    /// An unconditional jump to `target` inside the function.
    Jump { target: u64 },
    /// An indirect jump through a jump table with these targets.
    Table { targets: Vec<u64> },
    /// Return, tail call, trap: no successor in the function.
    Leaves,
}

#[derive(Clone, Debug)]
struct Block {
    start: u64,
    /// Offset of its last instruction.
    last: u64,
    last_is_call: bool,
    exit: Exit,
}

/// The blocks of one function, offsets from its start.
#[derive(Debug)]
pub struct FunctionCfg {
    simple: bool,
    blocks: Vec<Block>,
}

/// A jump table an indirect jump reads its target from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Table {
    /// 8-byte absolute addresses at this address (`jmp *TABLE(,%reg,8)`).
    Absolute(u64),
    /// 4-byte offsets from this address, the table's own (PIC: `lea TABLE(%rip),%rb;
    /// movslq (%rb,%ri,4),%rj; add %rb,%rj; jmp *%rj`).
    Relative(u64),
}

impl Table {
    fn start(self) -> u64 {
        match self {
            Table::Absolute(a) | Table::Relative(a) => a,
        }
    }
}

/// One decoded instruction, what the CFG needs of it.
struct Insn {
    off: u64,
    flow: FlowControl,
    /// Direct branch target (an absolute address).
    target: Option<u64>,
    /// An indirect jump's table, when it has one.
    table: Option<Table>,
    ud2: bool,
}

/// How many instructions before an indirect jump the PIC table pattern may start.
const PIC_LOOKBACK: usize = 8;

/// The PIC jump table `jmp` (at `insns[at]`, through a register) reads, if the
/// instructions before it compute the target from one.
fn pic_table(insns: &[Instruction], at: usize) -> Option<u64> {
    let jmp = &insns[at];
    if jmp.op0_kind() != OpKind::Register {
        return None;
    }
    let window = &insns[at.saturating_sub(PIC_LOOKBACK)..at];
    // movslq (%rb,%ri,4), %rj  then  lea TABLE(%rip), %rb before it.
    let (load_at, base) = window.iter().enumerate().rev().find_map(|(i, x)| {
        (x.mnemonic() == Mnemonic::Movsxd
            && x.op1_kind() == OpKind::Memory
            && x.memory_index_scale() == 4
            && x.memory_displacement64() == 0
            && x.memory_base() != Register::None)
            .then(|| (i, x.memory_base()))
    })?;
    window[..load_at].iter().rev().find_map(|x| {
        (x.mnemonic() == Mnemonic::Lea
            && x.op0_register() == base
            && x.memory_base() == Register::RIP)
            .then(|| x.ip_rel_memory_address())
    })
}

fn decode(bytes: &[u8], addr: u64) -> Option<Vec<Insn>> {
    let mut d = Decoder::with_ip(64, bytes, addr, DecoderOptions::NONE);
    let mut raw = Vec::new();
    while d.can_decode() {
        let insn = d.decode();
        if insn.is_invalid() {
            return None;
        }
        raw.push(insn);
    }
    let out = raw
        .iter()
        .enumerate()
        .map(|(n, insn)| {
            let flow = insn.flow_control();
            let direct = matches!(
                insn.op0_kind(),
                OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
            );
            let absolute = insn.op0_kind() == OpKind::Memory
                && insn.memory_base() == Register::None
                && insn.memory_index() != Register::None
                && insn.memory_index_scale() == 8;
            let table = match flow {
                FlowControl::IndirectBranch if absolute => {
                    Some(Table::Absolute(insn.memory_displacement64()))
                }
                FlowControl::IndirectBranch => pic_table(&raw, n).map(Table::Relative),
                _ => None,
            };
            Insn {
                off: insn.ip() - addr,
                flow,
                target: direct.then(|| insn.near_branch_target()),
                table,
                ud2: insn.mnemonic() == Mnemonic::Ud2,
            }
        })
        .collect();
    Some(out)
}

impl FunctionCfg {
    /// Builds the blocks of the function at `addr` whose bytes are `bytes`; `read(addr,
    /// n)` reads the binary's `n`-byte little-endian value at an address (jump tables).
    pub fn build(bytes: &[u8], addr: u64, read: &dyn Fn(u64, usize) -> Option<u64>) -> FunctionCfg {
        let not_simple = FunctionCfg {
            simple: false,
            blocks: Vec::new(),
        };
        let Some(insns) = decode(bytes, addr) else {
            return not_simple;
        };
        let size = bytes.len() as u64;
        let inside = |t: u64| t >= addr && t < addr + size;
        let boundaries: rustc_hash::FxHashSet<u64> = insns.iter().map(|i| i.off).collect();
        let table_starts: Vec<u64> = insns
            .iter()
            .filter_map(|i| i.table.map(Table::start))
            .collect();
        let mut tables: rustc_hash::FxHashMap<u64, Vec<u64>> = Default::default();
        for table in insns.iter().filter_map(|i| i.table) {
            let t = table.start();
            let (width, relative) = match table {
                Table::Absolute(_) => (8, false),
                Table::Relative(_) => (4, true),
            };
            let mut targets = Vec::new();
            let mut entry = t;
            loop {
                if entry != t && table_starts.contains(&entry) {
                    break;
                }
                let Some(raw) = read(entry, width) else { break };
                let v = if relative {
                    t.wrapping_add(raw as u32 as i32 as i64 as u64)
                } else {
                    raw
                };
                if v == addr + size {
                    // __builtin_unreachable(): an entry past the end, no block.
                } else if inside(v) && boundaries.contains(&(v - addr)) {
                    targets.push(v - addr);
                } else {
                    break;
                }
                entry += width as u64;
            }
            if targets.is_empty() {
                return not_simple;
            }
            tables.insert(t, targets);
        }
        // Jump targets (labels), as offsets.
        let mut labels = rustc_hash::FxHashSet::default();
        labels.insert(0u64);
        labels.extend(tables.values().flatten().copied());
        for i in &insns {
            match i.flow {
                FlowControl::ConditionalBranch | FlowControl::UnconditionalBranch => {
                    if let Some(t) = i.target.filter(|&t| inside(t)) {
                        labels.insert(t - addr);
                    }
                }
                _ => {}
            }
        }
        if labels.iter().any(|l| !boundaries.contains(l)) {
            return not_simple;
        }

        let mut blocks: Vec<Block> = Vec::new();
        let mut open = false; // the last block still takes instructions
        for i in &insns {
            let labelled = labels.contains(&i.off);
            let target_off = i.target.filter(|&t| inside(t)).map(|t| t - addr);
            let intra_jump = i.flow == FlowControl::UnconditionalBranch && target_off.is_some();
            // An unconditional jump right after a conditional one (not a conditional tail
            // call), with no label of its own, joins that block.
            let joins = !labelled
                && !open
                && intra_jump
                && blocks
                    .last()
                    .is_some_and(|b| matches!(b.exit, Exit::Cond { .. }));
            if (labelled || !open) && !joins {
                blocks.push(Block {
                    start: i.off,
                    last: i.off,
                    last_is_call: false,
                    exit: Exit::FallThrough,
                });
            }
            let b = blocks.last_mut().expect("a block was opened");
            let prev_exit = b.exit.clone();
            b.last = i.off;
            b.last_is_call = matches!(i.flow, FlowControl::Call | FlowControl::IndirectCall);
            open = false;
            b.exit = match i.flow {
                FlowControl::ConditionalBranch => match target_off {
                    Some(target) => Exit::Cond { target },
                    None => Exit::CondTailCall,
                },
                FlowControl::UnconditionalBranch => match (joins, prev_exit, target_off) {
                    // `joins` needs a jump inside the function, so `Some`.
                    (true, Exit::Cond { target }, Some(jump)) => {
                        Exit::TwoWay { cond: target, jump }
                    }
                    (_, _, Some(target)) => Exit::Jump { target },
                    (_, _, None) => Exit::Leaves,
                },
                FlowControl::IndirectBranch => match i.table.and_then(|t| tables.get(&t.start())) {
                    Some(targets) => Exit::Table {
                        targets: targets.clone(),
                    },
                    None => Exit::Leaves,
                },
                FlowControl::Return => Exit::Leaves,
                _ if i.ud2 => Exit::Leaves,
                _ => {
                    open = true;
                    Exit::FallThrough
                }
            };
        }
        FunctionCfg {
            simple: true,
            blocks,
        }
    }

    #[cfg(test)]
    pub fn is_simple(&self) -> bool {
        self.simple
    }

    /// Index of the block holding `off`.
    fn block_containing(&self, off: u64) -> Option<usize> {
        let i = self
            .blocks
            .partition_point(|b| b.start <= off)
            .checked_sub(1)?;
        Some(i)
    }

    /// Whether block `i` has block `i + 1` among its successors.
    fn reaches_next(&self, i: usize) -> bool {
        let Some(next) = self.blocks.get(i + 1) else {
            return false;
        };
        match &self.blocks[i].exit {
            Exit::FallThrough | Exit::Cond { .. } | Exit::CondTailCall => true,
            Exit::TwoWay { cond, jump } => *cond == next.start || *jump == next.start,
            Exit::Jump { target } => *target == next.start,
            Exit::Table { targets } => targets.contains(&next.start),
            Exit::Leaves => false,
        }
    }

    /// BOLT's fall-through edges `(from, to)` for a trace that ran from `from` to `to`
    /// (offsets) without a taken branch; `external_origin`: the branch that started the
    /// trace came from outside the function (a return into it). `None`: BOLT finds the
    /// trace impossible and drops it.
    pub fn fallthroughs(
        &self,
        from: u64,
        to: u64,
        external_origin: bool,
    ) -> Option<Vec<(u64, u64)>> {
        if !self.simple || from > to {
            return None;
        }
        let mut first = self.block_containing(from)?;
        let last = self.block_containing(to)?;
        // A return lands after the call that ends the previous block: that block's
        // fall-through ran too.
        if external_origin && first > 0 && self.blocks[first].start == from {
            let prev = first - 1;
            if self.reaches_next(prev) && self.blocks[prev].last_is_call {
                first = prev;
            }
        }
        let mut edges = Vec::new();
        for i in first..last {
            if !self.reaches_next(i) {
                return None;
            }
            edges.push((self.blocks[i].last, self.blocks[i + 1].start));
        }
        Some(edges)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // testl %edi,%edi; jle +0x3 (to 7); cmp $1,%edi; jne ... (out of function);
    // xor %eax,%eax (7); ret
    const CODE: [u8; 11] = [
        0x85, 0xff, 0x7e, 0x03, 0x83, 0xff, 0x01, 0x31, 0xc0, 0xc3, 0xcc,
    ];

    #[test]
    fn blocks_split_at_targets_and_after_branches() {
        let cfg = FunctionCfg::build(&CODE[..10], 0x1000, &|_, _| None);
        assert!(cfg.is_simple());
        let starts: Vec<u64> = cfg.blocks.iter().map(|b| b.start).collect();
        assert_eq!(starts, [0, 4, 7]);
        // 0..4 ends in jle at 2 and falls through to 4; 4..7 runs into 7.
        assert_eq!(cfg.fallthroughs(0, 9, false), Some(vec![(2, 4), (4, 7)]));
        assert_eq!(cfg.fallthroughs(7, 9, false), Some(vec![]));
        assert_eq!(cfg.fallthroughs(9, 7, false), None);
    }

    #[test]
    fn indirect_jump_through_register_is_a_tail_call() {
        // jmp *%rax; ret
        let cfg = FunctionCfg::build(&[0xff, 0xe0, 0xc3], 0x1000, &|_, _| None);
        assert!(cfg.is_simple());
        assert_eq!(
            cfg.fallthroughs(0, 2, false),
            None,
            "no fall-through past the jump"
        );
    }

    #[test]
    fn undecodable_code_is_not_simple() {
        let cfg = FunctionCfg::build(&[0x0f, 0xff], 0x1000, &|_, _| None);
        assert!(!cfg.is_simple());
        assert_eq!(cfg.fallthroughs(0, 0, false), None);
    }
}
