//! Propeller's code layout, as google/llvm-propeller (`CodeLayout::OrderAll`) does it:
//!
//! 1. per hot function, an ext-TSP order of its hot blocks: forced fall-through paths
//!    are bundled (`forced`), then chains are merged greedily by score gain, one
//!    chain possibly cut in two to take the other in between (`merge`, `assembly`,
//!    `chain`); the entry block stays first; the chains left are joined by
//!    decreasing density;
//! 2. blocks that never ran go to the function's cold part (unless
//!    [`LayoutParams::split_functions`] is off);
//! 3. functions are ordered by call-chain clustering (`c3`).
//!
//! With [`LayoutParams::inter_function_reordering`], step 1 runs on the whole program
//! at once, calls join chains too, and a function's hot blocks may end up in several
//! clusters (only the first starts with the entry).
//!
//! The score ([`score`]) and the parameters' defaults are llvm-propeller's, not LLVM
//! `CodeLayout.cpp`'s (a fall-through 1.0, or 1.05 when unconditional, a jump 0.1,
//! fading over 1024 bytes forwards and 640 backwards): here a fall-through weighs
//! 10, a jump 1, fading to nothing over 1024 bytes forwards and 680 backwards.
//!
//! Where it differs from llvm-propeller:
//!
//! * a hot function's entry block counts as hot even with inter-function reordering
//!   (llvm-propeller only assumes so without it), and without it a forced
//!   fall-through into the entry (a loop at the top of a function that never exits
//!   in the samples) is not bundled, so `clusters[0]` always starts with the entry;
//! * all functions form one section (llvm-propeller lays out each output section on
//!   its own; the model has no sections);
//! * a function is hot when a block has a count (llvm-propeller: when it has any
//!   edge, even one never taken);
//! * the original layout's score is that of the blocks in index order from the
//!   function's address (llvm-propeller uses the blocks' addresses);
//! * a block's count is the larger of [`Node::freq`](super::model::Node::freq) and
//!   the count llvm-propeller derives from its edges (the same, for CFGs from
//!   `build`);
//! * functions are laid out on all CPUs at once, with rayon (the result does not change).
//!
//! Deterministic: every tie is broken by block, chain or function numbers.

mod assembly;
mod c3;
mod chain;
mod forced;
mod graph;
mod merge;
mod merge_order;
mod params;
pub mod score;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use super::model::{FunctionLayout, NodeRef, ProgramCfg, ProgramLayout};
use graph::Graph;
use merge::{Builder, BuiltChain, InitialChains};

pub use params::LayoutParams;
pub use score::{
    edge_score, intra_score, layout_addresses, original_addresses, program_scores, CfgScore,
};

/// The layout of `cfg`'s hot functions.
pub fn code_layout(cfg: &ProgramCfg, params: &LayoutParams) -> ProgramLayout {
    code_layout_with_initial_chains(cfg, params, &BTreeMap::new())
}

/// [`code_layout`], starting from the given chains instead of the forced paths:
/// `initial[f]` lists runs of block indices of function `f` to start as chains
/// (merges may still cut them when chain splitting is on).
///
/// # Panics
/// When a block is in two initial chains, or an index is out of range.
pub fn code_layout_with_initial_chains(
    cfg: &ProgramCfg,
    params: &LayoutParams,
    initial: &BTreeMap<usize, Vec<Vec<usize>>>,
) -> ProgramLayout {
    let g = Graph::new(cfg);
    let all: Vec<usize> = (0..cfg.functions.len()).collect();
    let chains = chains_of(&g, params, &all, initial);
    let clusters = c3::clusters(&g, params, &chains);
    program_layout(&g, params, &chains, &clusters)
}

