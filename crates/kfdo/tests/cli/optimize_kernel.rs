//! `kfdo optimize` on a kernel recipe, end to end (issue 13): Debian's linux-source-7.2
//! fetched and unpacked, a tinyconfig kernel with the workload's options built with
//! clang-19 as kbuild builds it for AutoFDO, booted under QEMU with the training workload
//! and recorded in the workload's windows, the profile converted, the AutoFDO kernel
//! rebuilt from it, both kernels judged, packaged. Then the checks that the profile was
//! really used:
//!
//! - clang's `-Rpass=sample-profile` remarks: the hottest function's source file,
//!   compiled again with the autofdo build's own command line (kbuild's `.o.cmd`) plus the
//!   remark flag, applies samples; the baseline's command line (no profile) applies none;
//! - the hottest functions' code differs between the baseline and the AutoFDO kernel;
//! - the packages: `dpkg-deb --info` and `rpm -qpi` read them, named with the variant and
//!   the profile's hash.
//!
//! - the tun workload's driver, built as a module (tun.ko): its functions are in the
//!   profile and its AutoFDO build applies samples (remarks on drivers/net/tun.o);
//! - bad inputs: a recording of another kernel (build-id mismatch), a workload that fails
//!   in the guest, a guest that does not finish within its timeout, each a clear error.
//!
//! Two kernel builds and a few boots under TCG: tens of minutes the first time
//! (docs/testing.md). The output stays in a cache directory outside the checkout
//! (`kfdo_testkit::kernel_recipe_out`), so a later run reuses the kernel builds whose
//! inputs are unchanged and redoes the rest. It runs in CI; on a developer's machine it
//! is skipped unless that directory exists or `KFDO_KERNEL_TESTS=1`.

use crate::common;

use common::kernel::{hottest_functions, mnemonics, sample_profile_remarks, source_of};
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn wanted() -> bool {
    kfdo_testkit::require_tools(&[
        "clang-19",
        "ld.lld-19",
        "llvm-profgen-19",
        "llvm-objdump-19",
        "llvm-nm-19",
        "qemu-system-x86_64",
        "dpkg-deb",
        "rpm",
        "rpmbuild",
    ])
}

/// `kfdo optimize RECIPE -o OUT --variants autofdo --no-heatmaps [--no-packages]`.
fn optimize_cmd(recipe: &Path, out: &Path, packages: bool) -> Command {
    let mut cmd = kfdo();
    cmd.arg("optimize").arg(recipe).arg("-o").arg(out).args([
        "--variants",
        "autofdo",
        "--no-heatmaps",
    ]);
    if !packages {
        cmd.arg("--no-packages");
    }
    cmd
}

/// The steps a run did (not cached), from its progress lines.
fn steps_run(o: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.contains(": done in "))
        .map(str::to_string)
        .collect()
}

