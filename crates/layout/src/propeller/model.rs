//! The whole-program control-flow graph the layout works on: per function its basic
//! blocks (by the IDs of the BB address map) with sizes and execution counts, the
//! branch / fall-through edges between them, and the calls and returns between
//! functions. Built from samples by `build`, or by hand in tests.

/// A basic block. Index 0 of [`FunctionCfg::nodes`] is the function's entry block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The block's ID in the BB address map (what cluster lists name).
    pub bb_id: u32,
    /// Bytes of code.
    pub size: u64,
    /// How often the block ran (samples).
    pub freq: u64,
    /// An exception landing pad (lld / clang keep these in special places).
    pub is_landing_pad: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdgeKind {
    /// A taken branch or a fall-through inside the function.
    BranchOrFallthrough,
    /// A call to another function's entry.
    Call,
    /// A return into another function.
    Return,
}

/// An edge inside one function: indices into [`FunctionCfg::nodes`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub src: usize,
    pub sink: usize,
    pub weight: u64,
    pub kind: EdgeKind,
}

/// One function's CFG.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionCfg {
    /// The function's symbol (the primary name when it has aliases).
    pub name: String,
    /// The link-time address of its entry (deterministic tie-breaks use it).
    pub address: u64,
    pub nodes: Vec<Node>,
    /// Intra-function edges ([`EdgeKind::BranchOrFallthrough`]).
    pub edges: Vec<Edge>,
}

impl FunctionCfg {
    /// Sum of the blocks' counts: a function without any is cold.
    pub fn is_hot(&self) -> bool {
        self.nodes.iter().any(|n| n.freq > 0)
    }

    pub fn size(&self) -> u64 {
        self.nodes.iter().map(|n| n.size).sum()
    }
}

/// A block in the program: (function index, node index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeRef {
    pub function: usize,
    pub node: usize,
}

/// A call or return between two functions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterEdge {
    pub src: NodeRef,
    pub sink: NodeRef,
    pub weight: u64,
    pub kind: EdgeKind,
}

/// Every function of the binary that the map describes, hot or cold, in address order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramCfg {
    pub functions: Vec<FunctionCfg>,
    pub inter_edges: Vec<InterEdge>,
}

/// Where one hot function's blocks go.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FunctionLayout {
    /// Index into [`ProgramCfg::functions`].
    pub function: usize,
    /// The hot clusters, each a run of block IDs laid out together; the first starts
    /// with the entry block (ID of node 0). One cluster unless inter-function
    /// reordering splits a function.
    pub clusters: Vec<Vec<u32>>,
    /// Blocks left to the function's `.cold` part, in their original order (empty when
    /// every block is hot or splitting is off).
    pub cold: Vec<u32>,
    /// The function's ext-TSP score with the original and with the new block order.
    pub intra_score_before: f64,
    pub intra_score_after: f64,
}

/// The program's new layout.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProgramLayout {
    /// The hot functions' layouts, by function index order.
    pub functions: Vec<FunctionLayout>,
    /// The hot clusters in their new order in the text section, as
    /// (index into `functions`, cluster index): call-chain clustering's order.
    pub order: Vec<(usize, usize)>,
}
