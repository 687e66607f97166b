//! Unit tests of the chain builder's internals, ported from llvm-propeller's
//! `llvm_propeller_code_layout_test.cc` (the CFGs are in `tests/cases`).

#[path = "../../../tests/cases/mod.rs"]
mod cases;

use super::super::model;

use super::assembly::Reject;
use super::forced::{break_cycles, forced_edges, forced_paths};
use super::graph::Graph;
use super::merge::{Builder, InitialChains};
use super::merge_order::MergeOrder;
use super::params::LayoutParams;

/// The chain holding block `n` of function 0.
fn chain(b: &Builder, n: u32) -> u32 {
    b.cs.chain_of(n).expect("chained")
}

/// A chain's blocks, in order.
fn nodes(b: &Builder, c: u32) -> Vec<u32> {
    b.cs.chains[c as usize]
        .bundles
        .iter()
        .flat_map(|&x| b.cs.bundles[x as usize].nodes.clone())
        .collect()
}

/// The IDs of the live chains.
fn alive(b: &Builder) -> Vec<u32> {
    let mut v: Vec<u32> =
        b.cs.chains
            .iter()
            .filter(|c| c.alive)
            .map(|c| c.id)
            .collect();
    v.sort();
    v
}

/// Edges as (source, sink, weight).
fn edges(g: &Graph, list: &[u32]) -> Vec<(u32, u32, u64)> {
    list.iter()
        .map(|&e| {
            let e = &g.edges[e as usize];
            (e.src, e.sink, e.weight)
        })
        .collect()
}

/// A chain's out-edges by target chain ID, and the IDs of the chains into it.
type Outs = Vec<(u32, Vec<(u32, u32, u64)>)>;

fn outs(b: &Builder, g: &Graph, c: u32) -> Outs {
    let mut v: Outs = b.cs.chains[c as usize]
        .out
        .iter()
        .map(|(&to, list)| (b.cs.chains[to as usize].id, edges(g, list)))
        .collect();
    v.sort();
    v
}

fn ins(b: &Builder, c: u32) -> Vec<u32> {
    let mut v: Vec<u32> = b.cs.chains[c as usize]
        .inn
        .iter()
        .map(|&x| b.cs.chains[x as usize].id)
        .collect();
    v.sort();
    v
}

/// Within half a unit of the last decimal the reference gives.
fn near(got: f64, want: f64) {
    let decimals = format!("{want}").split('.').nth(1).map_or(0, str::len) as i32;
    let eps = 0.5 * 10f64.powi(-decimals) + 1e-9;
    assert!((got - want).abs() <= eps, "gain {got}, expected {want}");
}

/// Each live chain's kept score is the score of its edges as they are laid out.
fn check_scores(b: &Builder, g: &Graph, p: &LayoutParams) {
    for (i, c) in b.cs.chains.iter().enumerate().filter(|(_, c)| c.alive) {
        let direct: f64 = c.intra.iter().map(|&e| b.cs.score_in_chain(g, p, e)).sum();
        assert!(
            (direct - c.score).abs() <= 1e-6 * direct.abs().max(1.0),
            "chain {i}: kept score {} but edges score {direct}",
            c.score
        );
    }
}

macro_rules! join_case {
    ($fx:ident, $g:ident, $p:ident, $b:ident) => {
        let $fx = cases::parse(cases::SIMPLE_CONDITIONALS_JOIN);
        let $g = Graph::new(&$fx.cfg);
        let $p = LayoutParams::default();
        #[allow(unused_mut)]
        let mut $b = Builder::new(&$g, &$p, &[0], &InitialChains::new());
    };
}

// NodeChainAssemblyTest.ApplySUChainMergeOrder
#[test]
fn apply_su_chain_merge_order() {
    join_case!(fx, g, p, b);
    assert_eq!(alive(&b), [0, 1, 2, 3, 4]);
    let a = b
        .assembly(chain(&b, 0), chain(&b, 2), MergeOrder::SU, 0, false)
        .unwrap();
    near(a.gain, 1500.0);
    b.merge(a);
    assert_eq!(nodes(&b, chain(&b, 0)), [0, 2]);
    assert_eq!(alive(&b), [0, 1, 3, 4]);
    check_scores(&b, &g, &p);
}

