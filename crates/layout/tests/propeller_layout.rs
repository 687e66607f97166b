//! llvm-propeller's code-layout tests (`llvm_propeller_code_layout_test.cc`), ported:
//! the same CFGs (re-expressed in `cases`), parameters, expected orders and scores.

mod cases;

use std::collections::BTreeMap;

use kfdo_layout::propeller::layout::{
    build_chains, code_layout, code_layout_with_initial_chains, edge_score, intra_score,
    layout_addresses, program_scores, LayoutParams,
};
use kfdo_layout::propeller::model;
use model::{EdgeKind, FunctionLayout, NodeRef, ProgramLayout};

use cases::Fixture;

/// The reference prints its scores to five decimals.
fn assert_near(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-5 + 1e-9 * want.abs(),
        "score {got}, expected {want}"
    );
}

fn layout(text: &str, params: &LayoutParams) -> (Fixture, ProgramLayout) {
    let fx = cases::parse(text);
    let l = code_layout(&fx.cfg, params);
    (fx, l)
}

/// The layout of function `name`.
fn of<'a>(fx: &Fixture, l: &'a ProgramLayout, name: &str) -> &'a FunctionLayout {
    let f = fx.f(name);
    l.functions
        .iter()
        .find(|fl| fl.function == f)
        .unwrap_or_else(|| panic!("{name} has no layout"))
}

/// The functions' clusters in layout order, as (name, block IDs).
fn placed(fx: &Fixture, l: &ProgramLayout) -> Vec<(String, Vec<u32>)> {
    l.order
        .iter()
        .map(|&(f, c)| {
            let fl = &l.functions[f];
            (
                fx.cfg.functions[fl.function].name.clone(),
                fl.clusters[c].clone(),
            )
        })
        .collect()
}

fn params() -> LayoutParams {
    LayoutParams::default()
}

#[test]
fn default_parameters_are_llvm_propellers() {
    let p = params();
    assert_eq!(
        (
            p.fallthrough_weight,
            p.forward_jump_weight,
            p.backward_jump_weight
        ),
        (10.0, 1.0, 1.0)
    );
    assert_eq!(
        (p.forward_jump_distance, p.backward_jump_distance),
        (1024.0, 680.0)
    );
    assert!(p.chain_split && p.call_chain_clustering && p.split_functions && p.reorder_hot_blocks);
    assert!(!p.inter_function_reordering);
    assert_eq!(p.chain_split_threshold, 0);
    assert_eq!(p.cluster_merge_size_threshold, 2097152);
}

