//! The layout's parameters, below every step that reads them.

/// llvm-propeller's `PropellerCodeLayoutParameters`; [`Default`] gives its defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutParams {
    /// Score per sample of a fall-through.
    pub fallthrough_weight: f64,
    /// Score per sample of a jump of length 0, forwards and backwards.
    pub forward_jump_weight: f64,
    pub backward_jump_weight: f64,
    /// Bytes over which a jump's score falls to zero.
    pub forward_jump_distance: f64,
    pub backward_jump_distance: f64,
    /// Whether a merge may cut one chain to put the other in between.
    pub chain_split: bool,
    /// Chains of up to this many bundles are tried cut at every bundle; longer ones
    /// only where the cut makes a fall-through.
    pub chain_split_threshold: u32,
    /// Whether functions are ordered by call-chain clustering (else by index).
    pub call_chain_clustering: bool,
    /// Clusters over this many bytes take no more chains.
    pub cluster_merge_size_threshold: u64,
    /// Whether never-run blocks of hot functions go to a cold part.
    pub split_functions: bool,
    /// Whether hot blocks may change their relative order.
    pub reorder_hot_blocks: bool,
    /// Whether blocks of different functions may interleave.
    pub inter_function_reordering: bool,
}

impl Default for LayoutParams {
    fn default() -> Self {
        LayoutParams {
            fallthrough_weight: 10.0,
            forward_jump_weight: 1.0,
            backward_jump_weight: 1.0,
            forward_jump_distance: 1024.0,
            backward_jump_distance: 680.0,
            chain_split: true,
            chain_split_threshold: 0,
            call_chain_clustering: true,
            cluster_merge_size_threshold: 2 << 20,
            split_functions: true,
            reorder_hot_blocks: true,
            inter_function_reordering: false,
        }
    }
}