// NodeChainAssemblyTest.ApplyS1US2ChainMergeOrder
#[test]
fn apply_s1us2_chain_merge_order() {
    join_case!(fx, g, p, b);
    b.append(chain(&b, 0), chain(&b, 2));
    assert_eq!(alive(&b), [0, 1, 3, 4]);
    assert_eq!(nodes(&b, chain(&b, 0)), [0, 2]);
    let a = b
        .assembly(chain(&b, 0), chain(&b, 1), MergeOrder::S1US2, 1, false)
        .unwrap();
    near(a.gain, 749.414);
    b.merge(a);
    assert_eq!(nodes(&b, chain(&b, 0)), [0, 1, 2]);
    assert_eq!(alive(&b), [0, 3, 4]);
    check_scores(&b, &g, &p);
}

// NodeChainAssemblyTest.ApplyUS2S1ChainMergeOrder
#[test]
fn apply_us2s1_chain_merge_order() {
    join_case!(fx, g, p, b);
    b.append(chain(&b, 2), chain(&b, 1));
    assert_eq!(alive(&b), [0, 2, 3, 4]);
    assert_eq!(nodes(&b, chain(&b, 2)), [2, 1]);
    let a = b
        .assembly(chain(&b, 2), chain(&b, 0), MergeOrder::US2S1, 1, false)
        .unwrap();
    near(a.gain, 2150.00230);
    b.merge(a);
    // The merged chain keeps the split chain's ID.
    assert_eq!(alive(&b), [2, 3, 4]);
    assert_eq!(nodes(&b, chain(&b, 2)), [0, 1, 2]);
    check_scores(&b, &g, &p);
}

// NodeChainAssemblyTest.ApplyS2S1UChainMergeOrder
#[test]
fn apply_s2s1u_chain_merge_order() {
    join_case!(fx, g, p, b);
    b.append(chain(&b, 2), chain(&b, 1));
    let a = b
        .assembly(chain(&b, 2), chain(&b, 3), MergeOrder::S2S1U, 1, false)
        .unwrap();
    near(a.gain, 1000.58824);
    b.merge(a);
    assert_eq!(alive(&b), [0, 2, 4]);
    assert_eq!(nodes(&b, chain(&b, 2)), [1, 2, 3]);
    check_scores(&b, &g, &p);
}

// NodeChainAssemblyTest.ApplyS2US1ChainMergeOrder
#[test]
fn apply_s2us1_chain_merge_order() {
    join_case!(fx, g, p, b);
    b.append(chain(&b, 2), chain(&b, 1));
    let a = b
        .assembly(chain(&b, 2), chain(&b, 3), MergeOrder::S2US1, 1, false)
        .unwrap();
    near(a.gain, 100.39292);
    b.merge(a);
    assert_eq!(alive(&b), [0, 2, 4]);
    assert_eq!(nodes(&b, chain(&b, 2)), [1, 3, 2]);
    check_scores(&b, &g, &p);
}