/// The chains ext-TSP builds (before clustering) for `functions`, by chain ID, each
/// as its bundles of blocks: one chain per function, or with inter-function
/// reordering the chains of all of `functions` together.
pub fn build_chains(
    cfg: &ProgramCfg,
    params: &LayoutParams,
    functions: &[usize],
) -> Vec<Vec<Vec<NodeRef>>> {
    let g = Graph::new(cfg);
    chains_of(&g, params, functions, &BTreeMap::new())
        .iter()
        .map(|c| {
            c.bundles
                .iter()
                .map(|b| b.iter().map(|&n| node_ref(&g, n)).collect())
                .collect()
        })
        .collect()
}

fn node_ref(g: &Graph, n: u32) -> NodeRef {
    let function = g.func_of[n as usize] as usize;
    NodeRef {
        function,
        node: (n - g.base[function]) as usize,
    }
}

fn chains_of(
    g: &Graph,
    params: &LayoutParams,
    functions: &[usize],
    initial: &InitialChains,
) -> Vec<BuiltChain> {
    if functions.is_empty() {
        return Vec::new();
    }
    if params.inter_function_reordering {
        return Builder::new(g, params, functions, initial).run();
    }
    let hot: Vec<usize> = functions.iter().copied().filter(|&f| g.is_hot(f)).collect();
    // Functions are independent: rayon shares them out and `collect` keeps them in
    // function order, so the threads change nothing but the time.
    use rayon::prelude::*;
    hot.par_iter()
        .map(|&f| Builder::new(g, params, &[f], initial).run())
        .collect::<Vec<_>>()
        .into_iter()
        .flatten()
        .collect()
}

/// Cuts the clustered chains into each function's clusters (a new one wherever the
/// function changes or its entry comes), in layout order, and scores the result.
fn program_layout(
    g: &Graph,
    params: &LayoutParams,
    chains: &[BuiltChain],
    clusters: &[Vec<usize>],
) -> ProgramLayout {
    let cfg = g.cfg;
    // Per function with hot blocks: its clusters as (layout position, blocks).
    let mut per_function: BTreeMap<usize, Vec<(usize, Vec<u32>)>> = BTreeMap::new();
    let mut placed = 0usize;
    let mut current: Option<usize> = None;
    let mut new_addr: Vec<Option<i64>> = vec![None; g.nodes()];
    let mut at = 0i64;
    for n in clusters.iter().flatten().flat_map(|&c| chains[c].nodes()) {
        let f = g.func_of[n as usize] as usize;
        if current != Some(f) || g.is_entry(n) {
            current = Some(f);
            per_function
                .entry(f)
                .or_default()
                .push((placed, Vec::new()));
            placed += 1;
        }
        let list = per_function.get_mut(&f).expect("just made");
        list.last_mut().expect("just made").1.push(n);
        new_addr[n as usize] = Some(at);
        at += g.size[n as usize];
    }

    let original = original_addresses(cfg);
    let before = program_scores(cfg, params, |r| original[r.function][r.node]);
    let after = program_scores(cfg, params, |r| {
        new_addr[(g.base[r.function] + r.node as u32) as usize]
    });

    let mut order: Vec<(usize, usize)> = vec![(0, 0); placed];
    let mut functions = Vec::with_capacity(per_function.len());
    for (li, (f, mut parts)) in per_function.into_iter().enumerate() {
        let func = &cfg.functions[f];
        // The entry's cluster first, the others by their first block's ID.
        let bb = |n: u32| func.nodes[(n - g.base[f]) as usize].bb_id;
        parts.sort_by_key(|(_, nodes)| (!g.is_entry(nodes[0]), bb(nodes[0])));
        for (ci, (pos, _)) in parts.iter().enumerate() {
            order[*pos] = (li, ci);
        }
        let cold = g
            .blocks(f)
            .filter(|&n| new_addr[n as usize].is_none())
            .map(bb)
            .collect();
        functions.push(FunctionLayout {
            function: f,
            clusters: parts
                .into_iter()
                .map(|(_, nodes)| nodes.into_iter().map(bb).collect())
                .collect(),
            cold,
            intra_score_before: before[f].intra,
            intra_score_after: after[f].intra,
        });
    }
    ProgramLayout { functions, order }
}
