//! The extended-TSP score of a layout (Newell and Pupyrev, "Improved basic block
//! reordering", IEEE TC 2020), as llvm-propeller computes it: each sampled edge earns
//! its weight times a factor that is largest for a fall-through and falls linearly to
//! zero with the jump's length, forwards and backwards separately. The layout
//! maximises the sum; the same sum rates the original and the new order.

use rustc_hash::FxHashMap;

use super::super::model::{EdgeKind, FunctionCfg, NodeRef, ProgramCfg, ProgramLayout};
use super::params::LayoutParams;

/// One edge's score when its sink starts `distance` bytes after its source block ends
/// (negative: before). A call counts from the middle of its block, a return lands in
/// the middle of its block (halves round down), and only a branch can fall through.
pub fn edge_score(
    params: &LayoutParams,
    kind: EdgeKind,
    weight: u64,
    src_size: u64,
    sink_size: u64,
    distance: i64,
) -> f64 {
    let mut d = distance;
    if kind == EdgeKind::Call {
        d += (src_size / 2) as i64;
    }
    if kind == EdgeKind::Return {
        d += (sink_size / 2) as i64;
    }
    let w = weight as f64;
    if d == 0 && kind == EdgeKind::BranchOrFallthrough {
        return w * params.fallthrough_weight;
    }
    let a = d.unsigned_abs() as f64;
    if d > 0 && a < params.forward_jump_distance {
        return w * params.forward_jump_weight * (1.0 - a / params.forward_jump_distance);
    }
    if d < 0 && a < params.backward_jump_distance {
        return w * params.backward_jump_weight * (1.0 - a / params.backward_jump_distance);
    }
    0.0
}

/// The score of `f`'s own edges ([`FunctionCfg::edges`]) with the blocks of `order`
/// (node indices) laid out back to back in that order. Edges to blocks not in
/// `order` are left out (they sit in another section); so are returns, as
/// llvm-propeller leaves them out.
pub fn intra_score(f: &FunctionCfg, order: &[usize], params: &LayoutParams) -> f64 {
    let mut addr = vec![None; f.nodes.len()];
    let mut at = 0i64;
    for &n in order {
        addr[n] = Some(at);
        at += f.nodes[n].size as i64;
    }
    f.edges
        .iter()
        .filter(|e| e.weight != 0 && e.kind != EdgeKind::Return)
        .filter_map(|e| {
            let (s, t) = (addr[e.src]?, addr[e.sink]?);
            let (src, sink) = (&f.nodes[e.src], &f.nodes[e.sink]);
            let d = t - s - src.size as i64;
            Some(edge_score(params, e.kind, e.weight, src.size, sink.size, d))
        })
        .sum()
}

/// A function's score in some layout: its intra-function edges (recursive calls
/// included), and the calls out of it (llvm-propeller's `CFGScore`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CfgScore {
    pub intra: f64,
    pub inter_out: f64,
}

/// Every function's [`CfgScore`] with the blocks at `addr` (`None`: not placed; its
/// edges do not count). Returns are left out, as llvm-propeller does.
pub fn program_scores(
    cfg: &ProgramCfg,
    params: &LayoutParams,
    addr: impl Fn(NodeRef) -> Option<i64>,
) -> Vec<CfgScore> {
    let mut out = vec![CfgScore::default(); cfg.functions.len()];
    let mut add = |src: NodeRef, sink: NodeRef, weight: u64, kind: EdgeKind| {
        if weight == 0 || kind == EdgeKind::Return {
            return;
        }
        let (Some(s), Some(t)) = (addr(src), addr(sink)) else {
            return;
        };
        let src_size = cfg.functions[src.function].nodes[src.node].size;
        let sink_size = cfg.functions[sink.function].nodes[sink.node].size;
        let score = edge_score(
            params,
            kind,
            weight,
            src_size,
            sink_size,
            t - s - src_size as i64,
        );
        let o = &mut out[src.function];
        if src.function == sink.function {
            o.intra += score;
        } else {
            o.inter_out += score;
        }
    };
    for (fi, f) in cfg.functions.iter().enumerate() {
        for e in &f.edges {
            let at = |node| NodeRef { function: fi, node };
            add(at(e.src), at(e.sink), e.weight, e.kind);
        }
    }
    for e in &cfg.inter_edges {
        add(e.src, e.sink, e.weight, e.kind);
    }
    out
}

/// Each block's address in the binary the CFG describes: its function's address plus
/// the sizes of the blocks before it.
pub fn original_addresses(cfg: &ProgramCfg) -> Vec<Vec<Option<i64>>> {
    cfg.functions
        .iter()
        .map(|f| {
            let mut at = f.address as i64;
            f.nodes
                .iter()
                .map(|n| {
                    let a = at;
                    at += n.size as i64;
                    Some(a)
                })
                .collect()
        })
        .collect()
}

/// Each block's offset in the new layout's hot code: the hot clusters back to back in
/// [`ProgramLayout::order`] from 0. Cold blocks get `None`.
pub fn layout_addresses(cfg: &ProgramCfg, layout: &ProgramLayout) -> Vec<Vec<Option<i64>>> {
    let mut out: Vec<Vec<Option<i64>>> = cfg
        .functions
        .iter()
        .map(|f| vec![None; f.nodes.len()])
        .collect();
    // Clusters name blocks by BB ID; map them back to node indices per function.
    let by_id: Vec<FxHashMap<u32, usize>> = layout
        .functions
        .iter()
        .map(|fl| {
            let f = &cfg.functions[fl.function];
            f.nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (n.bb_id, i))
                .collect()
        })
        .collect();
    let mut at = 0i64;
    for &(li, c) in &layout.order {
        let fl = &layout.functions[li];
        let f = &cfg.functions[fl.function];
        for id in &fl.clusters[c] {
            if let Some(&n) = by_id[li].get(id) {
                out[fl.function][n] = Some(at);
                at += f.nodes[n].size as i64;
            }
        }
    }
    out
}