// CodeLayoutScorerTest.GetEdgeScore
#[test]
fn get_edge_score() {
    let fx = cases::parse(cases::SIMPLE_MULTI_FUNCTION);
    let p = LayoutParams {
        fallthrough_weight: 10.0,
        forward_jump_weight: 2.0,
        backward_jump_weight: 1.0,
        forward_jump_distance: 200.0,
        backward_jump_distance: 100.0,
        ..params()
    };
    let cfg = &fx.cfg;
    let size = |r: NodeRef| cfg.functions[r.function].nodes[r.node].size;

    // bar's call to foo: half the calling block is added to the distance.
    let calls: Vec<_> = cfg
        .inter_edges
        .iter()
        .filter(|e| e.src.function == fx.f("bar"))
        .collect();
    assert_eq!(calls.len(), 1);
    let call = calls[0];
    assert_eq!(call.kind, EdgeKind::Call);
    let (w, s, t) = (call.weight as f64, size(call.src), size(call.sink));
    let half = (s / 2) as f64;
    let score = |d| edge_score(&p, call.kind, call.weight, s, t, d);
    assert_eq!(score(-10), w * 1.0 * (1.0 - (10.0 - half) / 100.0));
    assert_eq!(score(0), w * 2.0 * (1.0 - half / 200.0));
    assert_eq!(score(20), w * 2.0 * (1.0 - (20.0 + half) / 200.0));
    assert_eq!(score(250), 0.0);
    assert_eq!(score(-150), 0.0);

    // foo's returns to bar: half the block returned into is added.
    let rets: Vec<_> = cfg
        .inter_edges
        .iter()
        .filter(|e| e.src.function == fx.f("foo"))
        .collect();
    assert_eq!(rets.len(), 2);
    for r in rets {
        assert_eq!(r.kind, EdgeKind::Return);
        let (w, s, t) = (r.weight as f64, size(r.src), size(r.sink));
        let half = (t / 2) as f64;
        let score = |d| edge_score(&p, r.kind, r.weight, s, t, d);
        assert_eq!(score(-10), w * 1.0 * (1.0 - (10.0 - half) / 100.0));
        assert_eq!(score(0), w * 2.0 * (1.0 - half / 200.0));
        assert_eq!(score(20), w * 2.0 * (1.0 - (20.0 + half) / 200.0));
        assert_eq!(score(250), 0.0);
        assert_eq!(score(-150), 0.0);
    }

    let foo = &cfg.functions[fx.f("foo")];
    assert_eq!(foo.edges.len(), 2);
    for e in &foo.edges {
        let w = e.weight as f64;
        let score = |d| edge_score(&p, e.kind, e.weight, 1, 1, d);
        assert_eq!(score(0), w * 10.0);
        assert_eq!(score(-40), w * 1.0 * (1.0 - 40.0 / 100.0));
        assert_eq!(score(80), w * 2.0 * (1.0 - 80.0 / 200.0));
        assert_eq!(score(201), 0.0);
        assert_eq!(score(-101), 0.0);
    }
}

#[test]
fn intra_score_lays_the_order_out_back_to_back() {
    let fx = cases::parse(cases::SIMPLE_CONDITIONALS_JOIN);
    let f = &fx.cfg.functions[0];
    let p = params();
    // 0 1 2 3 4: 0->1, 1->2 and (2 being empty) 1->3 fall through, as does 3->4;
    // 0->2 jumps over 1, 2->4 over 3.
    let want = 110.0 * 10.0
        + 150.0 * (1.0 - 4.0 / 1024.0)
        + 100.0 * 10.0
        + 10.0 * 10.0
        + 250.0 * (1.0 - 2.0 / 1024.0)
        + 10.0 * 10.0;
    assert_near(intra_score(f, &[0, 1, 2, 3, 4], &p), want);
    // Blocks left out take their edges with them.
    assert_near(intra_score(f, &[0, 1], &p), 1100.0);
}

// CodeLayoutTest.BuildClusters: one chain per function, then call-chain clustering
// puts bar's chain first and foo's (which bar calls) right after it.
#[test]
fn build_clusters() {
    let fx = cases::parse(cases::SIMPLE_MULTI_FUNCTION);
    let p = params();
    let ids = |chains: Vec<Vec<Vec<NodeRef>>>| -> Vec<Vec<(usize, u32)>> {
        chains
            .into_iter()
            .map(|c| {
                c.into_iter()
                    .flatten()
                    .map(|r| (r.function, fx.cfg.functions[r.function].nodes[r.node].bb_id))
                    .collect()
            })
            .collect()
    };
    let (foo, bar, baz, qux) = (fx.f("foo"), fx.f("bar"), fx.f("baz"), fx.f("qux"));
    assert_eq!(
        ids(build_chains(&fx.cfg, &p, &[foo, bar, baz, qux])),
        vec![
            vec![(foo, 0), (foo, 2), (foo, 1)],
            vec![(bar, 0), (bar, 1), (bar, 3), (bar, 2), (bar, 4)],
            vec![(qux, 0)],
        ]
    );
    let l = code_layout(&fx.cfg, &p);
    assert_eq!(
        placed(&fx, &l),
        vec![
            ("bar".into(), vec![0, 1, 3, 2, 4]),
            ("foo".into(), vec![0, 2, 1]),
            ("qux".into(), vec![0]),
        ]
    );
}

