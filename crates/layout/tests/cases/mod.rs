//! The CFGs of llvm-propeller's code-layout tests, in a compact text form of our own,
//! and the parser that turns them into a [`ProgramCfg`].
//!
//! ```text
//! fn NAME @N                 a function; N orders them (llvm-propeller's function index)
//!   ID SIZE [lp] [-> EDGE…]  a block (in order; the first is the entry) and its out-edges
//! ```
//!
//! An edge is `[FUNCTION.]ID:WEIGHT[c|r]`: to block ID of this function (or of
//! FUNCTION), a branch or fall-through, or with `c` a call, with `r` a return.
//! Branches inside a function go to [`FunctionCfg::edges`], everything else to
//! [`ProgramCfg::inter_edges`], as the CFG builder does. Functions are placed back to
//! back from address 0x1000 in `@N` order.

#![allow(dead_code)]

use super::model::{Edge, EdgeKind, FunctionCfg, InterEdge, Node, NodeRef, ProgramCfg};

/// A parsed fixture: the CFG and its functions' names by index.
pub struct Fixture {
    pub cfg: ProgramCfg,
}

impl Fixture {
    /// The index of function `name`.
    pub fn f(&self, name: &str) -> usize {
        self.cfg
            .functions
            .iter()
            .position(|f| f.name == name)
            .unwrap_or_else(|| panic!("no function {name}"))
    }

    /// Block `id` of function `name`.
    pub fn at(&self, name: &str, id: u32) -> NodeRef {
        let function = self.f(name);
        let node = self.cfg.functions[function]
            .nodes
            .iter()
            .position(|n| n.bb_id == id)
            .unwrap_or_else(|| panic!("no block {id} in {name}"));
        NodeRef { function, node }
    }
}

/// Parses the text form.
///
/// # Panics
/// On anything it does not understand.
pub fn parse(text: &str) -> Fixture {
    struct F {
        name: String,
        number: u64,
        nodes: Vec<Node>,
        // (source block ID, target function name or None, target ID, weight, kind)
        edges: Vec<(u32, Option<String>, u32, u64, EdgeKind)>,
    }
    let mut fs: Vec<F> = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap().trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("fn ") {
            let (name, number) = rest.split_once(" @").expect("fn NAME @N");
            fs.push(F {
                name: name.trim().to_string(),
                number: number.trim().parse().expect("@N"),
                nodes: Vec::new(),
                edges: Vec::new(),
            });
            continue;
        }
        let f = fs.last_mut().expect("a block before any fn");
        let (head, tail) = line.split_once("->").unwrap_or((line, ""));
        let mut w = head.split_whitespace();
        let bb_id: u32 = w.next().unwrap().parse().expect("block ID");
        let size: u64 = w.next().expect("block size").parse().expect("block size");
        let is_landing_pad = match w.next() {
            None => false,
            Some("lp") => true,
            Some(x) => panic!("unknown block flag {x}"),
        };
        f.nodes.push(Node {
            bb_id,
            size,
            freq: 0,
            is_landing_pad,
        });
        for e in tail.split_whitespace() {
            let (target, weight) = e.split_once(':').expect("TARGET:WEIGHT");
            let (weight, kind) = match weight.as_bytes().last() {
                Some(b'c') => (&weight[..weight.len() - 1], EdgeKind::Call),
                Some(b'r') => (&weight[..weight.len() - 1], EdgeKind::Return),
                _ => (weight, EdgeKind::BranchOrFallthrough),
            };
            let (func, id) = match target.rsplit_once('.') {
                Some((func, id)) => (Some(func.to_string()), id),
                None => (None, target),
            };
            f.edges.push((
                bb_id,
                func,
                id.parse().expect("target ID"),
                weight.parse().expect("weight"),
                kind,
            ));
        }
    }
    fs.sort_by_key(|f| f.number);
    let index_of = |name: &str| {
        fs.iter()
            .position(|f| f.name == name)
            .expect("known function")
    };
    let node_of = |fi: usize, id: u32| {
        fs[fi]
            .nodes
            .iter()
            .position(|n| n.bb_id == id)
            .unwrap_or_else(|| panic!("no block {id} in {}", fs[fi].name))
    };
    let mut cfg = ProgramCfg::default();
    let mut address = 0x1000u64;
    for f in &fs {
        cfg.functions.push(FunctionCfg {
            name: f.name.clone(),
            address,
            nodes: f.nodes.clone(),
            edges: Vec::new(),
        });
        address += f.nodes.iter().map(|n| n.size).sum::<u64>();
    }
    for (fi, f) in fs.iter().enumerate() {
        for (src, func, id, weight, kind) in &f.edges {
            let sink_f = func.as_deref().map_or(fi, index_of);
            let src = NodeRef {
                function: fi,
                node: node_of(fi, *src),
            };
            let sink = NodeRef {
                function: sink_f,
                node: node_of(sink_f, *id),
            };
            if sink_f == fi && *kind == EdgeKind::BranchOrFallthrough {
                cfg.functions[fi].edges.push(Edge {
                    src: src.node,
                    sink: sink.node,
                    weight: *weight,
                    kind: *kind,
                });
            } else {
                cfg.inter_edges.push(InterEdge {
                    src,
                    sink,
                    weight: *weight,
                    kind: *kind,
                });
            }
        }
    }
    Fixture { cfg }
}

