//! The program's CFG from the BB address map and the sampled branch and fall-through
//! counts, with llvm-propeller's rules:
//!
//! * a taken branch runs from the block that holds its source to the block that starts
//!   at its target; to a function's entry it is a call, into the middle of a block (or
//!   from a block that returns) a return. A return that lands on a block's first byte
//!   came back from a call that ended the block before it: it is attributed to that
//!   block, plus a fall-through into the landing block;
//! * a fall-through run (from a branch's target to the next branch's source) adds one
//!   fall-through edge between each pair of consecutive blocks it crosses, when all of
//!   them lie in one function in order and each but the last can fall through (LBR
//!   stacks sometimes hold duplicated records that make impossible runs);
//! * a block's count is the largest of: its incoming non-return edges, its outgoing
//!   non-call edges, its heaviest call out and its heaviest return in (a block that
//!   calls several functions would otherwise count once per call).
//!
//! A taken branch other than a return whose target is not a block's start cannot come
//! from the binary the map describes: its weight is "dubious", and a function with
//! much of it is stale (see [`StaleFunction`]).

use kfdo_aggregate::{RawProfile, EXTERNAL_ADDR};
use kfdo_elf::{BbAddrMap, BbMetadata};
use rustc_hash::FxHashMap;

use super::model::{Edge, EdgeKind, FunctionCfg, InterEdge, Node, NodeRef, ProgramCfg};

/// One block of the map, where it lies.
#[derive(Clone, Copy, Debug)]
struct Block {
    start: u64,
    size: u64,
    function: usize,
    node: usize,
    meta: BbMetadata,
}

/// All blocks of the program, sorted by address (llvm-propeller's "BB handles").
pub struct BlockIndex {
    blocks: Vec<Block>,
}

/// Which end of a branch an address is: a target may be the first of several empty
/// blocks at one address; a source lies inside a block with bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    From,
    To,
}

/// A mapped function: its entry address and its blocks' (address, size, flags).
type MappedFunction = (u64, Vec<(u64, u64, BbMetadata)>);

impl BlockIndex {
    fn new(cfg_functions: &[MappedFunction]) -> BlockIndex {
        let mut blocks = Vec::new();
        for (function, (_, nodes)) in cfg_functions.iter().enumerate() {
            for (node, &(start, size, meta)) in nodes.iter().enumerate() {
                blocks.push(Block {
                    start,
                    size,
                    function,
                    node,
                    meta,
                });
            }
        }
        blocks.sort_by_key(|b| (b.start, b.function, b.node));
        BlockIndex { blocks }
    }

    fn find(&self, addr: u64, dir: Direction) -> Option<usize> {
        let after = self.blocks.partition_point(|b| b.start <= addr);
        let mut i = after.checked_sub(1)?;
        let b = &self.blocks[i];
        if addr > b.start {
            return (addr < b.start + b.size).then_some(i);
        }
        match dir {
            Direction::To => {
                while i > 0
                    && self.blocks[i - 1].start == addr
                    && self.blocks[i - 1].function == b.function
                {
                    i -= 1;
                }
                Some(i)
            }
            // Several blocks start here: the one with bytes holds the source.
            Direction::From => (b.size > 0).then_some(i),
        }
    }

    /// A fall-through run from block `from` to block `to` (global indices) is possible.
    fn can_fall_through(&self, from: usize, to: usize) -> bool {
        let (a, b) = (&self.blocks[from], &self.blocks[to]);
        a.function == b.function
            && from <= to
            && a.node <= b.node
            && self.blocks[from..to]
                .iter()
                .all(|x| x.function == a.function && x.meta.can_fall_through)
    }
}

/// What building the CFG saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildStats {
    /// Functions in the map, and those with samples.
    pub functions: usize,
    pub hot_functions: usize,
    /// Taken-branch weight read, and the part that became edges.
    pub branch_weight: u64,
    pub edge_weight: u64,
    /// Weight of branches (not returns) into the middle of a block.
    pub dubious_weight: u64,
    /// Weight of records from an instruction to itself in mid-block (not branches).
    pub self_records_weight: u64,
    /// Fall-through weight that the map cannot explain (other functions, backwards,
    /// through a block that cannot fall through).
    pub dropped_fallthrough_weight: u64,
    /// Functions without a symbol name (skipped).
    pub unnamed_functions: usize,
    /// Functions outside the `.text` output section (skipped, as llvm-propeller does by
    /// default: the kernel's `.init.text`, a program's `.text.startup` kept apart...).
    pub non_text_functions: usize,
}

