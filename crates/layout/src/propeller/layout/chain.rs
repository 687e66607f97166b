//! Chains of blocks, the units ext-TSP merges. A chain is an ordered list of bundles,
//! a bundle an ordered run of blocks that no merge may cut (a forced fall-through
//! path, or the blocks llvm-propeller keeps together); merging two chains may cut
//! the one chain between two of its bundles and put the other in the gap (see
//! `assembly`). Each chain keeps the sampled edges it shares with each other chain,
//! and its own edges between its bundles, so a merge is scored from those alone.

use std::collections::{BTreeMap, BTreeSet};

use super::graph::Graph;
use super::merge_order::{Assembly, MergeOrder};
use super::params::LayoutParams;
use super::score::edge_score;

pub(crate) const NONE: u32 = u32::MAX;

/// Where a block is: its bundle and its byte offset in it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    pub bundle: u32,
    pub offset: i64,
}

const FREE: Slot = Slot {
    bundle: NONE,
    offset: 0,
};

pub(crate) struct Bundle {
    /// Global block numbers, in order.
    pub nodes: Vec<u32>,
    pub size: i64,
    pub freq: u64,
    pub chain: u32,
    /// Position in its chain's bundle list, and byte offset in the chain.
    pub index: u32,
    pub offset: i64,
}

/// An edge between two bundles of one chain, where they are now; a split's score
/// change comes from these alone.
#[derive(Clone, Copy)]
pub(crate) struct Inner {
    pub edge: u32,
    pub src_bundle: u32,
    pub sink_bundle: u32,
    pub src_offset: i64,
    pub sink_offset: i64,
    /// Its score in the chain as it is.
    pub score: f64,
}

pub(crate) struct Chain {
    /// Global number of its first block when it was made; it keeps it through merges
    /// (llvm-propeller's chain ID, which breaks ties).
    pub id: u32,
    /// The function of its blocks; `None` once it holds several functions' blocks.
    pub function: Option<u32>,
    pub bundles: Vec<u32>,
    pub size: i64,
    pub freq: u64,
    /// The ext-TSP score of its edges between bundles.
    pub score: f64,
    /// Sampled edges from this chain to each other chain (by chain index).
    pub out: BTreeMap<u32, Vec<u32>>,
    /// Chains with edges into this one.
    pub inn: BTreeSet<u32>,
    /// Edges between two bundles of this chain.
    pub intra: Vec<u32>,
    /// `intra` with positions, refreshed after each merge (when splitting is on).
    pub inner: Vec<Inner>,
    pub alive: bool,
}

impl Chain {
    pub fn density(&self) -> f64 {
        self.freq as f64 / self.size.max(1) as f64
    }
}

/// All chains of one build, and where each of its blocks is.
pub(crate) struct ChainSet {
    /// Global number of the first block this set can hold, and how many it can.
    base: u32,
    slots: Vec<Slot>,
    pub bundles: Vec<Bundle>,
    pub chains: Vec<Chain>,
}

impl ChainSet {
    /// A set for the blocks numbered `base..base + len`.
    pub fn new(base: u32, len: usize) -> ChainSet {
        ChainSet {
            base,
            slots: vec![FREE; len],
            bundles: Vec::new(),
            chains: Vec::new(),
        }
    }

    /// Where block `n` is, if it is in a chain of this set.
    pub fn slot(&self, n: u32) -> Option<Slot> {
        let i = n.wrapping_sub(self.base) as usize;
        self.slots.get(i).copied().filter(|s| s.bundle != NONE)
    }

    fn set_slot(&mut self, n: u32, s: Slot) {
        self.slots[(n - self.base) as usize] = s;
    }

    #[cfg(test)]
    pub fn chain_of(&self, n: u32) -> Option<u32> {
        self.slot(n).map(|s| self.bundles[s.bundle as usize].chain)
    }

    /// Block `n`'s byte offset in its chain.
    pub fn offset(&self, s: Slot) -> i64 {
        self.bundles[s.bundle as usize].offset + s.offset
    }

    pub fn first_node(&self, c: u32) -> u32 {
        let b = self.chains[c as usize].bundles[0];
        self.bundles[b as usize].nodes[0]
    }

    pub fn last_node(&self, c: u32) -> u32 {
        let b = *self.chains[c as usize]
            .bundles
            .last()
            .expect("chains are never empty");
        *self.bundles[b as usize]
            .nodes
            .last()
            .expect("bundles are never empty")
    }

