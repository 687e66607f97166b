//! Ext-TSP chain building (llvm-propeller's `NodeChainBuilder`): start from one
//! chain per hot block (or per forced path), keep the best merge of every pair of
//! chains that share an edge in a priority structure, apply the best one, re-score
//! the pairs the merged chain is in, and stop when no merge gains. With one function
//! the remaining chains are then joined: the entry's chain first, the others by
//! decreasing density.
//!
//! The best merge of a pair tries SU and, with chain splitting, cuts of the split
//! chain: at every bundle boundary when it has at most `chain_split_threshold`
//! bundles, else only where a cut turns a shared edge into a fall-through (after the
//! unsplit chain's last block, before its first).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

use super::super::model::EdgeKind;
use super::assembly::{self, Reject};
use super::chain::ChainSet;
use super::forced::forced_paths;
use super::graph::{GEdge, Graph};
use super::merge_order::{Assembly, MergeOrder, SPLIT_ORDERS};
use super::params::LayoutParams;

/// Initial chains a caller asks for: by function index, lists of block indices.
pub(crate) type InitialChains = BTreeMap<usize, Vec<Vec<usize>>>;

/// An assembly in the queue, ordered so that the greatest is the best: highest
/// gain, then lowest split chain ID, lowest unsplit chain ID, latest merge order,
/// latest cut (llvm-propeller's `NodeChainAssemblyComparator`).
#[derive(Clone, Copy, Debug)]
struct Key {
    a: Assembly,
    split_id: u32,
    unsplit_id: u32,
}

