//! `kfdo optimize` end to end on a small real program (testdata/programs/lz.c)
//! with every variant: real clang-19 builds, a real emulated-LBR training
//! run, kfdo's and llvm-profgen-19's profiles, instrumented PGO, ThinLTO, a
//! real interleaved benchmark, heat maps and the report. Then the cache:
//! an unchanged rerun does nothing, a changed benchmark command reruns only
//! the benchmark (and the report of it), a deleted build output rebuilds only
//! that variant, and a broken build fails at its step, naming its log. The layout
//! variants (Propeller, BOLT) are in `optimize_layout`.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Which steps ran and which were cached, from the progress lines
/// "[i/n] STEP: done in ..." and "[i/n] STEP: cached ...".
pub(super) fn steps(out: &Output) -> BTreeMap<String, &'static str> {
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

pub(super) fn ran(m: &BTreeMap<String, &'static str>) -> Vec<String> {
    m.iter()
        .filter(|(_, how)| **how == "ran")
        .map(|(s, _)| s.clone())
        .collect()
}

pub(super) fn write_recipe(dir: &Path, bench_size: &str, build: &str) -> PathBuf {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(common::program_source("lz.c"), src.join("lz.c")).unwrap();
    let recipe = dir.join("recipe.toml");
    std::fs::write(
        &recipe,
        format!(
            r#"name = "lz"
description = "testdata/programs/lz.c"
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

/// The variants a clang recipe builds by default, the baseline first.
pub(super) const CLANG_VARIANTS: [&str; 5] = [
    "baseline",
    "autofdo",
    "autofdo-llvm-profgen",
    "ifdo",
    "autofdo+thinlto",
];

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

#[test]
fn optimize_builds_judges_and_reruns_only_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let recipe = write_recipe(dir.path(), "300000", BUILD);

    // First run: every step runs.
    let first = optimize(&recipe, &out);
    common::ok(&first, "kfdo optimize");
    let s = steps(&first);
    let (idx, totals) = step_indices(&first);
    assert_eq!(
        totals,
        [s.len()],
        "the progress counts every step once: {s:?}"
    );
    assert_eq!(idx, (1..=s.len()).collect::<Vec<_>>());
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
    for v in CLANG_VARIANTS {
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
    common::ok(&again, "kfdo optimize");
    assert_eq!(
        ran(&steps(&again)),
        Vec::<String>::new(),
        "{:?}",
        steps(&again)
    );

    // A changed benchmark command: only the benchmark and its report.
    write_recipe(dir.path(), "200000", BUILD);
    let bench = optimize(&recipe, &out);
    common::ok(&bench, "kfdo optimize");
    assert_eq!(ran(&steps(&bench)), ["benchmark", "report"]);

    // A deleted build output: only that variant is rebuilt; the rebuild is
    // identical, so nothing downstream reruns.
    std::fs::remove_file(out.join("build/autofdo/lz")).unwrap();
    let rebuilt = optimize(&recipe, &out);
    common::ok(&rebuilt, "kfdo optimize");
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
    let cases: [(&[&str], &str); 8] = [
        (
            &["--variants", "autofdo+bolt"],
            "unknown variant 'autofdo+bolt'",
        ),
        (&["--method", "magic"], "--method magic"),
        (&["--runs", "1"], "at least 2"),
        (&["--counters", "cycles"], "--counters cycles"),
        (&["--llvm", "twenty"], "\"twenty\" is not an LLVM release"),
        (&["--llvm", "7"], "apt-get install clang-7 lld-7"),
        (
            &["--llvm", "22", "--compare-llvm", "22"],
            "--compare-llvm 22: the run already uses clang-22",
        ),
        (
            &["--compare-llvm", "22", "--cc", "clang-19"],
            "leave them out to compare two releases",
        ),
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
    // A GCC recipe has no LLVM release to pick.
    let gcc = write_recipe(dir.path(), "1000", BUILD);
    let text = std::fs::read_to_string(&gcc).unwrap();
    std::fs::write(
        &gcc,
        text.replace("binary = \"lz\"", "binary = \"lz\"\ncompiler = \"gcc\""),
    )
    .unwrap();
    let o = common::kfdo()
        .args(["optimize", "--llvm", "22", "-o"])
        .arg(&out)
        .arg(&gcc)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--llvm 22: the recipe builds with \"gcc\""),
        "{err}"
    );
    let missing = common::kfdo()
        .args(["optimize", "/nonexistent/recipe.toml"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr)
        .contains("cannot read recipe /nonexistent/recipe.toml"));
}

/// A recipe whose source is its own directory (`path = "."`), run from there: the
/// default output `kfdo-optimize/NAME` would sit inside the source every key hashes, so
/// each rerun would rebuild every variant. Refused before anything is written, naming
/// both directories and the fix; an output elsewhere is accepted.
#[test]
fn an_output_inside_the_recipes_source_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("lz");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::copy(common::program_source("lz.c"), home.join("lz.c")).unwrap();
    std::fs::write(
        home.join("recipe.toml"),
        r#"name = "lz"
[source]
path = "."
[build]
command = '$CC $CFLAGS -o lz "$SRC/lz.c" $LDFLAGS'
binary = "lz"
[train]
command = "{bin} 1000"
[[bench]]
name = "lz"
command = "{bin} 1000"
"#,
    )
    .unwrap();
    let src = std::fs::canonicalize(&home).unwrap();
    for args in [&[][..], &["-o", "results/run1"][..]] {
        let o = common::kfdo()
            .current_dir(&home)
            .args(["optimize", "--variants", "autofdo"])
            .args(args)
            .arg("recipe.toml")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        let out = if args.is_empty() {
            src.join("kfdo-optimize/lz")
        } else {
            src.join("results/run1")
        };
        assert!(
            err.contains(&format!("the output directory {} is inside", out.display()))
                && err.contains(&format!("the source tree {} ", src.display()))
                && err.contains("-o DIR"),
            "{args:?}: {err}"
        );
        assert!(
            !home.join("kfdo-optimize").exists() && !home.join("results").exists(),
            "{args:?}: an output directory was made"
        );
    }
    // Outside the source the check passes: what fails next is making the directory.
    let o = common::kfdo()
        .current_dir(&home)
        .args(["optimize", "--variants", "autofdo", "-o"])
        .arg("/proc/kfdo-no-such-dir/out")
        .arg("recipe.toml")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot create the output directory"), "{err}");
    assert!(!err.contains("inside the source tree"), "{err}");
}

/// Ctrl-C during a build: the build's commands stop, what it had written goes, the
/// steps that finished stay cached and are named, no summary is written, exit 130.
#[test]
fn an_interrupted_run_says_what_it_kept_and_stops_its_build() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("build.pid");
    // The autofdo build (the only one that reads a sample profile) waits, so the
    // signal comes while it runs; it writes its shell's pid first.
    let build = format!(
        r#"case "$CFLAGS" in *profile-sample-use*) echo $$ > {}; sleep 600;; esac; {BUILD}"#,
        pid_file.display()
    );
    let recipe = write_recipe(dir.path(), "1000", &build);
    let out = dir.path().join("out");
    let mut child = common::kfdo()
        .args([
            "optimize",
            "--method",
            "emulated",
            "--counters",
            "none",
            "--variants",
            "autofdo",
            "--no-heatmaps",
            "-j",
            "1",
            "-o",
        ])
        .arg(&out)
        .arg(&recipe)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    // Waits for the build to have started its command, not for a time.
    while !pid_file.exists()
        || std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .is_empty()
    {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            panic!("kfdo optimize ended before the autofdo build:\n{said}");
        }
        said.push_str(&line);
    }
    let build_shell: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    said.push_str(&rest);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(
        said.contains("kfdo optimize: interrupted during build autofdo:"),
        "{said}"
    );
    let kept = said
        .lines()
        .find(|l| l.contains("finished and kept in the cache"))
        .unwrap_or_else(|| panic!("no kept steps named:\n{said}"));
    for step in ["build baseline", "record training run", "profile kfdo"] {
        assert!(kept.contains(step), "{step}: {kept}");
        let record = out
            .join(".kfdo/steps")
            .join(format!("{}.json", step.replace(' ', "-")));
        assert!(record.is_file(), "{} is not kept", record.display());
    }
    assert!(!kept.contains("build autofdo"), "{kept}");
    assert!(!out.join("summary.md").exists());
    assert!(!out.join(".kfdo/steps/build-autofdo.json").exists());
    // The build's shell was stopped with it (its process group got SIGTERM).
    let proc = PathBuf::from(format!("/proc/{build_shell}"));
    for _ in 0..600 {
        let gone = std::fs::read_to_string(proc.join("stat"))
            .map(|s| s.split_whitespace().nth(2) == Some("Z"))
            .unwrap_or(true);
        if gone {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the build's shell {build_shell} still runs after the interruption");
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
    common::ok(&o, "kfdo optimize");
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
    counters_against_time(&out, dir.path(), &values);
}

/// The counters held against the time, in the summary, the report and `kfdo
/// counters-vs-time`: a point per benchmark (one variant beside the baseline), each
/// counter's change the one the stored counters give, a fit and a panel per counter. No
/// timing is asserted.
fn counters_against_time(out: &Path, dir: &Path, values: &dyn Fn(&str, &str) -> Vec<f64>) {
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("## Counters against time"), "{summary}");
    for bench in ["both", "first", "second"] {
        let row = format!("| {bench} | autofdo | wall time | ");
        assert!(summary.contains(&row), "no '{row}' in:\n{summary}");
    }
    let report = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(
        report.contains("id=\"counters-vs-time\""),
        "no section in the report"
    );

    let cvt = dir.join("cvt");
    let o = common::run_ok(
        common::kfdo()
            .args(["counters-vs-time", "-q", "--json", "-o"])
            .arg(&cvt)
            .arg(out),
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 3, "{doc}");
    for p in points {
        assert_eq!(
            (&p["group"], &p["variant"]),
            (&"out".into(), &"autofdo".into())
        );
        let bench = p["benchmark"].as_str().unwrap();
        let counters = p["counters"].as_array().unwrap();
        assert!(counters.len() >= 5, "{p}");
        for pair in counters {
            let name = pair[0].as_str().unwrap();
            let v = values(bench, name);
            let want = (v[1] / v[0] - 1.0) * 100.0;
            assert!(
                (pair[1].as_f64().unwrap() - want).abs() < 1e-9,
                "{bench} {name}: {p}"
            );
        }
    }
    let fits = doc["fits"].as_array().unwrap();
    let ins = fits
        .iter()
        .find(|f| f["counter"] == "instructions")
        .unwrap();
    assert_eq!(ins["n"], 3, "{ins}");
    let page = std::fs::read_to_string(cvt.join("index.html")).unwrap();
    assert_eq!(
        page.matches("<svg").count(),
        fits.len(),
        "a panel per counter"
    );
    assert_eq!(
        page.matches("class=\"point\"").count(),
        3 * fits.len(),
        "every point in every panel"
    );

    // An output inside an input: refused before the input's own report is touched.
    let report = out.join("report/index.html");
    let before = std::fs::read(&report).unwrap();
    let inside = common::kfdo()
        .args(["counters-vs-time", "-o"])
        .arg(out.join("report"))
        .arg(out)
        .output()
        .unwrap();
    assert_eq!(inside.status.code(), Some(1));
    let err = String::from_utf8_lossy(&inside.stderr);
    assert!(err.contains("lies inside the input"), "{err}");
    assert_eq!(std::fs::read(&report).unwrap(), before);

    // An input that is not an output of kfdo optimize: refused by name, nothing written.
    let none = dir.join("nothing-here");
    std::fs::create_dir_all(&none).unwrap();
    let bad = common::kfdo()
        .args(["counters-vs-time", "-o"])
        .arg(dir.join("cvt-bad"))
        .arg(&none)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains(&none.display().to_string()) && err.contains("bench/results.db"),
        "{err}"
    );
    assert!(!dir.join("cvt-bad").exists());
}

/// Every "[i/n]" of the progress lines: the step counts, which must run from 1 to n.
pub(super) fn step_indices(out: &Output) -> (Vec<usize>, Vec<usize>) {
    let err = String::from_utf8_lossy(&out.stderr);
    let mut idx = Vec::new();
    let mut totals = Vec::new();
    for line in err.lines() {
        let Some(rest) = line.strip_prefix('[') else {
            continue;
        };
        let Some((frac, _)) = rest.split_once("] ") else {
            continue;
        };
        if let Some((i, n)) = frac.split_once('/') {
            if let (Ok(i), Ok(n)) = (i.parse(), n.parse()) {
                idx.push(i);
                totals.push(n);
            }
        }
    }
    idx.sort();
    idx.dedup();
    totals.dedup();
    (idx, totals)
}
