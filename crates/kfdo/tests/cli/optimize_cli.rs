//! `kfdo optimize` end to end on a small real program (testdata/programs/lz.c)
//! with every variant: real clang-19 builds, a real emulated-LBR training
//! run, kfdo's and llvm-profgen-19's profiles, instrumented PGO, ThinLTO, a
//! real interleaved benchmark, heat maps and the report. Then the cache:
//! an unchanged rerun does nothing, a changed benchmark command reruns only
//! the benchmark (and the report of it), a deleted build output rebuilds only
//! that variant, and a broken build fails at its step, naming its log. The Propeller
//! and BOLT variants, on the baseline and on autofdo+thinlto: relinked in the profiles'
//! order, rewritten by llvm-bolt-19, judged with the others.

use crate::common;

use std::collections::{BTreeMap, HashMap};
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
    let cases: [(&[&str], &str); 4] = [
        (
            &["--variants", "autofdo+bolt"],
            "unknown variant 'autofdo+bolt'",
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

/// Every "[i/n]" of the progress lines: the step counts, which must run from 1 to n.
fn step_indices(out: &Output) -> (Vec<usize>, Vec<usize>) {
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

/// The relinked Propeller build follows its profiles: the ld profile's symbols sit in
/// its order by address, and every function the cc profile leaves blocks of (counted in
/// the profiled build's BB address map) has its `NAME.cold` part. Returns how many
/// functions were split.
fn assert_propeller_layout(out: &Path, variant: &str, profiled: &Path) -> usize {
    use kfdo_elf::{BbAddrMap, Binary};
    let prefix = out.join("profiles").join(variant);
    let read = |suffix: &str| {
        let p = PathBuf::from(format!("{}{suffix}", prefix.display()));
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let (cc, ld) = (read("_cc_profile.txt"), read("_ld_profile.txt"));
    let bin = Binary::open(&out.join("build").join(variant).join("lz")).unwrap();
    let order: Vec<(u64, &str)> = ld
        .lines()
        .map(|s| {
            let a = bin
                .symbol_address(s)
                .unwrap_or_else(|| panic!("{variant}: ld profile symbol {s} is not in the build"));
            (a, s)
        })
        .collect();
    assert!(order.len() >= 2, "{variant}: ld profile:\n{ld}");
    for w in order.windows(2) {
        assert!(
            w[0].0 < w[1].0,
            "{variant}: the ld profile orders {} before {}, lld placed them at {:#x} and {:#x}",
            w[0].1,
            w[1].1,
            w[0].0,
            w[1].0
        );
    }
    // Blocks per function of the build the profiles were made from.
    let base = Binary::open(profiled).unwrap();
    let names = BbAddrMap::function_names(&base);
    let blocks: HashMap<String, usize> = BbAddrMap::read(&base)
        .unwrap()
        .functions
        .iter()
        .filter_map(|f| {
            names
                .get(&f.address())
                .map(|n| (n.clone(), f.blocks().count()))
        })
        .collect();
    let mut listed: Vec<(String, usize)> = Vec::new();
    for line in cc.lines().skip(1) {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("f") => listed.push((words.next().unwrap().to_string(), 0)),
            // "c" then the cluster's block IDs (the first may be glued to the c).
            Some(w) if w.starts_with('c') => {
                let glued = usize::from(w.len() > 1);
                listed.last_mut().unwrap().1 += glued + words.count();
            }
            other => panic!("{variant}: unexpected cc profile line {line:?} ({other:?})"),
        }
    }
    assert!(!listed.is_empty(), "{variant}: cc profile:\n{cc}");
    let mut split = 0;
    for (func, n) in &listed {
        let total = blocks[func.as_str()];
        if *n < total {
            assert!(
                bin.symbol_address(&format!("{func}.cold")).is_some(),
                "{variant}: {func} keeps {n} of {total} blocks hot but has no {func}.cold"
            );
            split += 1;
        }
    }
    split
}

/// lz with a second module: main.c includes lz.c (its main renamed) and calls `churn`
/// of mix.c, whose hot local `mix` ThinLTO promotes to `NAME.llvm.HASH` when it imports
/// `churn`: a name the relink of autofdo+thinlto+propeller must reproduce.
fn write_layout_recipe(dir: &Path) -> PathBuf {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(common::program_source("lz.c"), src.join("lz.c")).unwrap();
    std::fs::write(
        src.join("mix.c"),
        r#"#include <stdint.h>
static __attribute__((noinline)) uint32_t mix(uint32_t x, uint32_t k) {
  for (int i = 0; i < 8; i++) {
    if (x & 1)
      x = x * 2654435761u + k;
    else
      x = (x >> 3) ^ k;
    if ((x & 0xfff) == 0x7ff)
      k += 3;
  }
  if (x == 0)
    x = k ? k : 1;
  return x;
}
uint32_t churn(uint32_t seed, uint32_t n) {
  uint32_t s = seed;
  for (uint32_t i = 0; i < n; i++)
    s = mix(s, i);
  return s;
}
"#,
    )
    .unwrap();
    std::fs::write(
        src.join("main.c"),
        r#"#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#define main lz_main
#include "lz.c"
#undef main
uint32_t churn(uint32_t seed, uint32_t n);
int main(int argc, char **argv) {
  int r = lz_main(argc, argv);
  printf("churn %u\n", churn(1, argc > 1 ? (uint32_t)atoi(argv[1]) : 1000));
  return r;
}
"#,
    )
    .unwrap();
    write_recipe(
        dir,
        "100000",
        r#"$CC $CFLAGS -o lz "$SRC/main.c" "$SRC/mix.c" $LDFLAGS"#,
    )
}

/// The four layout variants on lz, with the fewest timed runs the CLI allows: each is
/// made from its base's own recording, laid out as its profiles say (Propeller) or
/// rewritten by BOLT, prints what the baseline prints, and is judged and summarized with
/// the others; the step count is exact; a rerun is all cached.
#[test]
fn propeller_and_bolt_variants_are_built_from_their_base_and_judged() {
    if !kfdo_testkit::require_tools(&[
        "clang-19",
        "ld.lld-19",
        "llvm-bolt-19",
        "llvm-profgen-19",
        "qemu-x86_64",
    ]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let recipe = write_layout_recipe(dir.path());
    let run = || {
        common::kfdo()
            .args([
                "optimize",
                "--method",
                "emulated",
                "--counters",
                "none",
                "--runs",
                "2",
                "-j",
                "2",
                "--variants",
                "propeller,bolt,autofdo+thinlto+propeller,autofdo+thinlto+bolt",
                "-o",
            ])
            .arg(&out)
            .arg(&recipe)
            .output()
            .unwrap()
    };
    let first = run();
    common::ok(&first, "kfdo optimize");
    let s = steps(&first);
    let err = String::from_utf8_lossy(&first.stderr);
    for step in [
        "build baseline",
        "record training run",
        "profile kfdo",
        "profile propeller",
        "profile bolt",
        "build propeller",
        "build bolt",
        "build autofdo+thinlto",
        "record autofdo+thinlto (training run)",
        "profile autofdo+thinlto+propeller",
        "profile autofdo+thinlto+bolt",
        "build autofdo+thinlto+propeller",
        "build autofdo+thinlto+bolt",
        "benchmark",
        "record propeller (for its heat map)",
        "record bolt (for its heat map)",
        "record autofdo+thinlto+propeller (for its heat map)",
        "record autofdo+thinlto+bolt (for its heat map)",
        "report",
    ] {
        assert_eq!(s.get(step), Some(&"ran"), "step {step}:\n{err}");
    }
    // N/M counts every step once: 1..=M, M the same on every line.
    let (idx, totals) = step_indices(&first);
    assert_eq!(totals.len(), 1, "{err}");
    assert_eq!(idx, (1..=totals[0]).collect::<Vec<_>>(), "{err}");
    assert_eq!(totals[0], s.len(), "{err}");
    // kfdo lists only symbols that exist: lld does not warn about the ordering, but for
    // the undefined global stand-in of a function ThinLTO internalized (lz_main, called
    // only from its own module), whose local definition is ordered all the same (every
    // ld profile symbol's place is checked below). The warnings are shown, and explained.
    let warned: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("warning: build"))
        .collect();
    for w in &warned {
        assert!(
            w.contains("build autofdo+thinlto+propeller: ld.lld: warning: <internal>: unable to order undefined symbol: "),
            "{err}"
        );
    }
    if !warned.is_empty() {
        assert!(err.contains("ThinLTO internalized"), "{err}");
    }

    // The bases carry what their layout variants read.
    let log =
        |step: &str| std::fs::read_to_string(out.join("logs").join(format!("{step}.log"))).unwrap();
    for base in ["build-baseline", "build-autofdo+thinlto"] {
        let l = log(base);
        assert!(l.contains("-fbasic-block-address-map"), "{base}:\n{l}");
        assert!(l.contains("-Wl,--emit-relocs"), "{base}:\n{l}");
    }
    assert!(log("build-autofdo+thinlto").contains("-Wl,--lto-basic-block-address-map"));
    let l = log("build-autofdo+thinlto+propeller");
    assert!(
        l.contains("-Wl,--lto-basic-block-sections=") && l.contains("-Wl,--symbol-ordering-file="),
        "{l}"
    );
    assert!(!l.contains("no-warn-symbol-ordering"));
    let l = log("build-bolt");
    assert!(
        l.contains("llvm-bolt-19") && l.contains("-reorder-blocks=ext-tsp"),
        "{l}"
    );

    // Propeller: the relinked builds follow the profiles; the hot lz loop is split.
    let split = assert_propeller_layout(&out, "propeller", &out.join("build/baseline/lz"));
    assert!(split >= 1, "no function was split");
    assert_propeller_layout(
        &out,
        "autofdo+thinlto+propeller",
        &out.join("build/autofdo+thinlto/lz"),
    );
    // ... by the name the profiled build gave the local mix: `NAME.llvm.HASH` when
    // ThinLTO imported churn into main's module and promoted mix (the import follows the
    // sampled counts, so either may happen), the unique local name otherwise.
    let ld = std::fs::read_to_string(out.join("profiles/autofdo+thinlto+propeller_ld_profile.txt"))
        .unwrap();
    let base = kfdo_elf::Binary::open(&out.join("build/autofdo+thinlto/lz")).unwrap();
    let mix: Vec<String> = kfdo_elf::BbAddrMap::function_names(&base)
        .into_values()
        .filter(|n| n.contains("mix"))
        .collect();
    assert_eq!(mix.len(), 1, "{mix:?}");
    assert!(
        ld.lines().any(|l| l == mix[0]),
        "the hot mix is listed as the profiled build names it ({}):\n{ld}",
        mix[0]
    );

    // BOLT: the rewritten programs carry BOLT's marks.
    for v in ["bolt", "autofdo+thinlto+bolt"] {
        let b = kfdo_elf::Binary::open(&out.join("build").join(v).join("lz")).unwrap();
        let names: Vec<&str> = b.sections().iter().map(|s| s.name.as_str()).collect();
        assert!(
            names.contains(&".note.bolt_info") && names.contains(&".bolt.org.text"),
            "{v}: {names:?}"
        );
    }
    // Every build prints what the baseline prints.
    let output = |v: &str| {
        common::run_ok(
            std::process::Command::new(out.join("build").join(v).join("lz")).arg("100000"),
        )
        .stdout
    };
    let want = output("baseline");
    assert!(!want.is_empty());
    for v in [
        "autofdo+thinlto",
        "propeller",
        "bolt",
        "autofdo+thinlto+propeller",
        "autofdo+thinlto+bolt",
    ] {
        assert_eq!(output(v), want, "{v}");
    }

    // Judged: every variant in summary.json with its numbers; each layout variant
    // also against its base.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let bench = &json[0];
    let variants = bench["variants"].as_array().unwrap();
    let names: Vec<&str> = variants
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "baseline",
            "autofdo+thinlto",
            "propeller",
            "bolt",
            "autofdo+thinlto+propeller",
            "autofdo+thinlto+bolt"
        ]
    );
    for v in &variants[1..] {
        assert!(v["mean_s"].as_f64().unwrap() > 0.0, "{v}");
        for k in ["gain_pct", "gain_lo_pct", "gain_hi_pct", "p"] {
            assert!(v[k].as_f64().is_some_and(f64::is_finite), "{k}: {v}");
        }
    }
    let over = bench["layout_over_base"].as_array().unwrap();
    let pairs: Vec<(&str, &str)> = over
        .iter()
        .map(|l| (l["variant"].as_str().unwrap(), l["base"].as_str().unwrap()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("propeller", "baseline"),
            ("bolt", "baseline"),
            ("autofdo+thinlto+propeller", "autofdo+thinlto"),
            ("autofdo+thinlto+bolt", "autofdo+thinlto")
        ]
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("| autofdo+thinlto+bolt |"), "{summary}");
    // A heat map of every build that has a recording.
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    for v in names {
        assert!(html.contains(&format!("lz: {v} (")), "no heat map of {v}");
    }

    // Unchanged: nothing runs.
    let again = run();
    common::ok(&again, "kfdo optimize");
    assert_eq!(
        ran(&steps(&again)),
        Vec::<String>::new(),
        "{:?}",
        steps(&again)
    );
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
}