// CodeLayoutTest.FindOptimalFallthroughNoSplitChains
#[test]
fn find_optimal_fallthrough_no_split_chains() {
    let p = LayoutParams {
        chain_split: false,
        ..params()
    };
    let (fx, l) = layout(cases::TWO_CONDITIONALS_IN_LOOP, &p);
    assert_eq!(l.functions.len(), 1);
    let foo = of(&fx, &l, "foo");
    assert_eq!(foo.clusters, vec![vec![0, 1, 2, 4, 3]]);
    assert!(foo.intra_score_after > foo.intra_score_before);
}

// CodeLayoutTest.FindOptimalFallthroughSplitChains
#[test]
fn find_optimal_fallthrough_split_chains() {
    let p = LayoutParams {
        chain_split: true,
        ..params()
    };
    let (fx, l) = layout(cases::TWO_CONDITIONALS_IN_LOOP, &p);
    assert_eq!(l.functions.len(), 1);
    let foo = of(&fx, &l, "foo");
    assert_eq!(foo.clusters, vec![vec![0, 1, 3, 2, 4]]);
    assert!(foo.intra_score_after > foo.intra_score_before);
}

// CodeLayoutTest.FindOptimalLoopLayout
#[test]
fn find_optimal_loop_layout() {
    let (fx, l) = layout(cases::SIMPLE_LOOP, &params());
    assert_eq!(l.functions.len(), 1);
    let foo = of(&fx, &l, "foo.alias");
    assert_eq!(foo.clusters, vec![vec![0, 1, 3, 4]]);
    assert_eq!(foo.cold, vec![2]);
    assert!(foo.intra_score_after > foo.intra_score_before);
}

// CodeLayoutTest.FindOptimalNestedLoopLayout
#[test]
fn find_optimal_nested_loop_layout() {
    let (fx, l) = layout(cases::NESTED_LOOP, &params());
    assert_eq!(l.functions.len(), 1);
    let foo = of(&fx, &l, "foo");
    assert_eq!(foo.clusters, vec![vec![0, 3, 1, 4, 5, 2]]);
    assert!(foo.cold.is_empty());
    assert!(foo.intra_score_after > foo.intra_score_before);
}

// CodeLayoutTest.FindOptimalMultiFunctionLayout
#[test]
fn find_optimal_multi_function_layout() {
    let p = LayoutParams {
        call_chain_clustering: true,
        ..params()
    };
    let (fx, l) = layout(cases::SIMPLE_MULTI_FUNCTION, &p);
    let names: Vec<&str> = l
        .functions
        .iter()
        .map(|f| fx.cfg.functions[f.function].name.as_str())
        .collect();
    assert_eq!(names, ["foo", "bar", "qux"]);
    assert_eq!(of(&fx, &l, "foo").clusters, vec![vec![0, 2, 1]]);
    assert_eq!(of(&fx, &l, "bar").clusters, vec![vec![0, 1, 3, 2, 4]]);
    assert_eq!(of(&fx, &l, "bar").cold, vec![5]);
    assert_eq!(of(&fx, &l, "qux").clusters, vec![vec![0]]);
    // bar's cluster comes first, then foo's, then qux's.
    let order: Vec<String> = placed(&fx, &l).into_iter().map(|p| p.0).collect();
    assert_eq!(order, ["bar", "foo", "qux"]);

    // The optimized scores (intra, inter-out), laid out from 0 in the new order.
    assert_near(of(&fx, &l, "foo").intra_score_after, 819.88281);
    assert_near(of(&fx, &l, "bar").intra_score_after, 2020.0);
    assert_near(of(&fx, &l, "qux").intra_score_after, 9.91176);
    let at = layout_addresses(&fx.cfg, &l);
    let after = program_scores(&fx.cfg, &p, |r| at[r.function][r.node]);
    let expect = [
        ("foo", 819.88281, 0.0),
        ("bar", 2020.0, 97.36328),
        ("qux", 9.91176, 0.0),
    ];
    for (name, intra, inter) in expect {
        assert_near(after[fx.f(name)].intra, intra);
        assert_near(after[fx.f(name)].inter_out, inter);
    }
    // The reference's original scores: its CFG fixtures place every block at 0.
    let before = program_scores(&fx.cfg, &p, |_| Some(0));
    let expect = [
        ("foo", 98.82353, 0.0),
        ("bar", 199.62353, 99.55882),
        ("qux", 9.91176, 0.0),
    ];
    for (name, intra, inter) in expect {
        assert_near(before[fx.f(name)].intra, intra);
        assert_near(before[fx.f(name)].inter_out, inter);
    }
}