/// A function whose samples do not fit its map: branches land inside its blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaleFunction {
    pub name: String,
    pub dubious_weight: u64,
    pub branch_weight: u64,
}

/// The CFG of every named function in `map`, weighted by `raw`'s counts. Also returns
/// the functions whose branches mostly land inside blocks (most stale first).
/// `in_text` says whether an address lies in the section laid out (`.text`).
pub fn build_cfg(
    map: &BbAddrMap,
    names: &FxHashMap<u64, String>,
    in_text: &dyn Fn(u64) -> bool,
    raw: &RawProfile,
) -> (ProgramCfg, BuildStats, Vec<StaleFunction>) {
    let mut stats = BuildStats::default();
    let (functions, layout) = mapped_functions(map, names, in_text, &mut stats);
    let index = BlockIndex::new(&layout);
    let mut w = Weights::default();
    w.add_branches(&index, &layout, raw, &mut stats);
    w.add_fallthroughs(&index, raw, &mut stats);
    let mut program = assemble(functions, w.edges, &index);
    set_frequencies(&mut program);
    stats.hot_functions = program.functions.iter().filter(|f| f.is_hot()).count();
    let stale = stale_functions(&program, w.dubious_by_function, &w.weight_by_function);
    (program, stats, stale)
}

/// The functions of `map` that have a name and lie in the section laid out, as CFG
/// nodes without edges, and each one's blocks where they lie.
fn mapped_functions(
    map: &BbAddrMap,
    names: &FxHashMap<u64, String>,
    in_text: &dyn Fn(u64) -> bool,
    stats: &mut BuildStats,
) -> (Vec<FunctionCfg>, Vec<MappedFunction>) {
    let mut layout = Vec::new();
    let mut functions = Vec::new();
    for f in &map.functions {
        let Some(name) = names.get(&f.address()) else {
            stats.unnamed_functions += 1;
            continue;
        };
        if !in_text(f.address()) {
            stats.non_text_functions += 1;
            continue;
        }
        let blocks: Vec<_> = f
            .blocks()
            .map(|(addr, b)| (addr, u64::from(b.size), b.metadata))
            .collect();
        functions.push(FunctionCfg {
            name: name.clone(),
            address: f.address(),
            nodes: f
                .blocks()
                .map(|(_, b)| Node {
                    bb_id: b.id,
                    size: u64::from(b.size),
                    freq: 0,
                    is_landing_pad: b.metadata.is_eh_pad,
                })
                .collect(),
            edges: Vec::new(),
        });
        layout.push((f.address(), blocks));
    }
    stats.functions = functions.len();
    (functions, layout)
}

/// The sampled weights between blocks (indices into the [`BlockIndex`]), and per
/// function the branch weight and the part of it that cannot come from the map.
#[derive(Default)]
struct Weights {
    edges: FxHashMap<(usize, usize), (u64, EdgeKind)>,
    fallthroughs: FxHashMap<(usize, usize), u64>,
    dubious_by_function: FxHashMap<usize, u64>,
    weight_by_function: FxHashMap<usize, u64>,
}

