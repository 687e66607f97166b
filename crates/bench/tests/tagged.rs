//! `tagged::compare_tags` on stores holding tags of several benchmarks and kernels:
//! which benchmark is judged, and what the verdict warns about.

use std::path::Path;

use kfdo_bench::runner::{Arm, RunResult};
use kfdo_bench::store::Store;
use kfdo_bench::tagged::{compare_tags, TagCompareRequest, TagError, KERNEL_KEY, TAG_KEY};
use kfdo_bench::Warning;

/// One tagged session of `benchmark`, as `kfdo compare --tag` stores it, with these
/// wall times on kernel `build_id`.
fn tag_session(db: &Path, benchmark: &str, tag: &str, build_id: &str, times: &[f64]) {
    let s = Store::open(db).unwrap();
    let env = serde_json::json!({ KERNEL_KEY: {"release": "6.12.0", "build_id": build_id} });
    let settings = serde_json::json!({ TAG_KEY: tag });
    let session = s.begin_session(benchmark, &env, &settings).unwrap();
    let v = s.variant(benchmark, &Arm::new(tag, "./workload")).unwrap();
    for (i, &t) in times.iter().enumerate() {
        let r = RunResult {
            metrics: Vec::new(),
            variant: 0,
            index: i,
            seq: i,
            wall_s: t,
            user_s: t,
            sys_s: 0.0,
            started_unix: 1.0,
        };
        s.add_run(session, v, &r).unwrap();
    }
    s.finish_session(session, "complete").unwrap();
}

fn request(db: &Path, benchmark: Option<&str>) -> TagCompareRequest {
    TagCompareRequest {
        store: db.to_path_buf(),
        baseline: "base".into(),
        tag: "fdo".into(),
        benchmark: benchmark.map(String::from),
        json: None,
    }
}

const BASE: [f64; 6] = [1.00, 1.01, 0.99, 1.02, 1.00, 0.98];
const FASTER: [f64; 6] = [0.90, 0.91, 0.89, 0.90, 0.92, 0.90];

#[test]
fn two_benchmarks_with_both_tags_need_benchmark() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    for bench in ["hackbench", "netperf"] {
        tag_session(&db, bench, "base", "aa", &BASE);
        tag_session(&db, bench, "fdo", "bb", &FASTER);
    }
    // A benchmark with only one of the tags is not a candidate.
    tag_session(&db, "fio", "base", "aa", &BASE);

    let e = compare_tags(&request(&db, None)).unwrap_err();
    assert!(matches!(e, TagError::Benchmark { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("2 benchmarks have both tags") && msg.contains("'hackbench', 'netperf'"),
        "{msg}"
    );
    assert!(!msg.contains("fio"), "{msg}");

    let c = compare_tags(&request(&db, Some("netperf"))).unwrap();
    assert_eq!(c.analysis.name, "netperf");
    assert_eq!(c.analysis.baseline, "base");
    let fdo = c.analysis.variants[1].vs_baseline.as_ref().unwrap();
    assert!(fdo.significant && (fdo.ratio.estimate - 0.903).abs() < 0.01);
    assert_eq!(
        c.analysis.warnings[0],
        Warning::NotInterleaved {
            baseline: "base".into(),
            tag: "fdo".into()
        }
    );
    // Two build-ids: no "same kernel" warning.
    assert!(!c
        .analysis
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::SameKernel { .. })));
    assert_eq!(c.baseline.kernels[0].build_id.as_deref(), Some("aa"));
    assert!(c
        .summary()
        .contains("tag      'fdo': kernel 6.12.0, build-id bb; 6 run(s)"));
}

#[test]
fn one_kernel_under_two_tags_is_called_out() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    tag_session(&db, "hackbench", "base", "cafe", &BASE);
    tag_session(&db, "hackbench", "fdo", "cafe", &FASTER);
    let c = compare_tags(&request(&db, None)).unwrap();
    assert!(c.analysis.warnings.contains(&Warning::SameKernel {
        baseline: "base".into(),
        tag: "fdo".into(),
        build_id: "cafe".into()
    }));
}

#[test]
fn runs_of_untagged_sessions_are_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    tag_session(&db, "hackbench", "base", "aa", &BASE);
    tag_session(&db, "hackbench", "fdo", "bb", &FASTER);
    // A plain `kfdo compare --name fdo` of the same benchmark: no kernel on record.
    let s = Store::open(&db).unwrap();
    let session = s.begin_session("hackbench", &(), &()).unwrap();
    let v = s
        .variant("hackbench", &Arm::new("fdo", "./workload"))
        .unwrap();
    let r = RunResult {
        metrics: Vec::new(),
        variant: 0,
        index: 0,
        seq: 0,
        wall_s: 50.0,
        user_s: 50.0,
        sys_s: 0.0,
        started_unix: 1.0,
    };
    s.add_run(session, v, &r).unwrap();
    let c = compare_tags(&request(&db, None)).unwrap();
    assert_eq!(c.tag.runs, 6);
    assert_eq!(c.analysis.variants[1].wall_s, FASTER.to_vec());
}