// CodeLayoutTest.FindLayoutNoReorderHotBlocks
#[test]
fn find_layout_no_reorder_hot_blocks() {
    let p = LayoutParams {
        reorder_hot_blocks: false,
        ..params()
    };
    let (fx, l) = layout(cases::MULTIPLE_COLD_BLOCKS, &p);
    assert_eq!(l.functions.len(), 1);
    let foo = of(&fx, &l, "foo");
    assert_eq!(foo.clusters, vec![vec![0, 1, 3]]);
    assert_eq!(foo.cold, vec![2, 4]);
}

// CodeLayoutTest.FindLayoutNoFunctionSplit
#[test]
fn find_layout_no_function_split() {
    let p = LayoutParams {
        split_functions: false,
        ..params()
    };
    let (fx, l) = layout(cases::MULTIPLE_COLD_BLOCKS, &p);
    assert_eq!(l.functions.len(), 1);
    let foo = of(&fx, &l, "foo");
    assert_eq!(foo.clusters, vec![vec![0, 3, 1, 2, 4]]);
    assert!(foo.cold.is_empty());
}

// CodeLayoutTest.FindLayoutNoReorderHotBlocksNoFunctionSplit
#[test]
fn find_layout_no_reorder_hot_blocks_no_function_split() {
    let p = LayoutParams {
        split_functions: false,
        reorder_hot_blocks: false,
        ..params()
    };
    let (fx, l) = layout(cases::MULTIPLE_COLD_BLOCKS, &p);
    assert_eq!(l.functions.len(), 1);
    let foo = of(&fx, &l, "foo");
    assert_eq!(foo.clusters, vec![vec![0, 1, 3, 2, 4]]);
    assert!(foo.cold.is_empty());
}

// CodeLayoutTest.PlacesEntryBlockFirstInIntraFunctionOrdering
#[test]
fn places_entry_block_first_in_intra_function_ordering() {
    let (fx, l) = layout(cases::LOOP_AFTER_ENTRY, &params());
    assert_eq!(l.functions.len(), 1);
    assert_eq!(of(&fx, &l, "foo").clusters, vec![vec![0, 1, 2, 3]]);
}

// CodeLayoutTest.FindOptimalLayoutHotAndColdLandingPads: the cold landing pad (3)
// stays with the hot one, in the hot part.
#[test]
fn find_optimal_layout_hot_and_cold_landing_pads() {
    let (fx, l) = layout(cases::HOT_AND_COLD_LANDING_PADS, &params());
    let foo = of(&fx, &l, "foo");
    assert_eq!(foo.clusters, vec![vec![0, 1, 4, 2, 5, 3]]);
    assert!(foo.cold.is_empty());
}

// CodeLayoutTest.FindOptimalLayoutAllColdLandingPads: both landing pads go cold.
#[test]
fn find_optimal_layout_all_cold_landing_pads() {
    let (fx, l) = layout(cases::ALL_COLD_LANDING_PADS, &params());
    let foo = of(&fx, &l, "foo");
    assert_eq!(foo.clusters, vec![vec![0, 1, 4, 5]]);
    assert_eq!(foo.cold, vec![2, 3]);
}

