//! Function ordering by call-chain clustering (C3: Ottoni and Maher, "Optimizing
//! function placement for large-scale data-center applications", CGO 2017), on the
//! chains ext-TSP built, as llvm-propeller's `ChainClusterBuilder` does it.
//!
//! Chains are visited by decreasing sampled weight into them; each joins, at its
//! end, the cluster that calls it the most, unless one of the two is over
//! `cluster_merge_size_threshold` bytes, the edge is cold next to its target (under
//! a tenth of its count), the caller cluster's density would fall by more than an
//! eighth, or the chain itself is nearly never run. The clusters then go by
//! decreasing density.

use std::collections::BTreeMap;

use super::super::model::EdgeKind;
use super::chain::NONE;
use super::graph::Graph;
use super::merge::BuiltChain;
use super::params::LayoutParams;

/// Edges under 1/10 of their target block's count are not a reason to cluster.
const HOT_EDGE_RELATIVE_FREQUENCY: u64 = 10;
/// Merging may cost the caller's cluster at most 1/8 of its density.
const DENSITY_DEGRADATION: u128 = 8;
/// Chains this sparse are left where they are.
const MIN_CHAIN_DENSITY: f64 = 0.005;

struct Cluster {
    /// The ID of its first chain.
    id: u32,
    chains: Vec<usize>,
    size: u64,
    freq: u64,
    alive: bool,
}

impl Cluster {
    fn density(&self) -> f64 {
        self.freq as f64 / self.size.max(1) as f64
    }
}

/// The chains grouped into clusters, in layout order (chain indices into `chains`).
pub(crate) fn clusters(g: &Graph, params: &LayoutParams, chains: &[BuiltChain]) -> Vec<Vec<usize>> {
    let mut cl: Vec<Cluster> = chains
        .iter()
        .enumerate()
        .map(|(i, c)| Cluster {
            id: c.id,
            chains: vec![i],
            size: c.size as u64,
            freq: c.freq,
            alive: true,
        })
        .collect();
    if !params.call_chain_clustering {
        let mut order: Vec<usize> = (0..cl.len()).collect();
        order.sort_by_key(|&i| cl[i].id);
        return order.into_iter().map(|i| cl[i].chains.clone()).collect();
    }
    let mut chain_of = vec![NONE; g.nodes()];
    for (i, c) in chains.iter().enumerate() {
        for n in c.nodes() {
            chain_of[n as usize] = i as u32;
        }
    }
    let mut cluster_of: Vec<usize> = (0..chains.len()).collect();

    // Sampled weight into each chain from other chains, returns left out.
    let mut weight_to: Vec<(u64, usize)> = Vec::new();
    for (i, c) in chains.iter().enumerate() {
        let mut w = 0u64;
        for n in c.nodes() {
            for &e in g.ins(n) {
                let e = &g.edges[e as usize];
                let from = chain_of[e.src as usize];
                if e.weight == 0 || e.kind == EdgeKind::Return || from == NONE || from == i as u32 {
                    continue;
                }
                w += e.weight;
            }
        }
        if w != 0 {
            weight_to.push((w, i));
        }
    }
    weight_to.sort_by(|a, b| b.0.cmp(&a.0).then(chains[a.1].id.cmp(&chains[b.1].id)));

    let threshold = params.cluster_merge_size_threshold;
    for &(_, i) in &weight_to {
        let chain = &chains[i];
        if chain.density() < MIN_CHAIN_DENSITY {
            continue;
        }
        let c = cluster_of[i];
        if cl[c].size > threshold {
            continue;
        }
        // Without inter-function reordering a chain is a function and is entered at
        // its entry, its first block; otherwise any of its blocks may be.
        let first = chain.bundles[0][0];
        let targets: Vec<u32> = if params.inter_function_reordering {
            chain.nodes().collect()
        } else {
            vec![first]
        };
        let mut weight_from: BTreeMap<usize, u64> = BTreeMap::new();
        for n in targets {
            for &e in g.ins(n) {
                let e = &g.edges[e as usize];
                if e.kind == EdgeKind::Return
                    || e.weight == 0
                    || e.weight.saturating_mul(HOT_EDGE_RELATIVE_FREQUENCY)
                        < g.freq[e.sink as usize]
                {
                    continue;
                }
                let from = chain_of[e.src as usize];
                if from == NONE || from == i as u32 {
                    continue;
                }
                let p = cluster_of[from as usize];
                if p == c || cl[p].size > threshold {
                    continue;
                }
                let (ps, pf) = (cl[p].size as u128, cl[p].freq as u128);
                let (cs, cf) = (cl[c].size as u128, cl[c].freq as u128);
                if DENSITY_DEGRADATION * ps * (cf + pf) < pf * (cs + ps) {
                    continue;
                }
                *weight_from.entry(p).or_default() += e.weight;
            }
        }
        // The heaviest caller; on a tie, the one with the greater ID.
        let Some((&best, _)) = weight_from
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(cl[*a.0].id.cmp(&cl[*b.0].id)))
        else {
            continue;
        };
        let moved = std::mem::take(&mut cl[c].chains);
        for &m in &moved {
            cluster_of[m] = best;
        }
        let (size, freq) = (cl[c].size, cl[c].freq);
        cl[c].alive = false;
        let b = &mut cl[best];
        b.chains.extend(moved);
        b.size += size;
        b.freq += freq;
    }

    let mut order: Vec<usize> = (0..cl.len()).filter(|&i| cl[i].alive).collect();
    order.sort_by(|&a, &b| {
        cl[b]
            .density()
            .total_cmp(&cl[a].density())
            .then(cl[a].id.cmp(&cl[b].id))
    });
    order.into_iter().map(|i| cl[i].chains.clone()).collect()
}
