//! One way of merging two chains and its score gain (llvm-propeller's
//! `NodeChainAssembly`). Chain S (the split chain) may be cut before bundle `pos`
//! into S1 and S2, and chain U (the unsplit one) goes before, between or after:
//!
//! * SU: S then U, nothing cut;
//! * S2S1U, S1US2, US2S1, S2US1: the slices in that order.
//!
//! The gain is the score the two chains' shared edges earn in the new order, plus,
//! for a cut, the change in score of S's edges between S1 and S2; edges inside a
//! slice keep their distance. An assembly that earns nothing from the shared edges
//! counts as no gain at all, whatever the cut does, as in llvm-propeller.

use super::chain::{ChainSet, Slot};
use super::graph::Graph;
use super::merge_order::{Assembly, MergeOrder};
use super::params::LayoutParams;

/// Why an assembly is not a candidate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Reject {
    /// It would put the function's entry block after other blocks of its part.
    EntryInMiddle,
    Negative(f64),
    Zero,
}

/// Where the slices start in the merged chain.
struct Bases {
    s1: i64,
    s2: i64,
    u: i64,
    /// S1's size: S2's blocks sit this much further into S than into S2.
    s1_size: i64,
}

impl Bases {
    fn new(cs: &ChainSet, split: u32, unsplit: u32, order: MergeOrder, pos: u32) -> Bases {
        let s = &cs.chains[split as usize];
        let u_size = cs.chains[unsplit as usize].size;
        let s1 = match s.bundles.get(pos as usize) {
            Some(&b) if order != MergeOrder::SU => cs.bundles[b as usize].offset,
            _ => s.size,
        };
        let s2 = s.size - s1;
        let (b1, b2, bu) = match order {
            MergeOrder::SU => (0, s.size, s.size),
            MergeOrder::S2S1U => (s2, 0, s.size),
            MergeOrder::S1US2 => (0, s1 + u_size, s1),
            MergeOrder::US2S1 => (u_size + s2, u_size, 0),
            MergeOrder::S2US1 => (s2 + u_size, 0, s2),
        };
        Bases {
            s1: b1,
            s2: b2,
            u: bu,
            s1_size: s1,
        }
    }
}

/// The pieces an assembly is evaluated with.
struct View<'a> {
    cs: &'a ChainSet,
    split: u32,
    unsplit: u32,
    order: MergeOrder,
    pos: u32,
    bases: Bases,
}

impl<'a> View<'a> {
    fn new(cs: &'a ChainSet, split: u32, unsplit: u32, order: MergeOrder, pos: u32) -> Self {
        View {
            cs,
            split,
            unsplit,
            order,
            pos,
            bases: Bases::new(cs, split, unsplit, order, pos),
        }
    }

    /// The shared edges' score, plus for a cut the change of S's edges across it;
    /// nothing at all when the shared edges earn nothing.
    fn gain(&self, g: &Graph, params: &LayoutParams) -> f64 {
        let shared = self.edges_score(g, params, self.split, self.unsplit)
            + self.edges_score(g, params, self.unsplit, self.split);
        if shared == 0.0 {
            return 0.0;
        }
        shared + self.split_gain(g, params)
    }

    /// A block's offset in the merged chain.
    fn position(&self, s: Slot) -> i64 {
        let b = &self.cs.bundles[s.bundle as usize];
        let off = b.offset + s.offset;
        if b.chain == self.unsplit {
            self.bases.u + off
        } else {
            debug_assert_eq!(b.chain, self.split);
            self.in_split(b.index, off)
        }
    }

    /// The merged offset of a block of S at bundle index `index`, offset `off` in S.
    fn in_split(&self, index: u32, off: i64) -> i64 {
        if self.order == MergeOrder::SU || index < self.pos {
            self.bases.s1 + off
        } else {
            self.bases.s2 + off - self.bases.s1_size
        }
    }

    fn edges_score(&self, g: &Graph, params: &LayoutParams, from: u32, to: u32) -> f64 {
        let Some(edges) = self.cs.chains[from as usize].out.get(&to) else {
            return 0.0;
        };
        let mut score = 0.0;
        for &e in edges {
            let ge = &g.edges[e as usize];
            let (s, t) = (
                self.cs.slot(ge.src).expect("chained"),
                self.cs.slot(ge.sink).expect("chained"),
            );
            let d = self.position(t) - self.position(s) - g.size[ge.src as usize];
            score += ChainSet::score(g, params, e, d);
        }
        score
    }

    /// The score change of S's edges between S1 and S2.
    fn split_gain(&self, g: &Graph, params: &LayoutParams) -> f64 {
        if self.order == MergeOrder::SU {
            return 0.0;
        }
        let mut gain = 0.0;
        for i in &self.cs.chains[self.split as usize].inner {
            if (i.src_bundle < self.pos) == (i.sink_bundle < self.pos) {
                continue;
            }
            let src = self.in_split(i.src_bundle, i.src_offset);
            let sink = self.in_split(i.sink_bundle, i.sink_offset);
            let src_size = g.size[g.edges[i.edge as usize].src as usize];
            gain += ChainSet::score(g, params, i.edge, sink - src - src_size) - i.score;
        }
        gain
    }

    /// The merged chain's first block.
    fn first_node(&self) -> u32 {
        let (chain, index) = match self.order {
            MergeOrder::SU | MergeOrder::S1US2 => (self.split, 0),
            MergeOrder::S2S1U | MergeOrder::S2US1 => (self.split, self.pos),
            MergeOrder::US2S1 => (self.unsplit, 0),
        };
        let b = self.cs.chains[chain as usize].bundles[index as usize];
        self.cs.bundles[b as usize].nodes[0]
    }
}

/// The gain of merging `unsplit` into `split` in `order` (cut before bundle `pos`),
/// with no check of whether the merge is allowed.
pub(crate) fn gain(
    cs: &ChainSet,
    g: &Graph,
    params: &LayoutParams,
    split: u32,
    unsplit: u32,
    order: MergeOrder,
    pos: u32,
) -> f64 {
    View::new(cs, split, unsplit, order, pos).gain(g, params)
}

/// The assembly, if it may be made: it must gain (or, with `allow_zero`, not lose)
/// and, unless blocks may go before the entry, keep an entry block first.
///
/// # Panics
/// When the chains are one, or `pos` is not inside `split` (or not 0 for SU).
#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    cs: &ChainSet,
    g: &Graph,
    params: &LayoutParams,
    split: u32,
    unsplit: u32,
    order: MergeOrder,
    pos: u32,
    allow_zero: bool,
) -> Result<Assembly, Reject> {
    assert_ne!(split, unsplit, "cannot merge a chain with itself");
    if order == MergeOrder::SU {
        assert_eq!(pos, 0, "SU does not cut");
    } else {
        let n = cs.chains[split as usize].bundles.len() as u32;
        assert!(
            pos > 0 && pos < n,
            "cut {pos} outside a chain of {n} bundles"
        );
    }
    let v = View::new(cs, split, unsplit, order, pos);
    if !params.inter_function_reordering {
        let entry_first = g.is_entry(cs.first_node(split)) || g.is_entry(cs.first_node(unsplit));
        if entry_first && !g.is_entry(v.first_node()) {
            return Err(Reject::EntryInMiddle);
        }
    }
    let gain = v.gain(g, params);
    if gain < 0.0 {
        return Err(Reject::Negative(gain));
    }
    if gain == 0.0 && !allow_zero {
        return Err(Reject::Zero);
    }
    Ok(Assembly {
        split,
        unsplit,
        order,
        pos,
        gain,
    })
}
