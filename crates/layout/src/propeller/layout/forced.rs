//! Forced fall-through paths (llvm-propeller's `GetForcedPaths`): an edge that is
//! its source's only sampled way out and its sink's only sampled way in must become
//! a fall-through in any good layout, so runs of such edges are bundled before
//! ext-TSP starts. Cycles of them (loops that never exit in the samples) are cut at
//! the edge into the block with the lowest index, most likely the loop's back edge.

use std::collections::BTreeMap;

use super::super::model::EdgeKind;
use super::graph::Graph;

/// Edges that are their source's only hot out-edge and their sink's only hot in-edge
/// among function `f`'s branches, as source -> sink (global numbers). With
/// `keep_entry_first`, edges into the entry are left out, so the entry starts its
/// path (llvm-propeller keeps them; then the entry may end up inside a bundle).
pub(crate) fn forced_edges(g: &Graph, f: usize, keep_entry_first: bool) -> BTreeMap<u32, u32> {
    let blocks = g.blocks(f);
    let mut next: BTreeMap<u32, Option<u32>> = BTreeMap::new();
    let mut in_degree: BTreeMap<u32, u32> = BTreeMap::new();
    for n in blocks.clone() {
        for &e in g.outs(n) {
            let e = &g.edges[e as usize];
            if e.weight == 0 || e.kind != EdgeKind::BranchOrFallthrough || !blocks.contains(&e.sink)
            {
                continue;
            }
            next.entry(e.src)
                .and_modify(|s| *s = None)
                .or_insert(Some(e.sink));
            *in_degree.entry(e.sink).or_default() += 1;
        }
    }
    next.into_iter()
        .filter_map(|(src, sink)| {
            let sink = sink?;
            (in_degree[&sink] == 1 && !(keep_entry_first && g.is_entry(sink)))
                .then_some((src, sink))
        })
        .collect()
}

/// Cuts every cycle of `next` at the edge whose sink has the lowest number.
pub(crate) fn break_cycles(next: &mut BTreeMap<u32, u32>) {
    let mut path_of: BTreeMap<u32, u32> = BTreeMap::new();
    let mut cuts = Vec::new();
    let mut path = 0u32;
    for &start in next.keys() {
        if path_of.contains_key(&start) {
            continue;
        }
        path += 1;
        let mut victim: Option<u32> = None;
        let mut at = Some(start);
        while let Some(n) = at {
            let Some(&sink) = next.get(&n) else {
                break;
            };
            if let Some(&p) = path_of.get(&n) {
                if p == path {
                    cuts.push(victim.expect("a cycle has an edge"));
                }
                break;
            }
            path_of.insert(n, path);
            if victim.is_none_or(|v| sink < next[&v]) {
                victim = Some(n);
            }
            at = Some(sink);
        }
    }
    for c in cuts {
        next.remove(&c);
    }
}

/// The forced paths of function `f`, each with more than one block, in the order of
/// their first block.
pub(crate) fn forced_paths(g: &Graph, f: usize, keep_entry_first: bool) -> Vec<Vec<u32>> {
    let mut next = forced_edges(g, f, keep_entry_first);
    break_cycles(&mut next);
    let sinks: std::collections::BTreeSet<u32> = next.values().copied().collect();
    next.keys()
        .filter(|n| !sinks.contains(n))
        .map(|&begin| {
            let mut path = vec![begin];
            let mut at = begin;
            while let Some(&sink) = next.get(&at) {
                path.push(sink);
                at = sink;
            }
            path
        })
        .collect()
}
