//! Properties of the layout on synthetic programs (not reference cases): the same
//! input gives the same layout, and kernel-sized or interpreter-shaped programs are
//! laid out in reasonable time (the timing tests run with `--ignored`).

use kfdo_layout::propeller::layout::{code_layout, LayoutParams};
use kfdo_layout::propeller::model;
use model::{EdgeKind, NodeRef};

fn params() -> LayoutParams {
    LayoutParams::default()
}

fn inter() -> LayoutParams {
    LayoutParams {
        inter_function_reordering: true,
        ..params()
    }
}

/// A deterministic random program: `functions` functions of a few to a few dozen
/// blocks, the first `big` of them with `big_blocks` blocks; fall-throughs, forward
/// branches, loops, and calls between functions.
fn synthetic(functions: usize, big: usize, big_blocks: usize) -> model::ProgramCfg {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n.max(1)
    };
    let mut cfg = model::ProgramCfg::default();
    let mut address = 0x1000u64;
    for fi in 0..functions {
        let n = if fi < big {
            big_blocks
        } else {
            3 + rnd(30) as usize
        };
        let nodes: Vec<model::Node> = (0..n)
            .map(|i| model::Node {
                bb_id: i as u32,
                size: 2 + rnd(40),
                freq: 0,
                is_landing_pad: false,
            })
            .collect();
        // Only some functions run; the big ones all do.
        let hot = fi < big || rnd(4) == 0;
        let mut edges = Vec::new();
        if hot {
            for i in 0..n - 1 {
                if rnd(5) != 0 {
                    edges.push(model::Edge {
                        src: i,
                        sink: i + 1,
                        weight: 1 + rnd(1000),
                        kind: EdgeKind::BranchOrFallthrough,
                    });
                }
                if rnd(2) == 0 {
                    let back = rnd(4) == 0;
                    let span = 1 + rnd(30) as usize;
                    let sink = if back {
                        i.saturating_sub(span)
                    } else {
                        (i + span).min(n - 1)
                    };
                    edges.push(model::Edge {
                        src: i,
                        sink,
                        weight: 1 + rnd(1000),
                        kind: EdgeKind::BranchOrFallthrough,
                    });
                }
            }
        }
        let size: u64 = nodes.iter().map(|n| n.size).sum();
        cfg.functions.push(model::FunctionCfg {
            name: format!("f{fi}"),
            address,
            nodes,
            edges,
        });
        address += size;
    }
    for _ in 0..functions * 2 {
        let (a, b) = (
            rnd(functions as u64) as usize,
            rnd(functions as u64) as usize,
        );
        if cfg.functions[a].edges.is_empty() || cfg.functions[b].edges.is_empty() {
            continue;
        }
        let src = NodeRef {
            function: a,
            node: rnd(cfg.functions[a].nodes.len() as u64) as usize,
        };
        let entry = NodeRef {
            function: b,
            node: 0,
        };
        let w = 1 + rnd(500);
        cfg.inter_edges.push(model::InterEdge {
            src,
            sink: entry,
            weight: w,
            kind: EdgeKind::Call,
        });
        let last = NodeRef {
            function: b,
            node: cfg.functions[b].nodes.len() - 1,
        };
        cfg.inter_edges.push(model::InterEdge {
            src: last,
            sink: src,
            weight: w,
            kind: EdgeKind::Return,
        });
    }
    cfg
}

#[test]
fn same_input_same_layout() {
    let cfg = synthetic(300, 2, 300);
    for p in [params(), inter()] {
        let a = code_layout(&cfg, &p);
        let b = code_layout(&cfg, &p.clone());
        assert_eq!(a, b);
        for f in &a.functions {
            assert!(f.intra_score_after >= f.intra_score_before * 0.5);
        }
    }
}

/// Kernel-sized: run with `--ignored` to time it.
#[test]
#[ignore]
fn kernel_sized_program() {
    let cfg = synthetic(50_000, 20, 4000);
    let t = std::time::Instant::now();
    let l = code_layout(&cfg, &params());
    let hot: usize = l.functions.iter().map(|f| f.clusters[0].len()).sum();
    eprintln!(
        "{} functions, {} hot ones, {hot} hot blocks: {:?}",
        cfg.functions.len(),
        l.functions.len(),
        t.elapsed()
    );
    let big = synthetic(1, 1, 4000);
    let t = std::time::Instant::now();
    code_layout(&big, &params());
    eprintln!("one function of 4000 blocks: {:?}", t.elapsed());
}

#[test]
#[ignore]
fn scaling() {
    let small = synthetic(50_000, 0, 0);
    let t = std::time::Instant::now();
    code_layout(&small, &params());
    eprintln!("50000 small functions: {:?}", t.elapsed());
    for n in [1000, 2000, 4000, 8000, 16000] {
        let big = synthetic(1, 1, n);
        let t = std::time::Instant::now();
        code_layout(&big, &params());
        eprintln!("one function of {n} blocks: {:?}", t.elapsed());
    }
}

/// An interpreter loop: a dispatch block jumps to `cases` handlers of a few blocks
/// each, which all jump back to it.
fn interpreter(cases: usize) -> model::ProgramCfg {
    let mut nodes = vec![];
    let mut edges = vec![];
    let node = |size| model::Node {
        bb_id: 0,
        size,
        freq: 0,
        is_landing_pad: false,
    };
    nodes.push(node(8)); // entry
    nodes.push(node(16)); // dispatch
    edges.push(model::Edge {
        src: 0,
        sink: 1,
        weight: 10,
        kind: EdgeKind::BranchOrFallthrough,
    });
    for c in 0..cases {
        let first = nodes.len();
        let len = 2 + c % 4;
        for k in 0..len {
            nodes.push(node(4 + (c * 7 + k * 3) as u64 % 30));
            if k > 0 {
                edges.push(model::Edge {
                    src: first + k - 1,
                    sink: first + k,
                    weight: 1000 + c as u64,
                    kind: EdgeKind::BranchOrFallthrough,
                });
            }
            if k == 1 && c % 3 == 0 {
                // A side exit to the next handler.
                edges.push(model::Edge {
                    src: first + k,
                    sink: first + len,
                    weight: 50,
                    kind: EdgeKind::BranchOrFallthrough,
                });
            }
        }
        edges.push(model::Edge {
            src: 1,
            sink: first,
            weight: 1000 + c as u64,
            kind: EdgeKind::BranchOrFallthrough,
        });
        edges.push(model::Edge {
            src: first + len - 1,
            sink: 1,
            weight: 1000 + c as u64,
            kind: EdgeKind::BranchOrFallthrough,
        });
    }
    let n = nodes.len();
    edges.retain(|e| e.sink < n);
    for (i, nd) in nodes.iter_mut().enumerate() {
        nd.bb_id = i as u32;
    }
    model::ProgramCfg {
        functions: vec![model::FunctionCfg {
            name: "interp".into(),
            address: 0x1000,
            nodes,
            edges,
        }],
        inter_edges: vec![],
    }
}

#[test]
#[ignore]
fn interpreter_scaling() {
    for cases in [100, 300, 1000, 3000] {
        let cfg = interpreter(cases);
        let t = std::time::Instant::now();
        let l = code_layout(&cfg, &params());
        eprintln!(
            "interpreter with {cases} handlers ({} blocks): {:?}, score {} -> {}",
            cfg.functions[0].nodes.len(),
            t.elapsed(),
            l.functions[0].intra_score_before,
            l.functions[0].intra_score_after
        );
    }
}