fn with_initial(chain_split: bool, chains: Vec<Vec<usize>>) -> Vec<Vec<u32>> {
    let fx = cases::parse(cases::LOOP_AFTER_ENTRY);
    let p = LayoutParams {
        chain_split,
        ..params()
    };
    let initial = BTreeMap::from([(0, chains)]);
    let l = code_layout_with_initial_chains(&fx.cfg, &p, &initial);
    assert_eq!(l.functions.len(), 1);
    l.functions[0].clusters.clone()
}

// CodeLayoutTest.KeepsInitialChainsWithoutChainSplit
#[test]
fn keeps_initial_chains_without_chain_split() {
    assert_eq!(
        with_initial(false, vec![vec![0, 2]]),
        vec![vec![0, 2, 1, 3]]
    );
}

// CodeLayoutTest.KeepsMultipleInitialChainsWithoutChainSplit
#[test]
fn keeps_multiple_initial_chains_without_chain_split() {
    assert_eq!(
        with_initial(false, vec![vec![0, 2], vec![3, 1]]),
        vec![vec![0, 2, 3, 1]]
    );
}

// CodeLayoutTest.BreaksInitialChainsWithChainSplit
#[test]
fn breaks_initial_chains_with_chain_split() {
    assert_eq!(with_initial(true, vec![vec![0, 2]]), vec![vec![0, 1, 2, 3]]);
}

// CodeLayoutTest.KeepsProfitableInitialChainsWithChainSplit
#[test]
fn keeps_profitable_initial_chains_with_chain_split() {
    assert_eq!(with_initial(true, vec![vec![1, 2]]), vec![vec![0, 1, 2, 3]]);
}

// CodeLayoutTest.BreaksInitialChainsWithChainSplitEdgeFromMiddle
#[test]
fn breaks_initial_chains_with_chain_split_edge_from_middle() {
    assert_eq!(
        with_initial(true, vec![vec![0, 1, 3]]),
        vec![vec![0, 1, 2, 3]]
    );
}

// CodeLayoutTest.BreaksInitialChainsWithChainSplitEdgeToMiddle
#[test]
fn breaks_initial_chains_with_chain_split_edge_to_middle() {
    assert_eq!(
        with_initial(true, vec![vec![1, 3, 2]]),
        vec![vec![0, 3, 2, 1]]
    );
}

// CodeLayoutTest.FailsWithDuplicateNodesInInitialChains
#[test]
#[should_panic(expected = "is in two initial chains")]
fn fails_with_duplicate_nodes_in_initial_chains() {
    with_initial(false, vec![vec![1, 2], vec![2, 3]]);
}

fn inter() -> LayoutParams {
    LayoutParams {
        inter_function_reordering: true,
        ..params()
    }
}

