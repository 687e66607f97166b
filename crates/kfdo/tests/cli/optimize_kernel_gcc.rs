//! `kfdo optimize` on a GCC kernel recipe (issue 15): the baseline built with gcc-12,
//! recorded, converted to GCC's AutoFDO profile and rebuilt with `-fauto-profile`
//! (`autofdo`); the gcov-instrumented kernel built, trained in the guest, its counts
//! copied out of `/sys/kernel/debug/gcov` and the kernel rebuilt with them (`ifdo`, gcov
//! kernel PGO); the three judged. Then the checks that GCC used each profile: the hottest
//! function's object, compiled again with each build's own command line (kbuild's
//! `.o.cmd`), carries the profile's counts in the autofdo and ifdo builds (`[count: N]`
//! in GCC's dump, not its guesses) and only guesses in the baseline's.
//!
//! The test recipe builds Linux 6.1, older than the kernel's AutoFDO support: GCC's flags
//! reach kbuild through KCFLAGS on any version. Four kernel builds (baseline, autofdo,
//! ifdo-instrumented, ifdo) of a small configuration (no networking) and a few boots
//! under TCG. Its output sits beside the clang kernel
//! tests' (`kfdo_testkit::kernel_recipe_out`), so a rerun reuses what is unchanged. It
//! runs in CI; on a developer's machine when that directory exists or with
//! `KFDO_KERNEL_TESTS=1`.

use crate::common;

use common::kernel::{hottest_functions, recipe_out_beside, recompile, source_of};
use common::*;
use std::path::{Path, PathBuf};

fn wanted() -> bool {
    kfdo_testkit::require_tools(&[
        "gcc-12",
        "llvm-nm-19",
        "llvm-objdump-19",
        "llvm-symbolizer-19",
        "qemu-system-x86_64",
    ])
}

/// The source file of a text symbol of `vmlinux`, relative to the kernel tree `tree`
/// (C files only).
fn c_source(vmlinux: &Path, func: &str, tree: &Path) -> Option<String> {
    let file = source_of(vmlinux, func)?;
    let rel = Path::new(&file)
        .strip_prefix(tree)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| PathBuf::from(&file));
    let rel = rel.to_string_lossy().trim_start_matches("./").to_string();
    (rel.ends_with(".c") && !rel.starts_with('/')).then_some(rel)
}

/// `object` compiled again in `build` with kbuild's command line for it, plus
/// `-fdump-tree-optimized`: the dump's part for function `func`.
fn optimized_dump(build: &Path, object: &str, func: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let dump = tmp.path().join("x.optimized");
    // GCC names the counts it reads after the object (`-o`), which goes elsewhere here:
    // -dumpbase keeps the name kbuild's command gives.
    let stem = object.strip_suffix(".o").unwrap_or(object);
    recompile(
        build,
        object,
        &format!(
            "-dumpbase {stem}.c -dumpbase-ext .c -fdump-tree-optimized={}",
            dump.display()
        ),
    );
    let text = std::fs::read_to_string(&dump).unwrap();
    let start = format!(";; Function {func} (");
    let Some(at) = text.find(&start) else {
        panic!("{object}: no function {func} in GCC's dump");
    };
    let rest = &text[at..];
    let end = rest[1..].find(";; Function ").map_or(rest.len(), |e| e + 1);
    rest[..end].to_string()
}

/// How many of a dump's block counts came from a profile (`[count: N]`, GCC 12's form
/// for AutoFDO's and for measured counts alike), and how many are GCC's own guesses
/// (`[local count: N]`, or marked estimated / guessed).
fn count_kinds(dump: &str) -> (usize, usize) {
    let (mut profiled, mut guessed) = (0, 0);
    for l in dump
        .lines()
        .filter(|l| l.contains("> [") && l.contains("count: "))
    {
        if l.contains("local count") || l.contains("estimated") || l.contains("guessed") {
            guessed += 1;
        } else {
            profiled += 1;
        }
    }
    (profiled, guessed)
}

