//! `kfdo optimize` end to end on a small real program (tests/programs/lz.c)
//! with every variant: real clang-19 builds, a real emulated-LBR training
//! run, kfdo's and llvm-profgen-19's profiles, instrumented PGO, ThinLTO, a
//! real interleaved benchmark, heat maps and the report. Then the cache:
//! an unchanged rerun does nothing, a changed benchmark command reruns only
//! the benchmark (and the report of it), a deleted build output rebuilds only
//! that variant, and a broken build fails at its step, naming its log.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Which steps ran and which were cached, from the progress lines
/// "[i/n] STEP: done in ..." and "[i/n] STEP: cached ...".
fn steps(out: &Output) -> BTreeMap<String, &'static str> {
    let err = String::from_utf8_lossy(&out.stderr);
    let mut m = BTreeMap::new();
    for line in err.lines() {
        let Some(rest) = line.strip_prefix('[') else {
            continue;
        };
        let Some((_, rest)) = rest.split_once("] ") else {
            continue;
        };
        if let Some((name, how)) = rest.rsplit_once(": ") {
            if how.starts_with("done in") {
                m.insert(name.to_string(), "ran");
            } else if how.starts_with("cached") {
                m.insert(name.to_string(), "cached");
            }
        }
    }
    m
}

fn ran(m: &BTreeMap<String, &'static str>) -> Vec<String> {
    m.iter()
        .filter(|(_, how)| **how == "ran")
        .map(|(s, _)| s.clone())
        .collect()
}

fn write_recipe(dir: &Path, bench_size: &str, build: &str) -> PathBuf {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(common::program_source("lz.c"), src.join("lz.c")).unwrap();
    let recipe = dir.join("recipe.toml");
    std::fs::write(
        &recipe,
        format!(
            r#"name = "lz"
description = "tests/programs/lz.c"
[source]
path = "src"
[build]
command = '{build}'
binary = "lz"
[train]
command = "{{bin}} 400000"
[[bench]]
name = "lz"
command = "{{bin}} {bench_size}"
runs = 3
"#
        ),
    )
    .unwrap();
    recipe
}

const BUILD: &str = r#"$CC $CFLAGS -o lz "$SRC/lz.c" $LDFLAGS"#;

fn optimize(recipe: &Path, out: &Path) -> Output {
    common::kfdo()
        .args([
            "optimize",
            "--method",
            "emulated",
            "--counters",
            "none",
            "-j",
            "2",
            "-o",
        ])
        .arg(out)
        .arg(recipe)
        .output()
        .unwrap()
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "kfdo optimize failed ({}):\n{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn optimize_builds_judges_and_reruns_only_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let recipe = write_recipe(dir.path(), "300000", BUILD);

    // First run: every step runs.
    let first = optimize(&recipe, &out);
    ok(&first);
    let s = steps(&first);
    for step in [
        "build baseline",
        "build ifdo-instrumented",
        "record training run",
        "train ifdo",
        "profile kfdo",
        "profile llvm-profgen",
        "build autofdo",
        "build autofdo-llvm-profgen",
        "build ifdo",
        "build autofdo+thinlto",
        "benchmark",
        "record autofdo (for its heat map)",
        "report",
    ] {
        assert_eq!(s.get(step), Some(&"ran"), "step {step} in {s:?}");
        let log = out
            .join("logs")
            .join(format!("{}.log", step.replace([' ', '(', ')'], "-")));
        assert!(log.is_file(), "no log {}", log.display());
    }
    // The verdict names every variant, and the report holds both heat maps.
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    for v in [
        "baseline",
        "autofdo",
        "autofdo-llvm-profgen",
        "ifdo",
        "autofdo+thinlto",
    ] {
        assert!(
            summary.contains(&format!("| {v} |")),
            "{v} missing:\n{summary}"
        );
    }
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(stdout.contains("report:"), "{stdout}");
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(html.contains("lz: baseline") && html.contains("lz: autofdo"));
    // The AutoFDO builds read a real profile (clang warns of none otherwise):
    // the profile names lz's hot function.
    let shown = common::run_ok(
        common::kfdo()
            .arg("show")
            .arg(out.join("profiles/kfdo.afdo")),
    );
    assert!(String::from_utf8_lossy(&shown.stdout).contains("compress"));

    // Unchanged: nothing runs.
    let again = optimize(&recipe, &out);
    ok(&again);
    assert_eq!(
        ran(&steps(&again)),
        Vec::<String>::new(),
        "{:?}",
        steps(&again)
    );

    // A changed benchmark command: only the benchmark and its report.
    write_recipe(dir.path(), "200000", BUILD);
    let bench = optimize(&recipe, &out);
    ok(&bench);
    assert_eq!(ran(&steps(&bench)), ["benchmark", "report"]);

    // A deleted build output: only that variant is rebuilt; the rebuild is
    // identical, so nothing downstream reruns.
    std::fs::remove_file(out.join("build/autofdo/lz")).unwrap();
    let rebuilt = optimize(&recipe, &out);
    ok(&rebuilt);
    assert_eq!(ran(&steps(&rebuilt)), ["build autofdo"]);
    assert!(out.join("build/autofdo/lz").is_file());

    // A broken build: fails at that step, naming it and its log.
    let broken = write_recipe(
        dir.path(),
        "200000",
        r#"$CC $CFLAGS -o lz "$SRC/lz.c" "$SRC/missing.c" $LDFLAGS"#,
    );
    let fail = optimize(&broken, &out);
    assert_eq!(fail.status.code(), Some(1));
    let err = String::from_utf8_lossy(&fail.stderr);
    let log = out.join("logs/build-baseline.log");
    assert!(
        err.contains("step 'build baseline' failed (exit status 1)")
            && err.contains(&log.display().to_string()),
        "{err}"
    );
    assert!(
        err.contains("missing.c"),
        "the error quotes the log's end:\n{err}"
    );
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .contains("no such file"));
}

