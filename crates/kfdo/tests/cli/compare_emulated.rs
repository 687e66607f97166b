//! `kfdo compare --counters emulated`: two real builds of lz (clang-19 -O0 and
//! -O2) counted under kfdo's QEMU plugin. The counts are deterministic (two
//! comparisons, through `sh -c` and through `--shell none`, give the same
//! numbers), equal what `kfdo record --counters` writes for the same command,
//! show -O2 executing fewer instructions, and reach the store and the report.
//! A command with shell syntax is refused with a message that says why. lz runs
//! one thread; a program that starts threads (testdata's threads.c) is not
//! deterministic, and is labelled so instead of claimed exact.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::{build, kfdo, run_ok};

const INPUT: &str = "1000000";

fn have_qemu() -> bool {
    kfdo_testkit::require_tools(&["qemu-x86_64"])
}

fn builds(dir: &Path) -> (PathBuf, PathBuf) {
    let (d0, d2) = (dir.join("O0"), dir.join("O2"));
    std::fs::create_dir_all(&d0).unwrap();
    std::fs::create_dir_all(&d2).unwrap();
    // The flag after common::CFLAGS' -O2 wins.
    (build("lz.c", &d0, &["-O0"]), build("lz.c", &d2, &["-O2"]))
}

/// Runs `kfdo compare --counters emulated` on both builds and returns the
/// verdict JSON's counter rows: name -> (source, [O0, O2]).
fn compare(
    dir: &Path,
    db: &Path,
    o0: &Path,
    o2: &Path,
    shell: &str,
) -> Vec<(String, String, [f64; 2])> {
    let json = dir.join(format!("verdict-{shell}.json"));
    run_ok(
        kfdo()
            .args([
                "compare",
                "--benchmark",
                "lz",
                "--runs",
                "2",
                "--warmup",
                "0",
            ])
            .args(["--counters", "emulated", "--shell", shell, "--store"])
            .arg(db)
            .arg("--json")
            .arg(&json)
            .args(["--name", "clang-19 -O0", "--flags", "-O0"])
            .arg(format!("{} {INPUT}", o0.display()))
            .args(["--name", "clang-19 -O2", "--flags", "-O2"])
            .arg(format!("{} {INPUT}", o2.display())),
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    v["benchmark"]["counters"]
        .as_array()
        .unwrap_or_else(|| panic!("no counters in {v}"))
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["source"].as_str().unwrap().to_string(),
                [
                    r["values"][0].as_f64().unwrap(),
                    r["values"][1].as_f64().unwrap(),
                ],
            )
        })
        .collect()
}

#[test]
fn lz_o0_vs_o2_emulated_counters_are_deterministic_and_reach_the_report() {
    if !have_qemu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (o0, o2) = builds(dir.path());
    let db = dir.path().join("results.db");

    let first = compare(dir.path(), &db, &o0, &o2, "sh");
    let second = compare(dir.path(), &db, &o0, &o2, "none");
    for r in &first {
        eprintln!("{:45} {:>14} {:>14}", r.0, r.2[0], r.2[1]);
    }
    assert_eq!(first, second, "emulated counters differ between two runs");
    let row = |name: &str| {
        first
            .iter()
            .find(|r| r.0 == name)
            .unwrap_or_else(|| panic!("no '{name}' row: {first:?}"))
            .clone()
    };
    let (_, source, ins) = row("instructions");
    assert_eq!(source, "emulated");
    assert!(
        ins[1] < 0.8 * ins[0],
        "-O2 should execute far fewer instructions than -O0: {ins:?}"
    );
    for name in [
        "taken branches",
        "conditional branches",
        "L1i misses (model 32K 8-way)",
        "iTLB misses (model 64-entry)",
    ] {
        let (_, s, v) = row(name);
        assert_eq!(s, "emulated");
        assert!(v[0] > 0.0 && v[1] > 0.0, "{name}: {v:?}");
    }

    // The same numbers as `kfdo record --method emulated --counters`, given
    // the same standard streams (stdio's start-up differs by a few dozen
    // instructions between a pipe and /dev/null, a character device).
    let cj = dir.path().join("c.json");
    run_ok(
        kfdo()
            .args(["record", "--method", "emulated", "-o"])
            .arg(dir.path().join("perf.data"))
            .arg("--counters")
            .arg(&cj)
            .arg("--")
            .arg(&o2)
            .arg(INPUT)
            .stdin(Stdio::null())
            .stdout(Stdio::null()),
    );
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cj).unwrap()).unwrap();
    assert_eq!(c["total"]["user"]["instructions"].as_f64(), Some(ins[1]));
    assert_eq!(
        c["total"]["user"]["taken_branches"].as_f64(),
        Some(row("taken branches").2[1])
    );

    // The store holds them, and the report shows them.
    let store = kfdo_bench::store::Store::open_existing(&db).unwrap();
    let contents = store.load().unwrap();
    let b = contents.benchmarks.iter().find(|b| b.name == "lz").unwrap();
    let stored: Vec<&kfdo_bench::counters::Counter> =
        b.variants.iter().flat_map(|v| v.counters.iter()).collect();
    assert!(
        stored
            .iter()
            .any(|c| c.name == "instructions" && c.source == "emulated" && c.value == ins[0]),
        "{stored:?}"
    );
    let rep = dir.path().join("report");
    run_ok(
        kfdo()
            .args(["report", "--store"])
            .arg(&db)
            .arg("-o")
            .arg(&rep),
    );
    let md = std::fs::read_to_string(rep.join("report.md")).unwrap();
    assert!(md.contains("| instructions | emulated |"), "{md}");
    assert!(
        md.contains("| L1i misses (model 32K 8-way) | emulated |"),
        "{md}"
    );
    assert!(md.contains("kfdo's QEMU plugin"), "{md}");
    let html = std::fs::read_to_string(rep.join("index.html")).unwrap();
    assert!(html.contains("taken branches"));
}