    /// A new chain of `nodes`: one bundle when `together`, else a bundle per block.
    ///
    /// # Panics
    /// When a block is in a chain already.
    pub fn add_chain(&mut self, g: &Graph, nodes: &[u32], together: bool) -> u32 {
        let c = self.chains.len() as u32;
        let mut bundles = Vec::new();
        let mut size = 0i64;
        let mut freq = 0u64;
        let groups: Vec<&[u32]> = if together {
            vec![nodes]
        } else {
            nodes.chunks(1).collect()
        };
        for group in groups {
            let b = self.bundles.len() as u32;
            let mut bsize = 0i64;
            let mut bfreq = 0u64;
            for &n in group {
                assert!(
                    self.slot(n).is_none(),
                    "block {} of function {} is in two initial chains",
                    n - g.base[g.func_of[n as usize] as usize],
                    g.func_of[n as usize]
                );
                self.set_slot(
                    n,
                    Slot {
                        bundle: b,
                        offset: bsize,
                    },
                );
                bsize += g.size[n as usize];
                bfreq += g.freq[n as usize];
            }
            self.bundles.push(Bundle {
                nodes: group.to_vec(),
                size: bsize,
                freq: bfreq,
                chain: c,
                index: bundles.len() as u32,
                offset: size,
            });
            bundles.push(b);
            size += bsize;
            freq += bfreq;
        }
        self.chains.push(Chain {
            id: nodes[0],
            function: Some(g.func_of[nodes[0] as usize]),
            bundles,
            size,
            freq,
            score: 0.0,
            out: BTreeMap::new(),
            inn: BTreeSet::new(),
            intra: Vec::new(),
            inner: Vec::new(),
            alive: true,
        });
        c
    }

    /// Chains that share an edge with `c`: those with edges into it, then those it
    /// has edges into.
    pub fn neighbors(&self, c: u32) -> Vec<u32> {
        let ch = &self.chains[c as usize];
        let mut out: Vec<u32> = ch.inn.iter().copied().collect();
        out.extend(ch.out.keys().filter(|k| !ch.inn.contains(k)));
        out
    }

    /// The score of edge `e` at `distance`.
    pub fn score(g: &Graph, params: &LayoutParams, e: u32, distance: i64) -> f64 {
        let e = &g.edges[e as usize];
        edge_score(
            params,
            e.kind,
            e.weight,
            g.size[e.src as usize] as u64,
            g.size[e.sink as usize] as u64,
            distance,
        )
    }

    /// The score of edge `e` where its ends are in their chain now.
    pub fn score_in_chain(&self, g: &Graph, params: &LayoutParams, e: u32) -> f64 {
        let ge = &g.edges[e as usize];
        let (s, t) = (self.slot(ge.src), self.slot(ge.sink));
        let (s, t) = (s.expect("chained"), t.expect("chained"));
        let d = self.offset(t) - self.offset(s) - g.size[ge.src as usize];
        Self::score(g, params, e, d)
    }

    /// Recomputes `c`'s positioned inner edges.
    pub fn refresh_inner(&mut self, g: &Graph, params: &LayoutParams, c: u32) {
        let mut inner = std::mem::take(&mut self.chains[c as usize].inner);
        inner.clear();
        for &e in &self.chains[c as usize].intra {
            let ge = &g.edges[e as usize];
            let (s, t) = (
                self.slot(ge.src).expect("chained"),
                self.slot(ge.sink).expect("chained"),
            );
            let (so, to) = (self.offset(s), self.offset(t));
            inner.push(Inner {
                edge: e,
                src_bundle: self.bundles[s.bundle as usize].index,
                sink_bundle: self.bundles[t.bundle as usize].index,
                src_offset: so,
                sink_offset: to,
                score: Self::score(g, params, e, to - so - g.size[ge.src as usize]),
            });
        }
        self.chains[c as usize].inner = inner;
    }

    /// Moves the edges of chain `u` to chain `k` (llvm-propeller's
    /// `MergeChainEdges`): edges between the two become `k`'s own.
    fn merge_edges(&mut self, k: u32, u: u32) {
        let out = std::mem::take(&mut self.chains[u as usize].out);
        for (c, edges) in out {
            if c == k {
                self.chains[k as usize].intra.extend(edges);
            } else {
                let kc = &mut self.chains[k as usize];
                kc.out.entry(c).or_default().extend(edges);
                self.chains[c as usize].inn.insert(k);
            }
            self.chains[c as usize].inn.remove(&u);
        }
        let inn = std::mem::take(&mut self.chains[u as usize].inn);
        for c in inn {
            let edges = self.chains[c as usize].out.remove(&u).unwrap_or_default();
            if c == k {
                self.chains[k as usize].intra.extend(edges);
            } else {
                self.chains[c as usize]
                    .out
                    .entry(k)
                    .or_default()
                    .extend(edges);
                self.chains[k as usize].inn.insert(c);
            }
        }
    }