#[test]
fn gcc_autofdo_and_gcov_kernel_pgo_kernels_are_built_and_judged() {
    let Some(_one_at_a_time) = common::heavy_test("GCC AutoFDO and gcov kernels built and judged")
    else {
        return;
    };
    if !wanted() {
        return;
    }
    let Some(out) = recipe_out_beside("-gcc") else {
        return;
    };
    let recipe = repo_root().join("testdata/kernel/gcc-recipe");
    let optimize = || {
        run_ok(
            kfdo()
                .arg("optimize")
                .arg(&recipe)
                .arg("-o")
                .arg(&out)
                .args(["--no-heatmaps", "--no-packages"]),
        )
    };
    let run = optimize();
    let progress = String::from_utf8_lossy(&run.stderr);
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    for v in ["autofdo", "ifdo", "kernel taken branches"] {
        assert!(summary.contains(v), "no {v} in the summary:\n{summary}");
    }
    // The instrumented kernel is trained, not judged: no table has a column for it.
    assert!(
        summary
            .lines()
            .filter(|l| l.starts_with("| measure |"))
            .all(|l| l.contains("| ifdo |") && !l.contains("ifdo-instrumented")),
        "the instrumented kernel was judged, or ifdo was not:\n{summary}"
    );
    assert!(
        summary.contains("kernel taken branches: autofdo"),
        "no AutoFDO-against-ifdo line:\n{summary}"
    );

    // The gcov counts came out of the guest, named as -fprofile-dir looks them up.
    let listing = std::fs::read_to_string(out.join("profiles/gcda/latest.txt")).unwrap();
    let gcda = PathBuf::from(listing.trim());
    let names: Vec<String> = std::fs::read_dir(&gcda)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(names.len() > 100, "few .gcda files: {}", names.len());
    assert!(
        names.iter().any(|n| n == "kernel#fork.gcda"),
        "no kernel#fork.gcda among {} files",
        names.len()
    );
    assert!(names
        .iter()
        .all(|n| n.ends_with(".gcda") && !n.contains('/')));
    eprintln!("{} .gcda files from the guest", names.len());

    // Each profile reached GCC: the hottest function's object compiled with each build's
    // command line has the counts of that build's kind.
    let profile = out.join("profiles/kfdo.gcov");
    let hot = hottest_functions(&profile, 20);
    assert!(
        hot.len() >= 10,
        "the GCC profile has few functions: {hot:?}"
    );
    let base = out.join("build/baseline");
    let tree = std::fs::read_link(base.join("source")).unwrap_or_default();
    let (func, file) = hot
        .iter()
        .find_map(|f| c_source(&base.join("vmlinux"), f, &tree).map(|s| (f.clone(), s)))
        .expect("no hot function with a C source file");
    let object = Path::new(&file).with_extension("o");
    let object = object.to_string_lossy();
    let dump = |variant: &str| optimized_dump(&out.join("build").join(variant), &object, &func);
    let (base_dump, afdo_dump, ifdo_dump) = (dump("baseline"), dump("autofdo"), dump("ifdo"));
    let (p, g) = count_kinds(&base_dump);
    assert!(
        p == 0 && g > 0,
        "{func} ({object}): counts in the baseline build\n{base_dump}"
    );
    assert!(
        count_kinds(&afdo_dump).0 > 0,
        "{func} ({object}): no AutoFDO counts\n{afdo_dump}"
    );
    assert!(
        count_kinds(&ifdo_dump).0 > 0,
        "{func} ({object}): no gcov counts\n{ifdo_dump}"
    );
    assert_ne!(
        afdo_dump, ifdo_dump,
        "{func}: the same code and counts from both profiles"
    );
    eprintln!("{func} ({object}): AutoFDO counts in autofdo, measured counts in ifdo");

    // GCC's warnings about the counts are in the summary, not lost in a log.
    assert!(
        summary.contains("ifdo: gcc gave"),
        "no count of GCC's profile warnings:\n{summary}"
    );

    // A rerun redoes nothing.
    let rerun = optimize();
    let again = String::from_utf8_lossy(&rerun.stderr);
    assert!(!again.contains(": done in "), "steps ran again:\n{again}");
    assert!(progress.contains("train ifdo-instrumented"), "{progress}");

    // Variants GCC cannot build are refused by name, before anything runs.
    for (variants, says) in [
        ("autofdo+thinlto", "needs clang"),
        ("autofdo-llvm-profgen", "needs clang"),
    ] {
        let o = kfdo()
            .arg("optimize")
            .arg(&recipe)
            .arg("-o")
            .arg(out.join("refused"))
            .args(["--variants", variants])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains(says),
            "{variants}: {err}"
        );
        assert!(!out.join("refused").exists(), "{variants}: output written");
    }
    let o = kfdo()
        .arg("optimize")
        .arg(repo_root().join("testdata/kernel/autofdo-recipe"))
        .arg("-o")
        .arg(out.join("refused"))
        .args(["--variants", "ifdo"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("gcov kernel PGO"),
        "ifdo on a clang recipe: {err}"
    );
}