/// The chains of `functions`, each as (function name, block ID) per bundle.
fn chains(fx: &Fixture, p: &LayoutParams, functions: &[&str]) -> Vec<Vec<Vec<(String, u32)>>> {
    let fs: Vec<usize> = functions.iter().map(|n| fx.f(n)).collect();
    build_chains(&fx.cfg, p, &fs)
        .into_iter()
        .map(|c| {
            c.into_iter()
                .map(|b| {
                    b.into_iter()
                        .map(|r| {
                            let f = &fx.cfg.functions[r.function];
                            (f.name.clone(), f.nodes[r.node].bb_id)
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

fn flat(c: &[Vec<(String, u32)>]) -> Vec<(&str, u32)> {
    c.iter().flatten().map(|(n, b)| (n.as_str(), *b)).collect()
}

// NodeChainBuilderTest.BuildChainsSingleCfg
#[test]
fn build_chains_single_cfg() {
    let fx = cases::parse(cases::SIMPLE_MULTI_FUNCTION);
    let c = chains(&fx, &params(), &["bar"]);
    assert_eq!(c.len(), 1);
    assert_eq!(
        flat(&c[0]),
        [("bar", 0), ("bar", 1), ("bar", 3), ("bar", 2), ("bar", 4)]
    );
}

// NodeChainBuilderTest.BuildChainsMultipleCfgsInterFunction
#[test]
fn build_chains_multiple_cfgs_inter_function() {
    let fx = cases::parse(cases::SIMPLE_MULTI_FUNCTION);
    let c = chains(&fx, &inter(), &["foo", "bar", "baz", "qux"]);
    let mut c: Vec<Vec<(&str, u32)>> = c.iter().map(|c| flat(c)).collect();
    c.sort();
    assert_eq!(
        c,
        vec![
            vec![
                ("bar", 0),
                ("bar", 1),
                ("bar", 3),
                ("foo", 0),
                ("foo", 2),
                ("foo", 1)
            ],
            vec![("bar", 2), ("bar", 4)],
            vec![("qux", 0)],
        ]
    );
}

// NodeChainBuilderTest.LargeBlocksPreventMerge: 4 joins neither 1 nor 3, which are
// so large that the 2 -> 4 edge earns nothing.
#[test]
fn large_blocks_prevent_merge() {
    let fx = cases::parse(cases::TWO_LARGE_BLOCKS);
    let c = chains(&fx, &inter(), &["foo", "bar"]);
    let mut c: Vec<Vec<(&str, u32)>> = c.iter().map(|c| flat(c)).collect();
    c.sort();
    assert_eq!(
        c,
        vec![
            vec![("foo", 0), ("foo", 1), ("foo", 2)],
            vec![("foo", 3), ("bar", 0)],
        ]
    );
}

// ChainBuilderSplitThresholdTest.BuildChains: with inter-function reordering, a merge
// of chains of several functions re-bundles runs of one function's blocks when the
// two chains have more bundles than the threshold.
#[test]
fn chain_builder_split_threshold() {
    let fx = cases::parse(cases::CALL_FROM_SIMPLE_LOOP);
    let b = |v: &[(&str, u32)]| -> Vec<(String, u32)> {
        v.iter().map(|(n, i)| (n.to_string(), *i)).collect()
    };
    type Bundles = Vec<Vec<(String, u32)>>;
    let cases: [(&str, &[&str], u32, Bundles); 5] = [
        (
            "Rebundles1",
            &["foo", "bar"],
            2,
            vec![b(&[("foo", 0), ("foo", 1), ("foo", 2)]), b(&[("bar", 0)])],
        ),
        (
            "Rebundles2",
            &["foo", "bar", "baz"],
            3,
            vec![
                b(&[("baz", 0)]),
                b(&[("foo", 0), ("foo", 1), ("foo", 2)]),
                b(&[("bar", 0)]),
            ],
        ),
        (
            "DoesNotRebundle1",
            &["foo", "bar"],
            3,
            vec![
                b(&[("foo", 0)]),
                b(&[("foo", 1), ("foo", 2)]),
                b(&[("bar", 0)]),
            ],
        ),
        (
            "DoesNotRebundle2",
            &["foo", "bar"],
            4,
            vec![
                b(&[("foo", 0)]),
                b(&[("foo", 1), ("foo", 2)]),
                b(&[("bar", 0)]),
            ],
        ),
        (
            "DoesNotRebundle3",
            &["foo", "bar", "baz"],
            4,
            vec![
                b(&[("baz", 0)]),
                b(&[("foo", 0)]),
                b(&[("foo", 1), ("foo", 2)]),
                b(&[("bar", 0)]),
            ],
        ),
    ];
    for (name, functions, threshold, bundles) in cases {
        let p = LayoutParams {
            inter_function_reordering: true,
            chain_split: true,
            chain_split_threshold: threshold,
            ..params()
        };
        let c = chains(&fx, &p, functions);
        assert_eq!(c, vec![bundles], "{name}");
    }
}

// CodeLayoutTest.FindOptimalMultiFunctionLayoutInterFunction: bar is cut in two, with
// foo and qux in between.
#[test]
fn find_optimal_multi_function_layout_inter_function() {
    let p = LayoutParams {
        call_chain_clustering: true,
        ..inter()
    };
    let (fx, l) = layout(cases::SIMPLE_MULTI_FUNCTION, &p);
    assert_eq!(of(&fx, &l, "foo").clusters, vec![vec![0, 2, 1]]);
    assert_eq!(of(&fx, &l, "bar").clusters, vec![vec![0, 1, 3], vec![2, 4]]);
    assert_eq!(of(&fx, &l, "qux").clusters, vec![vec![0]]);
    assert_eq!(
        placed(&fx, &l),
        vec![
            ("bar".into(), vec![0, 1, 3]),
            ("foo".into(), vec![0, 2, 1]),
            ("qux".into(), vec![0]),
            ("bar".into(), vec![2, 4]),
        ]
    );
    let at = layout_addresses(&fx.cfg, &l);
    let after = program_scores(&fx.cfg, &p, |r| at[r.function][r.node]);
    let expect = [
        ("foo", 819.88281, 0.0),
        ("bar", 2020.0, 99.12109),
        ("qux", 9.91176, 0.0),
    ];
    for (name, intra, inter) in expect {
        assert_near(after[fx.f(name)].intra, intra);
        assert_near(after[fx.f(name)].inter_out, inter);
        assert_near(of(&fx, &l, name).intra_score_after, intra);
    }
}

// CodeLayoutTest.PlacesBlocksBeforeEntryInInterFunctionOrdering
#[test]
fn places_blocks_before_entry_in_inter_function_ordering() {
    let (fx, l) = layout(cases::LOOP_AFTER_ENTRY, &inter());
    assert_eq!(of(&fx, &l, "foo").clusters, vec![vec![0, 1, 2], vec![3]]);
    assert_eq!(l.order, vec![(0, 1), (0, 0)]);
}

// CodeLayoutTest.FindOptimalInterFunctionLayoutHotAndColdLandingPads: a function with
// several landing pads, one hot, is laid out on its own and kept whole.
#[test]
fn find_optimal_inter_function_layout_hot_and_cold_landing_pads() {
    let (fx, l) = layout(cases::HOT_AND_COLD_LANDING_PADS, &inter());
    assert_eq!(of(&fx, &l, "foo").clusters, vec![vec![0, 1, 4, 2, 5, 3]]);
}

#[test]
fn every_cold_block_is_listed_once_and_the_entry_leads() {
    for text in [
        cases::SIMPLE_MULTI_FUNCTION,
        cases::SIMPLE_LOOP,
        cases::NESTED_LOOP,
        cases::MULTIPLE_COLD_BLOCKS,
        cases::ALL_COLD_LANDING_PADS,
        cases::THREE_BRANCHES,
        cases::TWO_LARGE_BLOCKS,
    ] {
        for p in [params(), inter()] {
            let (fx, l) = layout(text, &p);
            for fl in &l.functions {
                let f = &fx.cfg.functions[fl.function];
                assert_eq!(fl.clusters[0][0], f.nodes[0].bb_id);
                let mut all: Vec<u32> = fl
                    .clusters
                    .iter()
                    .flatten()
                    .chain(&fl.cold)
                    .copied()
                    .collect();
                all.sort();
                let mut ids: Vec<u32> = f.nodes.iter().map(|n| n.bb_id).collect();
                ids.sort();
                assert_eq!(all, ids);
            }
            let mut seen = l.order.clone();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), l.order.len());
            let clusters: usize = l.functions.iter().map(|f| f.clusters.len()).sum();
            assert_eq!(clusters, l.order.len());
        }
    }
}
