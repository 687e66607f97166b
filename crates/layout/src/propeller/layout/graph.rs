//! A flat, program-wide view of the [`ProgramCfg`] that the layout walks: every block
//! gets one global number (functions in order, blocks in order inside each), and every
//! edge, intra- or inter-function, one list entry with its in- and out-adjacency.
//! Global numbers sort like (function index, block index), which is the order
//! llvm-propeller breaks ties by, so comparing them is comparing its node IDs.

use super::super::model::{EdgeKind, ProgramCfg};

/// One edge between two blocks, by global number.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GEdge {
    pub src: u32,
    pub sink: u32,
    pub weight: u64,
    pub kind: EdgeKind,
}

/// Adjacency in compressed rows: the edges of node `n` are `list[start[n]..start[n + 1]]`.
struct Rows {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Rows {
    fn new(nodes: usize, edges: &[GEdge], key: impl Fn(&GEdge) -> u32) -> Rows {
        let mut start = vec![0u32; nodes + 1];
        for e in edges {
            start[key(e) as usize + 1] += 1;
        }
        for i in 0..nodes {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut list = vec![0u32; edges.len()];
        // Edge order inside a row is the edges' order in the program: intra-function
        // edges function by function, then the inter-function ones.
        for (i, e) in edges.iter().enumerate() {
            let k = key(e) as usize;
            list[fill[k] as usize] = i as u32;
            fill[k] += 1;
        }
        Rows { start, list }
    }

    fn of(&self, n: u32) -> &[u32] {
        &self.list[self.start[n as usize] as usize..self.start[n as usize + 1] as usize]
    }
}

pub(crate) struct Graph<'a> {
    pub cfg: &'a ProgramCfg,
    /// Global number of each function's block 0; one extra entry at the end.
    pub base: Vec<u32>,
    /// The function of each block.
    pub func_of: Vec<u32>,
    pub size: Vec<i64>,
    /// Each block's count: llvm-propeller's `CalculateFrequency` (the largest of the
    /// summed non-call out-edges, summed non-return in-edges, heaviest call out and
    /// heaviest return in), or the node's own `freq` when that is larger.
    pub freq: Vec<u64>,
    pub landing_pad: Vec<bool>,
    pub edges: Vec<GEdge>,
    outs: Rows,
    ins: Rows,
}

impl<'a> Graph<'a> {
    /// # Panics
    /// When an edge names a function or block the program does not have.
    pub fn new(cfg: &'a ProgramCfg) -> Graph<'a> {
        let mut base = Vec::with_capacity(cfg.functions.len() + 1);
        let mut total = 0usize;
        for f in &cfg.functions {
            base.push(total as u32);
            total += f.nodes.len();
        }
        base.push(total as u32);
        assert!(total < u32::MAX as usize, "too many blocks for the layout");
        let mut func_of = Vec::with_capacity(total);
        let mut size = Vec::with_capacity(total);
        let mut own_freq = Vec::with_capacity(total);
        let mut landing_pad = Vec::with_capacity(total);
        for (fi, f) in cfg.functions.iter().enumerate() {
            for n in &f.nodes {
                func_of.push(fi as u32);
                size.push(n.size as i64);
                own_freq.push(n.freq);
                landing_pad.push(n.is_landing_pad);
            }
        }
        let global = |function: usize, node: usize| -> u32 {
            assert!(
                function < cfg.functions.len() && node < cfg.functions[function].nodes.len(),
                "edge to block {node} of function {function}, which the program lacks"
            );
            base[function] + node as u32
        };
        let mut edges = Vec::new();
        for (fi, f) in cfg.functions.iter().enumerate() {
            for e in &f.edges {
                edges.push(GEdge {
                    src: global(fi, e.src),
                    sink: global(fi, e.sink),
                    weight: e.weight,
                    kind: e.kind,
                });
            }
        }
        for e in &cfg.inter_edges {
            edges.push(GEdge {
                src: global(e.src.function, e.src.node),
                sink: global(e.sink.function, e.sink.node),
                weight: e.weight,
                kind: e.kind,
            });
        }
        let freq = frequencies(&own_freq, &edges);
        let outs = Rows::new(total, &edges, |e| e.src);
        let ins = Rows::new(total, &edges, |e| e.sink);
        Graph {
            cfg,
            base,
            func_of,
            size,
            freq,
            landing_pad,
            edges,
            outs,
            ins,
        }
    }

    pub fn nodes(&self) -> usize {
        self.size.len()
    }

    /// Edge indices out of / into global node `n`.
    pub fn outs(&self, n: u32) -> &[u32] {
        self.outs.of(n)
    }

    pub fn ins(&self, n: u32) -> &[u32] {
        self.ins.of(n)
    }

    /// Whether `n` is its function's entry (block index 0).
    pub fn is_entry(&self, n: u32) -> bool {
        self.base[self.func_of[n as usize] as usize] == n
    }

    /// The global numbers of function `f`'s blocks.
    pub fn blocks(&self, f: usize) -> std::ops::Range<u32> {
        self.base[f]..self.base[f + 1]
    }

    /// A function with a block that ran.
    pub fn is_hot(&self, f: usize) -> bool {
        self.blocks(f).any(|n| self.freq[n as usize] > 0)
    }

    pub fn has_hot_landing_pads(&self, f: usize) -> bool {
        self.blocks(f)
            .any(|n| self.landing_pad[n as usize] && self.freq[n as usize] > 0)
    }

    pub fn landing_pads(&self, f: usize) -> usize {
        self.blocks(f)
            .filter(|&n| self.landing_pad[n as usize])
            .count()
    }
}

/// llvm-propeller counts a block that calls several functions (or is returned into
/// from several) once per call, so calls and returns only count by their heaviest one.
fn frequencies(own: &[u64], edges: &[GEdge]) -> Vec<u64> {
    let n = own.len();
    let (mut sum_in, mut sum_out) = (vec![0u64; n], vec![0u64; n]);
    let (mut max_call_out, mut max_ret_in) = (vec![0u64; n], vec![0u64; n]);
    for e in edges {
        let (s, d) = (e.src as usize, e.sink as usize);
        if e.kind == EdgeKind::Call {
            max_call_out[s] = max_call_out[s].max(e.weight);
        } else {
            sum_out[s] += e.weight;
        }
        if e.kind == EdgeKind::Return {
            max_ret_in[d] = max_ret_in[d].max(e.weight);
        } else {
            sum_in[d] += e.weight;
        }
    }
    (0..n)
        .map(|i| {
            own[i]
                .max(sum_in[i])
                .max(sum_out[i])
                .max(max_call_out[i])
                .max(max_ret_in[i])
        })
        .collect()
}