impl Ord for Key {
    fn cmp(&self, o: &Self) -> Ordering {
        self.a
            .gain
            .total_cmp(&o.a.gain)
            .then(o.split_id.cmp(&self.split_id))
            .then(o.unsplit_id.cmp(&self.unsplit_id))
            .then(self.a.order.cmp(&o.a.order))
            .then(self.a.pos.cmp(&o.a.pos))
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Key {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Key {}

/// The best assembly of each (split, unsplit) pair, best first.
#[derive(Default)]
struct Queue {
    set: BTreeSet<Key>,
    by_pair: FxHashMap<(u32, u32), Key>,
}

impl Queue {
    fn insert(&mut self, k: Key) {
        if let Some(old) = self.by_pair.insert((k.a.split, k.a.unsplit), k) {
            self.set.remove(&old);
        }
        self.set.insert(k);
    }

    fn remove(&mut self, split: u32, unsplit: u32) {
        if let Some(old) = self.by_pair.remove(&(split, unsplit)) {
            self.set.remove(&old);
        }
    }

    fn best(&self) -> Option<Assembly> {
        self.set.last().map(|k| k.a)
    }
}

/// A built chain: its blocks (global numbers) in bundles.
#[derive(Clone, Debug)]
pub(crate) struct BuiltChain {
    pub id: u32,
    pub bundles: Vec<Vec<u32>>,
    pub size: i64,
    pub freq: u64,
}

impl BuiltChain {
    pub fn nodes(&self) -> impl Iterator<Item = u32> + '_ {
        self.bundles.iter().flatten().copied()
    }

    pub fn density(&self) -> f64 {
        self.freq as f64 / self.size.max(1) as f64
    }
}

pub(crate) struct Builder<'g, 'p> {
    g: &'g Graph<'g>,
    params: &'p LayoutParams,
    /// Several functions at once: calls join chains, nothing is coalesced.
    multi: bool,
    pub cs: ChainSet,
    queue: Queue,
    /// Scratch list of the cuts to try.
    tries: Vec<(u32, MergeOrder)>,
}

impl<'g, 'p> Builder<'g, 'p> {
    /// Chains for the hot blocks of `functions` (one function, or, for
    /// inter-function reordering, several), with their edges and scores.
    pub fn new(
        g: &'g Graph<'g>,
        params: &'p LayoutParams,
        functions: &[usize],
        initial: &InitialChains,
    ) -> Self {
        let multi = functions.len() > 1;
        let cs = if multi {
            ChainSet::new(0, g.nodes())
        } else {
            let r = g.blocks(functions[0]);
            ChainSet::new(r.start, r.len())
        };
        let mut b = Builder {
            g,
            params,
            multi,
            cs,
            queue: Queue::default(),
            tries: Vec::new(),
        };
        for &f in functions {
            b.init_function(f, initial);
        }
        b.init_edges();
        b
    }

    /// llvm-propeller's `InitNodeChains` for one function.
    fn init_function(&mut self, f: usize, initial: &InitialChains) {
        let (g, params) = (self.g, self.params);
        if !g.is_hot(f) {
            return;
        }
        let hot_pads = g.has_hot_landing_pads(f);
        // All landing pads of a function must share a section: lay such a function
        // out on its own and keep its order whole.
        if params.inter_function_reordering && self.multi && hot_pads && g.landing_pads(f) > 1 {
            let mut own = InitialChains::new();
            if let Some(c) = initial.get(&f) {
                own.insert(f, c.clone());
            }
            for chain in Builder::new(g, params, &[f], &own).run() {
                let nodes: Vec<u32> = chain.nodes().collect();
                self.cs.add_chain(g, &nodes, true);
            }
            return;
        }
        // The entry counts as hot even when its own count is zero, so that every hot
        // function's layout starts with it (llvm-propeller does so unless
        // inter-function reordering is on). Cold landing pads are hot when a
        // hot one exists, so that all of them stay in the hot part.
        let (hot, cold): (Vec<u32>, Vec<u32>) = g.blocks(f).partition(|&n| {
            g.freq[n as usize] != 0 || g.is_entry(n) || (g.landing_pad[n as usize] && hot_pads)
        });
        if !params.split_functions && !cold.is_empty() {
            self.cs.add_chain(g, &cold, true);
        }
        if !params.reorder_hot_blocks {
            self.cs.add_chain(g, &hot, true);
            return;
        }
        match initial.get(&f).filter(|c| !c.is_empty()) {
            Some(chains) => {
                for c in chains.iter().filter(|c| !c.is_empty()) {
                    let len = g.blocks(f).len();
                    let nodes: Vec<u32> = c
                        .iter()
                        .map(|&n| {
                            assert!(
                                n < len,
                                "initial chain names block {n} of a {len}-block function"
                            );
                            g.base[f] + n as u32
                        })
                        .collect();
                    self.cs.add_chain(g, &nodes, false);
                }
            }
            None => {
                for path in forced_paths(g, f, !params.inter_function_reordering) {
                    self.cs.add_chain(g, &path, true);
                }
            }
        }
        for n in hot {
            if self.cs.slot(n).is_none() {
                self.cs.add_chain(g, &[n], false);
            }
        }
    }

    /// Whether an edge can bring two chains together: sampled, not a return, and a
    /// call only when whole-program reordering puts functions in one chain.
    fn joins(&self, e: &GEdge) -> bool {
        e.weight != 0
            && e.kind != EdgeKind::Return
            && ((self.params.inter_function_reordering && self.multi) || e.kind != EdgeKind::Call)
    }

    /// llvm-propeller's `InitChainEdges`, and each chain's score.
    fn init_edges(&mut self) {
        let g = self.g;
        for c in 0..self.cs.chains.len() as u32 {
            for bi in 0..self.cs.chains[c as usize].bundles.len() {
                let b = self.cs.chains[c as usize].bundles[bi];
                for ni in 0..self.cs.bundles[b as usize].nodes.len() {
                    let n = self.cs.bundles[b as usize].nodes[ni];
                    for &e in g.outs(n) {
                        let ge = &g.edges[e as usize];
                        if !self.joins(ge) {
                            continue;
                        }
                        let Some(t) = self.cs.slot(ge.sink) else {
                            continue;
                        };
                        if t.bundle == b {
                            continue;
                        }
                        let to = self.cs.bundles[t.bundle as usize].chain;
                        if to == c {
                            self.cs.chains[c as usize].intra.push(e);
                        } else {
                            self.cs.chains[c as usize]
                                .out
                                .entry(to)
                                .or_default()
                                .push(e);
                            self.cs.chains[to as usize].inn.insert(c);
                        }
                    }
                }
            }
        }
        for c in 0..self.cs.chains.len() as u32 {
            let score: f64 = self.cs.chains[c as usize]
                .intra
                .iter()
                .map(|&e| self.cs.score_in_chain(g, self.params, e))
                .sum();
            self.cs.chains[c as usize].score = score;
            if self.params.chain_split {
                self.cs.refresh_inner(g, self.params, c);
            }
        }
    }

    fn key(&self, a: Assembly) -> Key {
        Key {
            a,
            split_id: self.cs.chains[a.split as usize].id,
            unsplit_id: self.cs.chains[a.unsplit as usize].id,
        }
    }

    pub fn assembly(
        &self,
        split: u32,
        unsplit: u32,
        order: MergeOrder,
        pos: u32,
        allow_zero: bool,
    ) -> Result<Assembly, Reject> {
        assembly::build(
            &self.cs,
            self.g,
            self.params,
            split,
            unsplit,
            order,
            pos,
            allow_zero,
        )
    }

    /// llvm-propeller's `UpdateNodeChainAssembly`: the best assembly of the pair.
    fn update(&mut self, split: u32, unsplit: u32) {
        let (g, params) = (self.g, self.params);
        let mut best: Option<Key> = self
            .assembly(split, unsplit, MergeOrder::SU, 0, false)
            .ok()
            .map(|a| self.key(a));
        if params.chain_split {
            let n = self.cs.chains[split as usize].bundles.len() as u32;
            let mut tries = std::mem::take(&mut self.tries);
            tries.clear();
            if n as u64 <= params.chain_split_threshold as u64 {
                for order in SPLIT_ORDERS {
                    tries.extend((1..n).map(|pos| (pos, order)));
                }
            } else {
                // Cuts that let the unsplit chain fall through into S2, or S1 fall
                // through into the unsplit chain.
                for &e in g.outs(self.cs.last_node(unsplit)) {
                    let ge = &g.edges[e as usize];
                    if let Some(b) = self.bundle_starting(ge, split, ge.sink, true) {
                        tries.push((b, MergeOrder::S1US2));
                        tries.push((b, MergeOrder::US2S1));
                    }
                }
                for &e in g.ins(self.cs.first_node(unsplit)) {
                    let ge = &g.edges[e as usize];
                    if let Some(b) = self.bundle_starting(ge, split, ge.src, false) {
                        tries.push((b + 1, MergeOrder::S1US2));
                        tries.push((b + 1, MergeOrder::S2S1U));
                    }
                }
                tries.retain(|&(pos, _)| pos != 0 && pos != n);
            }
            for &(pos, order) in &tries {
                if let Ok(a) = self.assembly(split, unsplit, order, pos, false) {
                    let k = self.key(a);
                    if best.is_none_or(|b| b < k) {
                        best = Some(k);
                    }
                }
            }
            self.tries = tries;
        }
        match best {
            Some(k) => self.queue.insert(k),
            None => self.queue.remove(split, unsplit),
        }
    }

    /// The index of the bundle of chain `chain` that `n` starts (`first`) or ends,
    /// when edge `e` may join chains.
    fn bundle_starting(&self, e: &GEdge, chain: u32, n: u32, first: bool) -> Option<u32> {
        if !self.joins(e) {
            return None;
        }
        let s = self.cs.slot(n)?;
        let b = &self.cs.bundles[s.bundle as usize];
        let end = if first {
            b.nodes.first()
        } else {
            b.nodes.last()
        };
        (b.chain == chain && end == Some(&n)).then_some(b.index)
    }

    pub fn init_assemblies(&mut self) {
        for c in 0..self.cs.chains.len() as u32 {
            for o in self.cs.neighbors(c) {
                self.update(c, o);
            }
        }
    }

    /// Whether merging these chains bundles runs of one function's blocks.
    fn rebundles(&self, a: &Assembly) -> bool {
        let (s, u) = (
            &self.cs.chains[a.split as usize],
            &self.cs.chains[a.unsplit as usize],
        );
        (s.function.is_none() || s.function != u.function)
            && self.params.chain_split
            && (s.bundles.len() + u.bundles.len()) as u64 > self.params.chain_split_threshold as u64
    }

    /// Applies `a` and re-scores the pairs the merged chain is in.
    pub fn merge(&mut self, a: Assembly) {
        let gone = self.cs.neighbors(a.unsplit);
        let rebundle = self.rebundles(&a);
        self.cs.merge(self.g, self.params, &a, rebundle);
        for x in gone {
            self.queue.remove(a.unsplit, x);
            self.queue.remove(x, a.unsplit);
        }
        for x in self.cs.neighbors(a.split) {
            self.update(a.split, x);
            self.update(x, a.split);
        }
    }

    /// Appends chain `right` to chain `left` whatever it gains (no queue update: the
    /// queue is done with by then).
    pub fn append(&mut self, left: u32, right: u32) {
        let gain = assembly::gain(
            &self.cs,
            self.g,
            self.params,
            left,
            right,
            MergeOrder::SU,
            0,
        );
        let a = Assembly {
            split: left,
            unsplit: right,
            order: MergeOrder::SU,
            pos: 0,
            gain,
        };
        let rebundle = self.rebundles(&a);
        self.cs.merge(self.g, self.params, &a, rebundle);
    }

    /// Joins all chains: the one that starts with an entry first, the rest by
    /// decreasing density, then ID (llvm-propeller's `CoalesceChains`).
    fn coalesce(&mut self) {
        let g = self.g;
        let mut order: Vec<u32> = (0..self.cs.chains.len() as u32)
            .filter(|&c| self.cs.chains[c as usize].alive)
            .collect();
        order.sort_by(|&a, &b| {
            let (ca, cb) = (&self.cs.chains[a as usize], &self.cs.chains[b as usize]);
            let (ea, eb) = (
                g.is_entry(self.cs.first_node(a)),
                g.is_entry(self.cs.first_node(b)),
            );
            eb.cmp(&ea)
                .then(cb.density().total_cmp(&ca.density()))
                .then(ca.id.cmp(&cb.id))
        });
        if let Some((&first, rest)) = order.split_first() {
            for &c in rest {
                self.append(first, c);
            }
        }
    }

    /// Merges until nothing gains; coalesces a single function's chains.
    pub fn run(mut self) -> Vec<BuiltChain> {
        self.init_assemblies();
        while let Some(a) = self.queue.best() {
            self.merge(a);
        }
        if !self.multi {
            self.coalesce();
        }
        self.chains()
    }

    /// The live chains, by ID.
    pub fn chains(&self) -> Vec<BuiltChain> {
        let mut out: Vec<BuiltChain> = self
            .cs
            .chains
            .iter()
            .filter(|c| c.alive)
            .map(|c| BuiltChain {
                id: c.id,
                bundles: c
                    .bundles
                    .iter()
                    .map(|&b| self.cs.bundles[b as usize].nodes.clone())
                    .collect(),
                size: c.size,
                freq: c.freq,
            })
            .collect();
        out.sort_by_key(|c| c.id);
        out
    }

    /// Whether the queue has a merge left.
    #[cfg(test)]
    pub fn queue_best(&self) -> Option<Assembly> {
        self.queue.best()
    }
}