// NodeChainAssemblyBuildStatusTest
#[test]
fn build_node_chain_assembly_status() {
    {
        // EntryInMiddleS2S1UMultiNode
        join_case!(fx, g, p, b);
        b.append(chain(&b, 0), chain(&b, 1));
        let r = b.assembly(chain(&b, 0), chain(&b, 2), MergeOrder::S2S1U, 1, false);
        assert_eq!(r.unwrap_err(), Reject::EntryInMiddle);
    }
    {
        // EntryInMiddleSUMultiNode / EntryInMiddleSUSingleNode
        join_case!(fx, g, p, b);
        let r = b.assembly(chain(&b, 1), chain(&b, 0), MergeOrder::SU, 0, false);
        assert_eq!(r.unwrap_err(), Reject::EntryInMiddle);
    }
    {
        // ZeroScoreGainError / ZeroScoreGainOK
        join_case!(fx, g, p, b);
        let r = b.assembly(chain(&b, 0), chain(&b, 3), MergeOrder::SU, 0, false);
        assert_eq!(r.unwrap_err(), Reject::Zero);
        let r = b.assembly(chain(&b, 0), chain(&b, 3), MergeOrder::SU, 0, true);
        assert_eq!(r.unwrap().gain, 0.0);
    }
    {
        // NegativeScoreGainS1US2Error1 / 2
        join_case!(fx, g, p, b);
        b.append(chain(&b, 0), chain(&b, 1));
        for allow_zero in [false, true] {
            let r = b.assembly(chain(&b, 0), chain(&b, 3), MergeOrder::S1US2, 1, allow_zero);
            match r.unwrap_err() {
                Reject::Negative(gain) => near(gain, -980.303079),
                other => panic!("{other:?}"),
            }
        }
    }
}

// NodeChainAssemblyBuildDeathTest
#[test]
#[should_panic(expected = "cannot merge a chain with itself")]
fn self_merge_dies() {
    join_case!(fx, g, p, b);
    let _ = b.assembly(chain(&b, 0), chain(&b, 0), MergeOrder::SU, 0, false);
}

#[test]
#[should_panic(expected = "outside a chain")]
fn out_of_bounds_slice_pos_dies() {
    join_case!(fx, g, p, b);
    b.append(chain(&b, 0), chain(&b, 1));
    let _ = b.assembly(chain(&b, 0), chain(&b, 2), MergeOrder::US2S1, 2, false);
}

#[test]
#[should_panic(expected = "outside a chain")]
fn slice_pos_in_single_bundle_chain_dies() {
    join_case!(fx, g, p, b);
    let _ = b.assembly(chain(&b, 1), chain(&b, 0), MergeOrder::S1US2, 1, false);
}

// NodeChainBuilderTest.MergeChainsUpdatesChainEdges
#[test]
fn merge_chains_updates_chain_edges() {
    join_case!(fx, g, p, b);
    let (c0, c1, c2, c3, c4) = (
        chain(&b, 0),
        chain(&b, 1),
        chain(&b, 2),
        chain(&b, 3),
        chain(&b, 4),
    );
    assert_eq!(
        outs(&b, &g, c0),
        vec![(1, vec![(0, 1, 110)]), (2, vec![(0, 2, 150)])]
    );
    assert_eq!(ins(&b, c0), Vec::<u32>::new());
    assert_eq!(
        outs(&b, &g, c1),
        vec![(2, vec![(1, 2, 100)]), (3, vec![(1, 3, 10)])]
    );
    assert_eq!(ins(&b, c1), [0]);
    assert_eq!(outs(&b, &g, c2), vec![(4, vec![(2, 4, 250)])]);
    assert_eq!(ins(&b, c2), [0, 1]);
    assert_eq!(outs(&b, &g, c3), vec![(4, vec![(3, 4, 10)])]);
    assert_eq!(ins(&b, c3), [1]);
    assert_eq!(outs(&b, &g, c4), vec![]);
    assert_eq!(ins(&b, c4), [2, 3]);

    b.append(c1, c3);
    assert_eq!(nodes(&b, c1), [1, 3]);
    assert_eq!(
        outs(&b, &g, c0),
        vec![(1, vec![(0, 1, 110)]), (2, vec![(0, 2, 150)])]
    );
    assert_eq!(
        outs(&b, &g, c1),
        vec![(2, vec![(1, 2, 100)]), (4, vec![(3, 4, 10)])]
    );
    assert_eq!(edges(&g, &b.cs.chains[c1 as usize].intra), [(1, 3, 10)]);
    assert_eq!(ins(&b, c1), [0]);
    assert_eq!(outs(&b, &g, c2), vec![(4, vec![(2, 4, 250)])]);
    assert_eq!(ins(&b, c2), [0, 1]);
    assert_eq!(ins(&b, c4), [1, 2]);
    check_scores(&b, &g, &p);
}