#[test]
fn bad_recipes_and_options_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let recipe = write_recipe(dir.path(), "1000", BUILD);
    let out = dir.path().join("out");
    let cases: [(&[&str], &str); 4] = [
        (
            &["--variants", "autofdo+bolt"],
            "not built by kfdo optimize yet",
        ),
        (&["--method", "magic"], "--method magic"),
        (&["--runs", "1"], "at least 2"),
        (&["--counters", "cycles"], "--counters cycles"),
    ];
    for (args, want) in cases {
        let o = common::kfdo()
            .arg("optimize")
            .args(args)
            .arg("-o")
            .arg(&out)
            .arg(&recipe)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!out.join("logs").exists(), "{args:?} started steps");
    }
    let missing = common::kfdo()
        .args(["optimize", "/nonexistent/recipe.toml"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr)
        .contains("cannot read recipe /nonexistent/recipe.toml"));
}

/// A `[[bench]]` command with shell syntax, `{bin} A && {bin} B | cat`, gets emulated
/// counters: every run of the program under QEMU, summed. They equal the counts of the
/// two runs benchmarked alone, variant by variant (each through the shell as well, with
/// the same redirections: a program's start-up reads its environment, and its stdio
/// buffers by what its stdout is).
#[test]
fn a_shell_bench_command_gets_emulated_counters() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(common::program_source("lz.c"), src.join("lz.c")).unwrap();
    let recipe = dir.path().join("recipe.toml");
    std::fs::write(
        &recipe,
        format!(
            r#"name = "lz-shell"
[source]
path = "src"
[build]
command = '{BUILD}'
binary = "lz"
[train]
command = "{{bin}} 100000"
[[bench]]
name = "both"
command = "{{bin}} 20000 >/dev/null && {{bin}} 30000 | cat >/dev/null"
runs = 2
[[bench]]
name = "first"
command = "{{bin}} 20000 >/dev/null"
runs = 2
[[bench]]
name = "second"
command = "{{bin}} 30000 | cat >/dev/null"
runs = 2
"#
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = common::kfdo()
        .args([
            "optimize",
            "--method",
            "emulated",
            "--counters",
            "emulated",
            "--variants",
            "autofdo",
            "--no-heatmaps",
            "-o",
        ])
        .arg(&out)
        .arg(&recipe)
        .output()
        .unwrap();
    ok(&o);
    let json = dir.path().join("analysis.json");
    common::run_ok(
        common::kfdo()
            .args(["report", "-q", "--store"])
            .arg(out.join("bench/results.db"))
            .arg("-o")
            .arg(dir.path().join("report"))
            .arg("--json")
            .arg(&json),
    );
    let a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // (benchmark, counter) -> one value per variant (baseline, autofdo).
    let values = |bench: &str, counter: &str| -> Vec<f64> {
        let b = a["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["name"] == bench)
            .unwrap_or_else(|| panic!("no benchmark {bench} in {a}"));
        let row = b["counters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == counter && r["source"] == "emulated")
            .unwrap_or_else(|| panic!("{bench}: no emulated {counter} in {b}"));
        row["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().expect("a value for every variant"))
            .collect()
    };
    for counter in ["instructions", "taken branches", "conditional branches"] {
        let (both, first, second) = (
            values("both", counter),
            values("first", counter),
            values("second", counter),
        );
        assert_eq!(both.len(), 2, "{counter}: {both:?}");
        for v in 0..2 {
            assert!(first[v] > 1e4, "{counter}: {first:?}");
            assert_eq!(
                both[v],
                first[v] + second[v],
                "{counter}, variant {v}: {both:?} vs {first:?} + {second:?}"
            );
        }
    }
}
