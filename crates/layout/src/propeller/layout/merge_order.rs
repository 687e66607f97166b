//! The vocabulary of merging two chains, shared by the chains that apply a merge
//! (`chain`) and the scoring that chooses one (`assembly`): chain S (the split chain)
//! may be cut before bundle `pos` into S1 and S2, and chain U (the unsplit one) goes
//! before, between or after.

/// How the slices are put together; the order is llvm-propeller's, which breaks ties.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum MergeOrder {
    SU,
    S2S1U,
    S1US2,
    US2S1,
    S2US1,
}

/// The orders that cut S, in the order they are tried.
pub(crate) const SPLIT_ORDERS: [MergeOrder; 4] = [
    MergeOrder::S1US2,
    MergeOrder::S2S1U,
    MergeOrder::US2S1,
    MergeOrder::S2US1,
];

#[derive(Clone, Copy, Debug)]
pub(crate) struct Assembly {
    pub split: u32,
    pub unsplit: u32,
    pub order: MergeOrder,
    /// The bundle S2 starts at (0 for SU).
    pub pos: u32,
    pub gain: f64,
}