// NodeChainBuilderTest.MergeChainsWithAssemblyUpdatesChainEdges
#[test]
fn merge_chains_with_assembly_updates_chain_edges() {
    join_case!(fx, g, p, b);
    let (c0, c1, c2, c4) = (chain(&b, 0), chain(&b, 1), chain(&b, 2), chain(&b, 4));
    b.append(c1, chain(&b, 3));
    let a = b.assembly(c1, c2, MergeOrder::SU, 0, false).unwrap();
    b.merge(a);
    assert_eq!(nodes(&b, c1), [1, 3, 2]);
    assert_eq!(outs(&b, &g, c0), vec![(1, vec![(0, 1, 110), (0, 2, 150)])]);
    assert_eq!(ins(&b, c0), Vec::<u32>::new());
    assert_eq!(outs(&b, &g, c1), vec![(4, vec![(3, 4, 10), (2, 4, 250)])]);
    assert_eq!(
        edges(&g, &b.cs.chains[c1 as usize].intra),
        [(1, 3, 10), (1, 2, 100)]
    );
    assert_eq!(ins(&b, c1), [0]);
    assert_eq!(outs(&b, &g, c4), vec![]);
    assert_eq!(ins(&b, c4), [1]);
    check_scores(&b, &g, &p);
}

// CodeLayoutTest.GetForcedPathsWithLoop
#[test]
fn get_forced_paths_with_loop() {
    let fx = cases::parse(cases::LOOP_NO_ENTRY_NO_EXIT);
    let g = Graph::new(&fx.cfg);
    assert_eq!(forced_paths(&g, 0, true), vec![vec![1, 2]]);
    let mut next = forced_edges(&g, 0, true);
    assert_eq!(
        next.iter().map(|(&a, &b)| (a, b)).collect::<Vec<_>>(),
        [(1, 2), (2, 1)]
    );
    break_cycles(&mut next);
    assert_eq!(
        next.iter().map(|(&a, &b)| (a, b)).collect::<Vec<_>>(),
        [(1, 2)]
    );
}

// CodeLayoutTest.GetForcedPathsNoLoop
#[test]
fn get_forced_paths_no_loop() {
    let fx = cases::parse(cases::THREE_BRANCHES);
    let g = Graph::new(&fx.cfg);
    assert_eq!(forced_paths(&g, 0, true), vec![vec![0, 1], vec![2, 3]]);
    let mut next = forced_edges(&g, 0, true);
    let pairs = [(0, 1), (2, 3)];
    assert_eq!(
        next.iter().map(|(&a, &b)| (a, b)).collect::<Vec<_>>(),
        pairs
    );
    break_cycles(&mut next);
    assert_eq!(
        next.iter().map(|(&a, &b)| (a, b)).collect::<Vec<_>>(),
        pairs
    );
}

#[test]
fn forced_edge_into_the_entry_is_not_bundled_without_inter_function_reordering() {
    // 1 -> 0 is 1's only way out and 0's only way in: llvm-propeller would bundle
    // [1, 0] and so put a block before the entry.
    let fx = cases::parse(
        "
fn kthread @0
  0 8 -> 1:50 2:50
  1 4 -> 0:50
  2 4 -> 3:50
  3 4 -> 1:50
",
    );
    let g = Graph::new(&fx.cfg);
    assert_eq!(forced_edges(&g, 0, false).get(&1), Some(&0));
    assert_eq!(forced_edges(&g, 0, true).get(&1), None);
    let l = super::code_layout(&fx.cfg, &LayoutParams::default());
    assert_eq!(l.functions[0].clusters.len(), 1);
    assert_eq!(l.functions[0].clusters[0][0], 0);
}