#[test]
fn an_autofdo_kernel_is_built_from_the_profile_judged_and_packaged() {
    let Some(_one_at_a_time) =
        common::heavy_test("kfdo optimize on the test kernel recipe (kernel builds and boots)")
    else {
        return;
    };
    if !wanted() {
        return;
    }
    let Some(out) = kfdo_testkit::kernel_recipe_out() else {
        return;
    };
    // The recording tests boot this directory's baseline: not while it is rewritten.
    let _writing = kfdo_testkit::kernel::lock_recipe_out(&out);
    let recipe = kfdo_testkit::kernel::kernel_test_recipe();
    // Without packages first: packaging runs kbuild again in the winner's tree (binrpm-pkg
    // with its own build number), so the rerun-from-cache check comes before it.
    let optimize = |packages| run_ok(&mut optimize_cmd(&recipe, &out, packages));
    let run = optimize(false);
    let stdout = String::from_utf8_lossy(&run.stdout).to_string();
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("autofdo"), "{summary}");
    assert!(summary.contains("kernel taken branches"), "{summary}");
    // The UnixBench-style index over the workloads, with its interval.
    assert!(
        summary.contains("## Index over the workloads (UnixBench-style, emulated time)"),
        "{summary}"
    );
    assert!(
        summary
            .lines()
            .any(|l| l.starts_with("| autofdo | ") && l.contains(", ")),
        "no index row for autofdo:\n{summary}"
    );
    // tcp_rr's round trips: the seeds' latency percentiles, each a row of the verdict.
    for stat in ["p1", "p50", "p99", "mean"] {
        let row = format!("| tcp_rr latency {stat} (emulated time) | ");
        assert!(summary.contains(&row), "no '{row}' in:\n{summary}");
    }
    assert!(stdout.contains("report:"), "{stdout}");
    native_time(&out, &summary);
    real_time_under_kvm(&summary);

    let base = out.join("build/baseline");
    let fdo = out.join("build/autofdo");
    let profile = out.join("profiles/kfdo.afdo");
    let hot = hottest_functions(&profile, 20);
    assert!(hot.len() >= 10, "the profile has few functions: {hot:?}");

    // The profile reached the compiler: remarks on the hottest function's file with the
    // autofdo build's command line, none with the baseline's.
    let file = hot
        .iter()
        .find_map(|f| source_of(&base.join("vmlinux"), f).filter(|s| s.ends_with(".c")))
        .expect("no hot function with a C source file");
    let src_root = std::fs::read_link(base.join("source")).unwrap_or_default();
    let rel = Path::new(&file)
        .strip_prefix(&src_root)
        .map(|p| p.to_path_buf())
        .unwrap_or_else(|_| PathBuf::from(&file));
    let object = rel.with_extension("o").to_string_lossy().to_string();
    let with = sample_profile_remarks(&fdo, &object);
    let without = sample_profile_remarks(&base, &object);
    assert!(
        with > 0,
        "no -Rpass=sample-profile remark compiling {object} with the profile"
    );
    assert_eq!(without, 0, "remarks without a profile compiling {object}");

    // The module: its functions are in the profile, and its AutoFDO build used them.
    let tun_functions = defined_functions(&base.join("drivers/net/tun.ko"));
    let profiled = all_functions(&profile);
    let in_profile: Vec<&String> = profiled
        .iter()
        .filter(|f| tun_functions.contains(*f))
        .collect();
    assert!(
        in_profile.len() >= 3,
        "few tun.ko functions in the profile: {in_profile:?}"
    );
    assert!(
        sample_profile_remarks(&fdo, "drivers/net/tun.o") > 0,
        "no -Rpass=sample-profile remark compiling the tun module with the profile"
    );
    assert_eq!(sample_profile_remarks(&base, "drivers/net/tun.o"), 0);

    // The hot code changed.
    let changed: BTreeMap<&str, bool> = hot
        .iter()
        .take(10)
        .map(|f| {
            let a = mnemonics(&base.join("vmlinux"), f);
            let b = mnemonics(&fdo.join("vmlinux"), f);
            (f.as_str(), !a.is_empty() && a != b)
        })
        .collect();
    assert!(
        changed.values().filter(|&&c| c).count() >= 3,
        "the hottest functions' code is the same in both kernels: {changed:?}"
    );

    // A rerun redoes nothing: every step is a cache hit.
    let started = std::time::Instant::now();
    let rerun = optimize(false);
    eprintln!(
        "kfdo optimize rerun from cache: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let progress = String::from_utf8_lossy(&rerun.stderr);
    let ran = steps_run(&rerun);
    assert!(ran.is_empty(), "steps ran again on a rerun: {ran:?}");
    assert!(progress.contains("cached (inputs unchanged)"), "{progress}");

    // Now with packages: nothing but the packages step runs (and it too is cached when an
    // earlier run packaged this very kernel).
    let packaged = optimize(true);
    let ran = steps_run(&packaged);
    assert!(
        ran.iter().all(|l| l.contains("packages")),
        "a run asking for packages redid more than the packages: {ran:?}"
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();

    // Packages of the winner, if one was significantly better; else none (said in the
    // summary). Either way, any package written must be readable and named with its tag.
    let packages: Vec<PathBuf> = std::fs::read_dir(out.join("packages"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    if packages.is_empty() {
        assert!(summary.contains("no packages"), "{summary}");
    }
    for p in &packages {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        // The tag, with '_' for '-' in rpm names.
        assert!(
            name.contains("kfdo-autofdo-") || name.contains("kfdo_autofdo_"),
            "{name}: not named with the variant's tag"
        );
        let info = match p.extension().and_then(|e| e.to_str()) {
            Some("deb") => run_ok(Command::new("dpkg-deb").arg("--info").arg(p)),
            Some("rpm") => run_ok(Command::new("rpm").arg("-qpi").arg(p)),
            _ => continue,
        };
        let text = String::from_utf8_lossy(&info.stdout);
        assert!(text.contains("kfdo"), "{name}: {text}");
    }

    bad_inputs(&recipe, &out);
}

/// The User-Mode Linux twins (the recipe's `[uml]`): built from the same profile,
/// booted natively, judged, and said in the summary. No timing is asserted: only that the
/// measures exist, that the profile reached the twin's compiler and changed its code.
fn native_time(out: &Path, summary: &str) {
    assert!(
        summary.contains("## Native time: User-Mode Linux twins"),
        "{summary}"
    );
    assert!(
        summary.contains("### linux-test-uml-tcp_rr (native time; baseline 'baseline')"),
        "{summary}"
    );
    for row in [
        "| UML kernel CPU, user (native time) | ",
        "| UML kernel CPU, system: host ptrace (native time) | ",
        "| tcp_rr UML kernel user CPU per operation (native time) | ",
        "| tcp_rr ops/s (native time) | ",
        "| tcp_rr latency p50 (native time) | ",
    ] {
        let line = summary
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no '{row}' row in:\n{summary}"));
        // The baseline's value, then autofdo's change with its interval.
        assert_eq!(line.matches(" | ").count(), 2, "{line}");
        assert!(line.contains('['), "no interval: {line}");
    }
    assert!(
        summary.contains("### Index over the workloads (UnixBench-style, native time)"),
        "{summary}"
    );
    // The profile's split: most of it is generic code the twin has.
    let split = summary
        .lines()
        .find(|l| l.starts_with("- the profile: "))
        .unwrap_or_else(|| panic!("no profile split in:\n{summary}"));
    let share: f64 = split
        .split("holding ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no share in: {split}"));
    assert!(share > 50.0 && share < 100.0, "{split}");
    assert!(
        summary.contains("- the recipe's settings UML has no such option for"),
        "the x86-only settings are not named:\n{summary}"
    );
    counters_against_native_time(out, summary);

    // The profile reached the twin's compiler: remarks on a hot generic file with the
    // autofdo twin's command line, none with the baseline twin's; and the twin's hot code
    // changed.
    let (base, fdo) = (out.join("uml/baseline"), out.join("uml/autofdo"));
    let hot = hottest_functions(&out.join("profiles/kfdo.afdo"), 40);
    let generic: Vec<(String, String)> = hot
        .iter()
        .filter_map(|f| {
            let file = source_of(&base.join("linux"), f)?;
            let src_root = std::fs::read_link(base.join("source")).unwrap_or_default();
            let rel = Path::new(&file).strip_prefix(&src_root).ok()?.to_path_buf();
            let rel = rel.to_string_lossy().to_string();
            (rel.ends_with(".c") && !rel.starts_with("arch/")).then(|| (f.clone(), rel))
        })
        .collect();
    assert!(
        generic.len() >= 5,
        "few hot generic functions in the UML twin: {generic:?}"
    );
    let object = generic[0].1.replace(".c", ".o");
    assert!(
        sample_profile_remarks(&fdo, &object) > 0,
        "no -Rpass=sample-profile remark compiling {object} for the autofdo twin"
    );
    assert_eq!(sample_profile_remarks(&base, &object), 0);
    let changed = generic
        .iter()
        .take(10)
        .filter(|(f, _)| {
            let a = mnemonics(&base.join("linux"), f);
            !a.is_empty() && a != mnemonics(&fdo.join("linux"), f)
        })
        .count();
    assert!(
        changed >= 3,
        "the hot generic functions' code is the same in both twins"
    );
}

/// The QEMU boots' counters held against the twins' time: a row in the summary, a page of
/// panels, and `kfdo counters-vs-time` on the output giving the same point, its counter
/// changes those of the emulated benchmark's own analysis.
fn counters_against_native_time(out: &Path, summary: &str) {
    assert!(
        summary.contains("## Counters against native time"),
        "{summary}"
    );
    let row = summary
        .lines()
        .find(|l| {
            l.starts_with(
                "| linux-test-uml-tcp\\_rr | autofdo | UML kernel user CPU (native time) | ",
            )
        })
        .unwrap_or_else(|| panic!("no counters-against-time row in:\n{summary}"));
    assert!(row.contains('[') && row.matches(" %").count() >= 8, "{row}");
    let page = std::fs::read_to_string(out.join("report/counters-vs-time.html")).unwrap();
    assert_eq!(
        page.matches("<svg").count(),
        5,
        "a panel per kernel counter"
    );

    let dir = tempfile::tempdir().unwrap();
    let cvt = run_ok(
        kfdo()
            .args(["counters-vs-time", "--json", "-q", "-o"])
            .arg(dir.path())
            .arg(out),
    );
    let doc: serde_json::Value = serde_json::from_slice(&cvt.stdout).unwrap();
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{doc}");
    assert_eq!(points[0]["variant"], "autofdo");
    assert_eq!(
        points[0]["time"]["measure"],
        "UML kernel user CPU (native time)"
    );
    let report = dir.path().join("analysis.json");
    run_ok(
        kfdo()
            .args(["report", "-q", "--store"])
            .arg(out.join("bench/results.db"))
            .arg("-o")
            .arg(dir.path().join("report"))
            .arg("--json-out")
            .arg(&report),
    );
    let a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let autofdo = a["benchmarks"][0]["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "autofdo")
        .unwrap();
    for pair in points[0]["counters"].as_array().unwrap() {
        let (name, change) = (pair[0].as_str().unwrap(), pair[1].as_f64().unwrap());
        let metric = autofdo["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no metric {name} in {autofdo}"));
        let ratio = metric["vs_baseline"]["ratio"]["estimate"].as_f64().unwrap();
        assert!(
            ((ratio - 1.0) * 100.0 - change).abs() < 1e-9,
            "{name}: {change} vs {ratio}"
        );
    }
}

/// Where `kfdo capabilities` says KVM works, the kernels were booted under it and judged
/// in real time; where it does not (this project's machines), the summary says why.
fn real_time_under_kvm(summary: &str) {
    let caps = run_ok(kfdo().args(["capabilities", "--json"]));
    let caps: serde_json::Value = serde_json::from_slice(&caps.stdout).unwrap();
    if caps["kvm"]["works"].as_bool().unwrap() {
        assert!(summary.contains("## Real time under KVM"), "{summary}");
        assert!(
            summary.contains("| tcp_rr latency p50 (KVM, real time) | "),
            "{summary}"
        );
    } else {
        let why = caps["kvm"]["why_not"].as_str().unwrap();
        let note = format!("- real time under KVM: not measured ({why})");
        assert!(summary.contains(&note), "no '{note}' in:\n{summary}");
        assert!(!summary.contains("## Real time under KVM"), "{summary}");
    }
}

/// Errors, each clear and before any result: the kernels built above are reused (same
/// source and configuration), only the step at fault runs.
fn bad_inputs(recipe: &Path, out: &Path) {
    // A recording of the baseline read against the AutoFDO kernel: another build.
    let _ = std::fs::remove_file(out.join("wrong.afdo"));
    let o = kfdo()
        .args(["profile", "--kernel", "--binary"])
        .arg(out.join("build/autofdo/vmlinux"))
        .arg("--perf-data")
        .arg(out.join("record/training-run/perf.data"))
        .arg("-o")
        .arg(out.join("wrong.afdo"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success(),
        "a profile of another kernel was written: {err}"
    );
    assert!(err.contains("build-id"), "{err}");
    assert!(!out.join("wrong.afdo").exists());

    // The recipe again, with one thing changed; its paths made absolute (the checkout's,
    // then testdata/kernel's).
    let text = std::fs::read_to_string(recipe.join("recipe.toml")).unwrap();
    let text = text
        .replace("\"../../../", &format!("\"{}/", repo_root().display()))
        .replace(
            "\"../",
            &format!("\"{}/", recipe.parent().unwrap().display()),
        );
    let variant = |what: &str, changes: &[(&str, &str)]| {
        let mut changed = text.clone();
        for (from, to) in changes {
            assert!(changed.contains(from), "the test recipe has no `{from}`");
            changed = changed.replacen(from, to, 1);
        }
        // Beside the output, not in it: kfdo optimize refuses an output directory that
        // holds its recipe.
        let dir = out.with_file_name(format!(
            "{}-bad-recipe-{what}",
            out.file_name().unwrap().to_string_lossy()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("recipe.toml"), changed).unwrap();
        let o = optimize_cmd(&dir, out, false).output().unwrap();
        assert!(!o.status.success(), "{what}: kfdo optimize succeeded");
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let err = variant("failing-workload", &[("train = \"", "train = \"nosuch:1,")]);
    assert!(
        err.contains("the workload failed in the guest") && err.contains("nosuch"),
        "{err}"
    );
    // A training run that needs an hour of guest time against a 3-second limit: the limit
    // is met on any machine, however idle (the recipe's own training run alone can finish
    // within 3 s on an idle one), and the cached training run is left alone.
    let err = variant(
        "timeout",
        &[
            ("boot_timeout_s = 600", "boot_timeout_s = 3"),
            ("train = \"", "train = \"pipe:100000000,"),
        ],
    );
    assert!(
        err.contains("did not finish") && err.contains("console's last lines"),
        "{err}"
    );
}

/// Names of the functions a module (or any ELF object) defines, from its symbol table.
fn defined_functions(object: &Path) -> std::collections::BTreeSet<String> {
    let nm = run_ok(Command::new("llvm-nm-19").arg("--defined-only").arg(object));
    String::from_utf8_lossy(&nm.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3 && "tT".contains(f[1])).then(|| f[2].to_string())
        })
        .collect()
}

/// Every top-level function of a profile.
fn all_functions(profile: &Path) -> Vec<String> {
    hottest_functions(profile, usize::MAX)
}