    /// Applies `a`: chain `a.unsplit` joins `a.split` in the assembly's order; when
    /// `rebundle`, runs of bundles of one function become one bundle (llvm-propeller
    /// does this across functions, so big chains stay cheap to split).
    pub fn merge(&mut self, g: &Graph, params: &LayoutParams, a: &Assembly, rebundle: bool) {
        let (k, u) = (a.split, a.unsplit);
        self.merge_edges(k, u);
        let (usize_, ufreq, uscore) = {
            let uc = &self.chains[u as usize];
            (uc.size, uc.freq, uc.score)
        };
        let ubundles = std::mem::take(&mut self.chains[u as usize].bundles);
        let uintra = std::mem::take(&mut self.chains[u as usize].intra);
        let ufunction = self.chains[u as usize].function;
        self.chains[u as usize].alive = false;
        self.chains[u as usize].inner = Vec::new();

        let kc = &mut self.chains[k as usize];
        kc.size += usize_;
        kc.freq += ufreq;
        kc.score += uscore + a.gain;
        kc.intra.extend(uintra);
        let s = std::mem::take(&mut kc.bundles);
        let p = a.pos as usize;
        let order: Vec<u32> = match a.order {
            MergeOrder::SU => [&s[..], &ubundles[..]].concat(),
            MergeOrder::S2S1U => [&s[p..], &s[..p], &ubundles[..]].concat(),
            MergeOrder::S1US2 => [&s[..p], &ubundles[..], &s[p..]].concat(),
            MergeOrder::US2S1 => [&ubundles[..], &s[p..], &s[..p]].concat(),
            MergeOrder::S2US1 => [&s[p..], &ubundles[..], &s[..p]].concat(),
        };
        let before = order.len();
        let mut kept: Vec<u32> = Vec::with_capacity(order.len());
        let mut offset = 0i64;
        for b in order {
            let into = kept.last().copied().filter(|&prev| {
                rebundle
                    && g.func_of[self.bundles[prev as usize].nodes[0] as usize]
                        == g.func_of[self.bundles[b as usize].nodes[0] as usize]
            });
            let bsize = self.bundles[b as usize].size;
            match into {
                Some(prev) => {
                    let nodes = std::mem::take(&mut self.bundles[b as usize].nodes);
                    let at = self.bundles[prev as usize].size;
                    for &n in &nodes {
                        let mut sl = self.slot(n).expect("chained");
                        sl.bundle = prev;
                        sl.offset += at;
                        self.set_slot(n, sl);
                    }
                    let bfreq = self.bundles[b as usize].freq;
                    let pb = &mut self.bundles[prev as usize];
                    pb.nodes.extend(nodes);
                    pb.size += bsize;
                    pb.freq += bfreq;
                }
                None => {
                    let bb = &mut self.bundles[b as usize];
                    bb.chain = k;
                    bb.index = kept.len() as u32;
                    bb.offset = offset;
                    kept.push(b);
                }
            }
            offset += bsize;
        }
        let rebundled = kept.len() != before;
        self.chains[k as usize].bundles = kept;
        if rebundled {
            // Edges now inside one bundle no longer count towards the chain's score.
            let intra = std::mem::take(&mut self.chains[k as usize].intra);
            let mut keep = Vec::with_capacity(intra.len());
            for e in intra {
                let ge = &g.edges[e as usize];
                let (s, t) = (
                    self.slot(ge.src).expect("chained"),
                    self.slot(ge.sink).expect("chained"),
                );
                if s.bundle == t.bundle {
                    let d = t.offset - s.offset - g.size[ge.src as usize];
                    self.chains[k as usize].score -= Self::score(g, params, e, d);
                } else {
                    keep.push(e);
                }
            }
            self.chains[k as usize].intra = keep;
        }
        if self.chains[k as usize].function != ufunction {
            self.chains[k as usize].function = None;
        }
        if params.chain_split {
            self.refresh_inner(g, params, k);
        }
    }
}