impl Weights {
    /// Each taken branch as an edge (call, return, or branch), with the fall-through a
    /// return to the block after a call implies.
    fn add_branches(
        &mut self,
        index: &BlockIndex,
        layout: &[MappedFunction],
        raw: &RawProfile,
        stats: &mut BuildStats,
    ) {
        let entry_of = |i: usize| layout[index.blocks[i].function].0;
        let mut branches: Vec<_> = raw.branches.iter().map(|(&k, &n)| (k, n)).collect();
        branches.sort_unstable();
        for ((from, to), weight) in branches {
            stats.branch_weight += weight;
            let Some(mut to_i) = index.find(to, Direction::To) else {
                continue;
            };
            // A record from an instruction to itself inside a block is no branch of the
            // binary (a jump to itself starts its own block); the emulated LBR under QEMU
            // records such pairs on a kernel's conditional jumps. It says nothing of the
            // map, nor of an edge.
            if from == to && index.blocks[to_i].start != to {
                stats.self_records_weight += weight;
                continue;
            }
            let from_i = (from != EXTERNAL_ADDR)
                .then(|| index.find(from, Direction::From))
                .flatten();
            let returns = |i: Option<usize>| i.is_some_and(|i| index.blocks[i].meta.has_return);
            let to_b = index.blocks[to_i];
            let is_call = entry_of(to_i) == to;
            let at_block_start = to_b.start == to;
            let other_function = from_i.is_none_or(|i| index.blocks[i].function != to_b.function);
            if (from_i.is_none() || returns(from_i) || other_function) && !is_call && at_block_start
            {
                // A return to the block after the call that ended the one before.
                if to_b.node > 0 && to_i > 0 && index.blocks[to_i - 1].function == to_b.function {
                    *self.fallthroughs.entry((to_i - 1, to_i)).or_default() += weight;
                    to_i -= 1;
                }
            }
            let Some(from_i) = from_i else { continue };
            let from_b = index.blocks[from_i];
            *self.weight_by_function.entry(to_b.function).or_default() += weight;
            if !from_b.meta.has_return && index.blocks[to_i].start != to && !is_call {
                stats.dubious_weight += weight;
                *self.dubious_by_function.entry(to_b.function).or_default() += weight;
            }
            let kind = if is_call {
                EdgeKind::Call
            } else if !at_block_start || from_b.meta.has_return {
                EdgeKind::Return
            } else {
                EdgeKind::BranchOrFallthrough
            };
            let e = self.edges.entry((from_i, to_i)).or_insert((0, kind));
            e.0 += weight;
            stats.edge_weight += weight;
        }
    }

    /// Each fall-through run (and each one a return implied) as one fall-through edge
    /// between each pair of consecutive blocks it crosses, where the run is possible.
    fn add_fallthroughs(&mut self, index: &BlockIndex, raw: &RawProfile, stats: &mut BuildStats) {
        for (&(first, last), &weight) in &raw.ranges {
            let (Some(a), Some(b)) = (
                index.find(first, Direction::To),
                index.find(last, Direction::From),
            ) else {
                continue;
            };
            *self.fallthroughs.entry((a, b)).or_default() += weight;
        }
        let mut runs: Vec<_> = std::mem::take(&mut self.fallthroughs).into_iter().collect();
        runs.sort_unstable();
        for ((a, b), weight) in runs {
            if a == b {
                continue;
            }
            if !index.can_fall_through(a, b) {
                stats.dropped_fallthrough_weight += weight;
                continue;
            }
            for i in a..b {
                let e = self
                    .edges
                    .entry((i, i + 1))
                    .or_insert((0, EdgeKind::BranchOrFallthrough));
                e.0 += weight;
            }
        }
    }
}

/// The program's CFG: branches and fall-throughs inside a function are its edges,
/// calls, returns and edges between functions the program's.
fn assemble(
    functions: Vec<FunctionCfg>,
    edges: FxHashMap<(usize, usize), (u64, EdgeKind)>,
    index: &BlockIndex,
) -> ProgramCfg {
    let mut program = ProgramCfg {
        functions,
        inter_edges: Vec::new(),
    };
    let mut sorted: Vec<_> = edges.into_iter().collect();
    sorted.sort_unstable_by_key(|&((a, b), _)| (a, b));
    let node_ref = |i: usize| NodeRef {
        function: index.blocks[i].function,
        node: index.blocks[i].node,
    };
    for ((a, b), (weight, kind)) in sorted {
        let (src, sink) = (node_ref(a), node_ref(b));
        if src.function == sink.function && kind == EdgeKind::BranchOrFallthrough {
            program.functions[src.function].edges.push(Edge {
                src: src.node,
                sink: sink.node,
                weight,
                kind,
            });
        } else {
            program.inter_edges.push(InterEdge {
                src,
                sink,
                weight,
                kind,
            });
        }
    }
    program
}