#[test]
fn shell_syntax_is_refused_with_the_reason() {
    if !have_qemu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = kfdo()
        .args([
            "compare",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--counters",
            "emulated",
            "--store",
        ])
        .arg(dir.path().join("r.db"))
        .arg("true | cat")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not follow exec"), "{err}");
    assert!(err.contains("'|' at byte 5"), "{err}");
    assert!(err.contains("--counters cachegrind"), "{err}");
}

#[test]
fn counts_with_stdin_closed() {
    if !have_qemu() {
        return;
    }
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("v.json");
    let mut cmd = kfdo();
    cmd.args([
        "compare",
        "-q",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--counters",
        "emulated",
    ])
    .arg("--store")
    .arg(dir.path().join("r.db"))
    .arg("--json")
    .arg(&json)
    .arg("/bin/echo counted");
    // SAFETY: only close (async-signal-safe) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::close(0);
            Ok(())
        });
    }
    run_ok(&mut cmd);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = v["benchmark"]["counters"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["name"] == "instructions" && r["values"][0].as_f64().unwrap() > 0.0),
        "{v}"
    );
}

/// Runs `kfdo compare --counters emulated` on `variants` (name, command) of
/// testdata's threads program, and returns the terminal summary, the verdict
/// JSON and the Markdown report.
fn compare_threads(
    dir: &Path,
    tag: &str,
    variants: &[(&str, String)],
) -> (String, serde_json::Value, String) {
    let db = dir.join(format!("{tag}.db"));
    let json = dir.join(format!("{tag}.json"));
    let mut cmd = kfdo();
    cmd.args([
        "compare",
        "--benchmark",
        tag,
        "--runs",
        "2",
        "--warmup",
        "0",
    ])
    .args(["--counters", "emulated", "--shell", "none", "--store"])
    .arg(&db)
    .arg("--json")
    .arg(&json);
    for (name, command) in variants {
        cmd.args(["--name", name]).arg(command);
    }
    let o = run_ok(&mut cmd);
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rep = dir.join(format!("{tag}-report"));
    run_ok(
        kfdo()
            .args(["report", "--store"])
            .arg(&db)
            .arg("-o")
            .arg(&rep),
    );
    let md = std::fs::read_to_string(rep.join("report.md")).unwrap();
    (out, v, md)
}

/// A program that starts threads gets no determinism claim: its counts vary with how
/// the threads interleave. The plugin's thread count reaches the JSON, the terminal
/// and the report as "not deterministic: 5 threads" (main and 4 workers), with the
/// spread of its three counts; single-threaded variants alone keep the claim.
#[test]
fn a_threaded_program_is_labelled_not_deterministic_and_only_single_threads_are_claimed_exact() {
    if !have_qemu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = build("threads.c", dir.path(), &["-pthread"]);
    let exact = "deterministic (the same binary and input give the same numbers";

    let (out, v, md) = compare_threads(
        dir.path(),
        "mixed",
        &[
            ("one", format!("{} 0 20000", bin.display())),
            ("four", format!("{} 4 20000", bin.display())),
        ],
    );
    let rows = v["benchmark"]["counters"].as_array().unwrap();
    let ins = rows
        .iter()
        .find(|r| r["name"] == "instructions")
        .unwrap_or_else(|| panic!("no instructions row: {v}"));
    assert_eq!(ins["labels"][0], serde_json::Value::Null, "{ins}");
    assert_eq!(ins["labels"][1], "not deterministic: 5 threads", "{ins}");
    assert_eq!(ins["spreads"][1]["counts"], 3, "{ins}");
    let (lo, hi) = (
        ins["spreads"][1]["min"].as_f64().unwrap(),
        ins["spreads"][1]["max"].as_f64().unwrap(),
    );
    let median = ins["values"][1].as_f64().unwrap();
    assert!(lo <= median && median <= hi, "{ins}");
    let label =
        "'four' (emulated): not deterministic: 5 threads; the cells are the median of 3 counts";
    assert!(out.contains(label), "{out}");
    assert!(md.contains(label), "{md}");
    for text in [&out, &md, &v.to_string()] {
        assert!(!text.contains(exact), "claimed deterministic: {text}");
    }
    assert!(md.contains("not deterministic for 'four'"), "{md}");

    // Single-threaded programs only: the claim holds, and is made.
    let (out, v, md) = compare_threads(
        dir.path(),
        "single",
        &[
            ("small", format!("{} 0 20000", bin.display())),
            ("large", format!("{} 0 30000", bin.display())),
        ],
    );
    assert!(md.contains(exact), "{md}");
    assert!(
        !md.contains("not deterministic") && !out.contains("not deterministic"),
        "{md}\n{out}"
    );
    let rows = v["benchmark"]["counters"].as_array().unwrap();
    assert!(
        rows.iter()
            .all(|r| r["labels"].as_array().unwrap().iter().all(|l| l.is_null())),
        "{v}"
    );
}
