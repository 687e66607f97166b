//! `kfdo compare --tag` / `--baseline-tag` end to end with the real binary: two tags
//! recorded one after the other (as two boots would be) and judged from the store; a
//! tag recorded on another kernel refused unless forced; every error names the store
//! and the fix and writes nothing.

use kfdo_testkit::ok;
use std::path::Path;
use std::process::{Command, Output};

fn kfdo() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kfdo"))
}

/// A shell loop of `n` iterations: CPU work whose length we choose.
fn spin(n: u32) -> String {
    format!("i=0; while [ $i -lt {n} ]; do i=$((i+1)); done")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `kfdo compare --tag TAG` of `cmd` into `db`, `runs` timed runs, no counters.
fn record(db: &Path, tag: &str, runs: &str, cmd: &str, extra: &[&str]) -> Output {
    kfdo()
        .args([
            "compare",
            "--counters",
            "none",
            "--runs",
            runs,
            "--tag",
            tag,
        ])
        .args(["--benchmark", "loop", "--store"])
        .arg(db)
        .args(extra)
        .arg("--")
        .arg(cmd)
        .output()
        .unwrap()
}

fn compare_tags(db: &Path, args: &[&str]) -> Output {
    kfdo()
        .args(["compare", "--store"])
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn stored_runs(db: &Path, tag: &str) -> usize {
    let c = kfdo_bench::store::Store::open_existing(db)
        .unwrap()
        .load()
        .unwrap();
    c.benchmarks
        .iter()
        .flat_map(|b| &b.variants)
        .filter(|v| v.variant.name == tag)
        .map(|v| v.runs.len())
        .sum()
}

#[test]
fn two_tags_are_judged_from_the_store_with_the_not_interleaved_warning() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kernels.db");
    let json = dir.path().join("verdict.json");
    // "Boot A", then "boot B": B runs 50x the work, so that no load on the machine can
    // turn the direction of the difference around (its significance is not asserted:
    // wall-clock spread depends on the machine; `kfdo_bench::tagged`'s own tests judge
    // synthetic samples).
    ok(record(&db, "A", "10", &spin(1_000), &[]), "--tag A");
    ok(record(&db, "B", "10", &spin(50_000), &[]), "--tag B");
    // A second session of A adds runs to it.
    let again = ok(record(&db, "A", "2", &spin(1_000), &[]), "--tag A again");
    assert!(
        text(&again.stderr).contains("runs added to 1 earlier session(s) of the tag"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(stored_runs(&db, "A"), 12);

    // No --benchmark: 'loop' is the only benchmark with both tags.
    let out = ok(
        compare_tags(
            &db,
            &[
                "--baseline-tag",
                "A",
                "--tag",
                "B",
                "--json",
                json.to_str().unwrap(),
            ],
        ),
        "--baseline-tag A --tag B",
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    println!("{stdout}{stderr}");

    // Headed by each tag's kernel: uname -r and the build-id from /sys/kernel/notes.
    let release = text(&Command::new("uname").arg("-r").output().unwrap().stdout)
        .trim()
        .to_string();
    assert!(
        stdout.contains("measured in separate boots, not interleaved"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("baseline 'A': kernel {release}, build-id ")),
        "{stdout}"
    );
    assert!(
        stdout.contains("12 run(s) in 2 session(s)")
            && stdout.contains("10 run(s) in 1 session(s)"),
        "{stdout}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let build_id = doc["baseline"]["kernels"][0]["build_id"].clone();
    if let Ok(notes) = std::fs::read("/sys/kernel/notes") {
        // The id's bytes follow a "GNU\0" name in the kernel's own notes.
        let id = build_id
            .as_str()
            .expect("notes are readable, so the id is known");
        assert!(
            id.len() >= 16
                && id
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        let bytes: Vec<u8> = (0..id.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&id[i..i + 2], 16).unwrap())
            .collect();
        let mut gnu_then_id = b"GNU\0".to_vec();
        gnu_then_id.extend(&bytes);
        assert!(
            notes.windows(gnu_then_id.len()).any(|w| w == gnu_then_id),
            "build-id {id} is not in /sys/kernel/notes"
        );
        assert!(stdout.contains(&format!("build-id {id}")), "{stdout}");
    } else {
        assert!(build_id.is_null());
        assert!(stderr.contains("build-id is unknown"), "{stderr}");
    }

    // The same table as an interleaved comparison: B against the baseline A, slower.
    assert!(
        stdout.contains("benchmark 'loop' (baseline 'A')"),
        "{stdout}"
    );
    let b_line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("B "))
        .unwrap_or_else(|| panic!("no line for B:\n{stdout}"));
    assert!(b_line.contains(" 10 runs  time "), "{b_line}");
    let b = &doc["analysis"]["variants"][1];
    assert_eq!(b["name"], "B");
    assert!(b["vs_baseline"]["significant"].is_boolean(), "{b}");
    assert!(
        b["vs_baseline"]["ratio"]["estimate"].as_f64().unwrap() > 1.0,
        "50x the work measured faster: {b}"
    );

    // The typed warnings: separate boots; and here both tags ran one kernel.
    assert!(
        stderr.contains("warning: not interleaved: 'A' and 'B' were measured in separate boots"),
        "{stderr}"
    );
    let kinds: Vec<&str> = doc["analysis"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds[0], "not_interleaved", "{kinds:?}");
    if !build_id.is_null() {
        assert!(kinds.contains(&"same_kernel"), "{kinds:?}");
        assert!(
            stderr.contains("warning: same kernel: 'A' and 'B'"),
            "{stderr}"
        );
    }

    // `kfdo report` shows the tags as the benchmark's variants.
    let report = dir.path().join("report");
    ok(
        kfdo()
            .args(["report", "--store"])
            .arg(&db)
            .arg("-o")
            .arg(&report)
            .output()
            .unwrap(),
        "kfdo report",
    );
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(
        md.contains("| A | 12 |") && md.contains("| B | 10 |"),
        "{md}"
    );
}

#[test]
fn errors_name_the_store_and_the_fix_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kernels.db");
    let json = dir.path().join("v.json");
    let shown = db.display().to_string();
    ok(record(&db, "A", "2", "true", &[]), "--tag A");
    ok(record(&db, "B", "1", "true", &[]), "--tag B");

    let fails = |args: &[&str], expect: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--json", json.to_str().unwrap()]);
        let out = compare_tags(&db, &all);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{args:?} printed {}",
            text(&out.stdout)
        );
        assert!(!json.exists(), "{args:?} wrote the JSON");
        for e in expect {
            assert!(err.contains(e), "{args:?}: expected {e:?} in:\n{err}");
        }
    };
    fails(
        &["--baseline-tag", "A", "--tag", "C"],
        &[&shown, "no tag 'C'", "its tags are 'loop': A, B"],
    );
    fails(
        &["--baseline-tag", "A", "--tag", "B", "--", "true"],
        &[&shown, "record each tag first with `--tag NAME -- CMD`"],
    );
    fails(
        &["--baseline-tag", "A"],
        &[&shown, "needs --tag NAME", "--baseline-tag A --tag NAME"],
    );
    fails(
        &["--baseline-tag", "A", "--tag", "B"],
        &[
            &shown,
            "tag 'B' of benchmark 'loop' has 1 timed run(s)",
            "--tag B",
        ],
    );
    fails(
        &["--baseline-tag", "A", "--tag", "B", "--benchmark", "other"],
        &[
            &shown,
            "benchmark 'other' does not have both tags",
            "'loop'",
        ],
    );
    let missing = dir.path().join("none.db");
    let out = compare_tags(&missing, &["--baseline-tag", "A", "--tag", "B"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("{} does not exist", missing.display()))
            && err.contains("--tag NAME --store"),
        "{err}"
    );
    assert!(!missing.exists(), "a missing store must not be created");
    // A tag must be measured with a command.
    let out = compare_tags(&db, &["--tag", "C"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("-- CMD"),
        "{}",
        text(&out.stderr)
    );
}

/// A tag stored as another kernel's: a session whose environment names a kernel that
/// is not this one.
fn store_tag_of_another_kernel(db: &Path, tag: &str, build_id: &str) {
    use kfdo_bench::runner::{Arm, RunResult};
    let s = kfdo_bench::store::Store::open(db).unwrap();
    let env = serde_json::json!({
        kfdo_bench::tagged::KERNEL_KEY: {"release": "0.0.0-elsewhere", "build_id": build_id}
    });
    let settings = serde_json::json!({ kfdo_bench::tagged::TAG_KEY: tag });
    let session = s.begin_session("loop", &env, &settings).unwrap();
    let v = s.variant("loop", &Arm::new(tag, "true")).unwrap();
    for i in 0..3 {
        let r = RunResult {
            metrics: Vec::new(),
            variant: 0,
            index: i,
            seq: i,
            wall_s: 0.002 + i as f64 * 1e-4,
            user_s: 0.001,
            sys_s: 0.0,
            started_unix: 1.0,
        };
        s.add_run(session, v, &r).unwrap();
    }
    s.finish_session(session, "complete").unwrap();
}

#[test]
fn a_tag_of_another_kernel_is_refused_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kernels.db");
    store_tag_of_another_kernel(&db, "old", "00112233");

    let out = record(&db, "old", "2", "true", &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("tag 'old' was recorded on kernel 0.0.0-elsewhere, build-id 00112233")
            && err.contains("a tag names one kernel")
            && err.contains("--force-tag")
            && err.contains(&db.display().to_string()),
        "{err}"
    );
    assert_eq!(stored_runs(&db, "old"), 3, "a refused tag ran nothing");

    ok(
        record(&db, "old", "2", "true", &["--force-tag"]),
        "--force-tag",
    );
    assert_eq!(stored_runs(&db, "old"), 5);
    ok(record(&db, "new", "3", "true", &[]), "--tag new");
    let out = ok(
        compare_tags(&db, &["--baseline-tag", "old", "--tag", "new"]),
        "--baseline-tag old --tag new",
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        stdout.contains("0.0.0-elsewhere, build-id 00112233; "),
        "{stdout}"
    );
    assert!(
        stderr.contains("warning: tag 'old' holds runs of 2 kernels"),
        "{stderr}"
    );
    // 'old' now holds this kernel's runs too, so it shares a kernel with 'new' ...
    if stdout.contains("build-id unknown") {
        return;
    }
    assert!(
        stderr.contains("warning: same kernel: 'old' and 'new'"),
        "{stderr}"
    );
    // ... and a tag of only another build-id does not.
    store_tag_of_another_kernel(&db, "other", "44556677");
    let out = ok(
        compare_tags(&db, &["--baseline-tag", "other", "--tag", "new"]),
        "--baseline-tag other --tag new",
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains("warning: not interleaved"), "{stderr}");
    assert!(!stderr.contains("same kernel"), "{stderr}");
    assert!(!stderr.contains("holds runs of"), "{stderr}");
}