/// The stale functions (see [`is_stale`]), most dubious weight first.
fn stale_functions(
    program: &ProgramCfg,
    dubious_by_function: FxHashMap<usize, u64>,
    weight_by_function: &FxHashMap<usize, u64>,
) -> Vec<StaleFunction> {
    let mut stale: Vec<StaleFunction> = dubious_by_function
        .into_iter()
        .filter_map(|(f, dubious)| {
            let total = weight_by_function
                .get(&f)
                .copied()
                .unwrap_or(0)
                .max(dubious);
            is_stale(dubious, total).then(|| StaleFunction {
                name: program.functions[f].name.clone(),
                dubious_weight: dubious,
                branch_weight: total,
            })
        })
        .collect();
    stale.sort_by(|a, b| {
        b.dubious_weight
            .cmp(&a.dubious_weight)
            .then_with(|| a.name.cmp(&b.name))
    });
    stale
}

/// A function is stale when branches into the middle of its blocks are a third of
/// its branch weight (llvm-propeller's whole-program limit is 30 %), and not a handful.
fn is_stale(dubious: u64, total: u64) -> bool {
    dubious >= 20 && dubious * 3 >= total
}

/// Each block's count from its edges (see the module comment).
fn set_frequencies(p: &mut ProgramCfg) {
    #[derive(Default, Clone, Copy)]
    struct Sums {
        sum_in: u64,
        sum_out: u64,
        max_call_out: u64,
        max_ret_in: u64,
    }
    let mut sums: Vec<Vec<Sums>> = p
        .functions
        .iter()
        .map(|f| vec![Sums::default(); f.nodes.len()])
        .collect();
    let mut add = |src: NodeRef, sink: NodeRef, w: u64, kind: EdgeKind| {
        let s = &mut sums[src.function][src.node];
        if kind == EdgeKind::Call {
            s.max_call_out = s.max_call_out.max(w);
        } else {
            s.sum_out += w;
        }
        let d = &mut sums[sink.function][sink.node];
        if kind == EdgeKind::Return {
            d.max_ret_in = d.max_ret_in.max(w);
        } else {
            d.sum_in += w;
        }
    };
    for (fi, f) in p.functions.iter().enumerate() {
        for e in &f.edges {
            let at = |node| NodeRef { function: fi, node };
            add(at(e.src), at(e.sink), e.weight, e.kind);
        }
    }
    for e in &p.inter_edges {
        add(e.src, e.sink, e.weight, e.kind);
    }
    for (f, s) in p.functions.iter_mut().zip(sums) {
        for (n, s) in f.nodes.iter_mut().zip(s) {
            n.freq = s
                .sum_in
                .max(s.sum_out)
                .max(s.max_call_out)
                .max(s.max_ret_in);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kfdo_elf::{BbEntry, BbFeatures, BbFunction, BbRange};

    /// `f` at 0x1000: blocks [0x1000, 0x1010) and [0x1010, 0x1020), both falling through.
    fn map() -> BbAddrMap {
        let block = |id: u32, offset: u32| BbEntry {
            id,
            offset,
            size: 0x10,
            metadata: BbMetadata {
                can_fall_through: true,
                ..BbMetadata::default()
            },
            callsite_end_offsets: vec![],
            hash: None,
        };
        BbAddrMap {
            functions: vec![BbFunction {
                version: Some(2),
                features: BbFeatures::default(),
                ranges: vec![BbRange {
                    base: 0x1000,
                    blocks: vec![block(0, 0), block(1, 0x10)],
                }],
                pgo: None,
                entry_offset: 0,
            }],
        }
    }

    fn build(branches: &[((u64, u64), u64)]) -> (BuildStats, Vec<StaleFunction>) {
        let names: FxHashMap<u64, String> = [(0x1000, "f".to_string())].into_iter().collect();
        let raw = RawProfile {
            ranges: FxHashMap::default(),
            branches: branches.iter().copied().collect(),
        };
        let (_, stats, stale) = build_cfg(&map(), &names, &|_| true, &raw);
        (stats, stale)
    }

    #[test]
    fn a_record_from_an_instruction_to_itself_is_no_evidence_of_a_stale_map() {
        let (stats, stale) = build(&[((0x1004, 0x1004), 50), ((0x100c, 0x1010), 1)]);
        assert_eq!((stats.self_records_weight, stats.dubious_weight), (50, 0));
        assert!(stale.is_empty(), "{stale:?}");
        // A branch into the middle of a block still is.
        let (stats, stale) = build(&[((0x100c, 0x1014), 50)]);
        assert_eq!(stats.dubious_weight, 50);
        assert_eq!(stale.len(), 1, "{stale:?}");
    }
}