// NodeChainBuilderTest.InitNodeChainsCreatesBundlesForLoop
#[test]
fn init_node_chains_creates_bundles_for_loop() {
    let fx = cases::parse(cases::LOOP_NO_ENTRY_NO_EXIT);
    let g = Graph::new(&fx.cfg);
    let p = LayoutParams::default();
    let b = Builder::new(&g, &p, &[0], &InitialChains::new());
    assert_eq!(alive(&b), [0, 1]);
    assert_eq!(nodes(&b, chain(&b, 0)), [0]);
    let c = chain(&b, 1);
    assert_eq!(nodes(&b, c), [1, 2]);
    assert_eq!(b.cs.chains[c as usize].bundles.len(), 1);
}

// NodeChainBuilderTest.BuildChainsSingleCfgInternal
#[test]
fn build_chains_single_cfg_internal() {
    let fx = cases::parse(cases::THREE_BRANCHES);
    let g = Graph::new(&fx.cfg);
    let p = LayoutParams::default();
    let mut b = Builder::new(&g, &p, &[0], &InitialChains::new());
    assert_eq!(alive(&b), [0, 2, 4, 5]);
    assert_eq!(nodes(&b, chain(&b, 0)), [0, 1]);
    assert_eq!(nodes(&b, chain(&b, 2)), [2, 3]);
    for (id, outs_, ins_) in [(0, 2, 0), (2, 0, 0), (4, 0, 1), (5, 0, 1)] {
        let c = &b.cs.chains[chain(&b, id) as usize];
        assert_eq!((c.out.len(), c.inn.len()), (outs_, ins_), "chain {id}");
    }
    b.init_assemblies();
    let mut merges = 0;
    while let Some(a) = b.queue_best() {
        b.merge(a);
        merges += 1;
        check_scores(&b, &g, &p);
    }
    assert_eq!(merges, 2);
    assert_eq!(alive(&b), [0, 2]);
    assert_eq!(nodes(&b, chain(&b, 0)), [0, 1, 4, 5]);
    assert_eq!(nodes(&b, chain(&b, 2)), [2, 3]);
    let built = b.run();
    assert_eq!(built.len(), 1);
    assert_eq!(built[0].nodes().collect::<Vec<_>>(), [0, 1, 4, 5, 2, 3]);
}

/// Every merge of every fixture keeps each chain's score equal to its edges' score:
/// the assemblies' gains are exact.
#[test]
fn kept_scores_match_the_layout_for_every_fixture() {
    for text in [
        cases::SIMPLE_MULTI_FUNCTION,
        cases::TWO_CONDITIONALS_IN_LOOP,
        cases::SIMPLE_LOOP,
        cases::NESTED_LOOP,
        cases::HOT_AND_COLD_LANDING_PADS,
        cases::CALL_FROM_SIMPLE_LOOP,
        cases::SIMPLE_CONDITIONALS_JOIN,
        cases::THREE_BRANCHES,
        cases::LOOP_AFTER_ENTRY,
    ] {
        let fx = cases::parse(text);
        let g = Graph::new(&fx.cfg);
        for threshold in [0, 2, 100] {
            for inter in [false, true] {
                let p = LayoutParams {
                    chain_split_threshold: threshold,
                    inter_function_reordering: inter,
                    ..LayoutParams::default()
                };
                let sets: Vec<Vec<usize>> = if inter {
                    vec![(0..fx.cfg.functions.len()).collect()]
                } else {
                    (0..fx.cfg.functions.len())
                        .filter(|&f| g.is_hot(f))
                        .map(|f| vec![f])
                        .collect()
                };
                for fs in sets {
                    let mut b = Builder::new(&g, &p, &fs, &InitialChains::new());
                    check_scores(&b, &g, &p);
                    b.init_assemblies();
                    while let Some(a) = b.queue_best() {
                        b.merge(a);
                        check_scores(&b, &g, &p);
                    }
                }
            }
        }
    }
}

#[test]
fn fixtures_use_the_models_types() {
    let fx = cases::parse(cases::SIMPLE_MULTI_FUNCTION);
    let _: &model::ProgramCfg = &fx.cfg;
}