/// Three functions calling each other: bar calls foo, which returns to bar; qux calls
/// itself; baz never runs.
pub const SIMPLE_MULTI_FUNCTION: &str = "
fn foo @0
  0 8 -> 1:20 2:80
  1 6 -> bar.1:20r
  2 6 -> bar.1:80r
fn bar @1
  0 10 -> 1:100
  1 6 -> 3:100 foo.0:100c
  2 8 -> 4:2 5:0
  3 6
  4 10
  5 7
fn baz @4
  0 8
fn qux @100
  0 12 -> 0:10c
";

/// Two conditionals in a loop with a small trip count.
pub const TWO_CONDITIONALS_IN_LOOP: &str = "
fn foo @22
  0 10 -> 1:15
  1 8 -> 2:15 3:10
  2 4 -> 1:10 4:14
  3 6 -> 4:1 2:9
  4 2
";

/// A loop with a cold block in it.
pub const SIMPLE_LOOP: &str = "
fn foo.alias @0
  0 10 -> 1:5
  1 6 -> 2:0 3:95
  2 4 -> 4:0
  3 4 -> 1:90 4:10
  4 6
";

/// Two nested loops.
pub const NESTED_LOOP: &str = "
fn foo @1
  0 10 -> 3:5
  1 10 -> 4:600
  2 10
  3 10 -> 1:60
  4 10 -> 5:55 1:550
  5 10 -> 3:40 2:10
";

/// Three cold blocks and two hot ones, the entry cold.
pub const MULTIPLE_COLD_BLOCKS: &str = "
fn foo @999
  0 10
  1 6
  2 5
  3 4 -> 1:40
  4 3
";

/// A function with a hot and a cold landing pad.
pub const HOT_AND_COLD_LANDING_PADS: &str = "
fn foo @10
  0 10 -> 1:10 2:10 bar.0:20c
  1 10 -> 4:10 3:0
  2 10 lp -> 5:10
  3 10 lp -> 5:0
  4 10 -> 5:10
  5 10
fn bar @20
  0 10 -> foo.0:10r
";

/// A function whose two landing pads are cold.
pub const ALL_COLD_LANDING_PADS: &str = "
fn foo @100
  0 10 -> 1:20 2:0 bar.0:20c
  1 10 -> 4:20 3:0
  2 10 lp -> 5:0
  3 10 lp -> 5:0
  4 10 -> 5:20
  5 10
fn bar @200
  0 10 -> foo.0:20r
";

/// A call from inside a loop.
pub const CALL_FROM_SIMPLE_LOOP: &str = "
fn foo @1
  0 10 -> 1:5
  1 4 -> 2:100 bar.0:100c
  2 6 -> 1:100
fn bar @2
  0 2
fn baz @3
  0 6 -> foo.0:100c
";

/// Two conditionals joining; block 2 is empty.
pub const SIMPLE_CONDITIONALS_JOIN: &str = "
fn foo @10
  0 10 -> 1:110 2:150
  1 4 -> 2:100 3:10
  2 0 -> 4:250
  3 2 -> 4:10
  4 2
";

/// A loop (1, 2) entered and left only along cold edges.
pub const LOOP_NO_ENTRY_NO_EXIT: &str = "
fn foo @0
  0 10 -> 1:0
  1 6 -> 2:40
  2 4 -> 3:0 1:45
  3 3
";

/// Three branches, one of them (2 -> 3) reached only along a cold edge.
pub const THREE_BRANCHES: &str = "
fn foo @0
  0 10 -> 1:100 2:0
  1 4 -> 4:80 5:20
  2 6 -> 3:10 4:0
  3 2
  4 6
  5 4
";

/// Blocks so large that the edges around them earn nothing.
pub const TWO_LARGE_BLOCKS: &str = "
fn foo @0
  0 100000 -> 1:100
  1 10 -> 2:100 3:10
  2 100001
  3 11 -> bar.0:10c
fn bar @1
  0 20
";

/// A loop (1, 2) after the entry with a second way from the entry to the exit.
pub const LOOP_AFTER_ENTRY: &str = "
fn foo @0
  0 16 -> 1:20 3:10
  1 7 -> 2:30
  2 64 -> 1:40
  3 8
";
