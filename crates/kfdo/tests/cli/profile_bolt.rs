//! `kfdo profile --format bolt` against perf2bolt of each LLVM release kfdo is tested
//! with (19 and 22) on the same recordings and binaries: programs built with that
//! release's clang at test time (a `switch` through an absolute and a PIC
//! jump table, C++ with indirect calls, static functions of one name in two files),
//! recorded with kfdo's emulated LBR; the records and counts must be the same (sorted:
//! perf2bolt writes them in hash-table order). llvm-bolt must accept kfdo's fdata and
//! the program it writes must still produce the same output. Bad inputs: clear errors,
//! no output file.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use kfdo_testkit::require_tools;

fn tools() -> bool {
    require_tools(&["perf", "qemu-x86_64"])
}

/// The releases whose clang, lld, perf2bolt and llvm-bolt are compared with (perf2bolt
/// by its path: it is llvm-bolt started as `perf2bolt`, see `Llvm::perf2bolt`).
fn releases() -> Vec<Llvm> {
    kfdo_testkit::llvm_releases(&["clang", "clang++", "ld.lld", "llvm-bolt"])
        .into_iter()
        .filter(|l| {
            kfdo_testkit::require(
                l.perf2bolt().is_file(),
                &format!("{} is missing", l.perf2bolt().display()),
                kfdo_testkit::INSTALL_HINT,
            )
        })
        .collect()
}

/// BOLT wants relocations; lld's default PIE layout puts the first segment's page under
/// the text, which perf2bolt 19 misattributes, hence separate loadable segments.
const BOLT_LDFLAGS: &[&str] = &[
    "-fuse-ld=lld",
    "-Wl,--emit-relocs",
    "-Wl,-z,separate-loadable-segments",
];

fn sorted_lines(path: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// Records `bin args`, converts with both tools, asserts the same records; returns
/// kfdo's fdata and the record count.
fn same_as_perf2bolt(llvm: Llvm, dir: &Path, bin: &Path, args: &[&str]) -> (PathBuf, usize) {
    let name = bin.file_name().unwrap().to_str().unwrap();
    let data = dir.join(format!("{name}.data"));
    record_emulated(bin, args, &data);
    let theirs = dir.join(format!("{name}.perf2bolt.fdata"));
    run_ok(
        Command::new(llvm.perf2bolt())
            .arg("-p")
            .arg(&data)
            .arg("-o")
            .arg(&theirs)
            .arg(bin),
    );
    let ours = dir.join(format!("{name}.kfdo.fdata"));
    run_ok(
        kfdo()
            .args(["profile", "-q", "--format", "bolt", "--binary"])
            .arg(bin)
            .arg("--perf-data")
            .arg(&data)
            .arg("-o")
            .arg(&ours),
    );
    let (t, o) = (sorted_lines(&theirs), sorted_lines(&ours));
    let only_theirs: Vec<_> = t.iter().filter(|l| !o.contains(l)).take(10).collect();
    let only_ours: Vec<_> = o.iter().filter(|l| !t.contains(l)).take(10).collect();
    assert!(
        t == o,
        "{name}: {} records from {llvm}'s perf2bolt, {} from kfdo; only perf2bolt's: \
         {only_theirs:#?}; only kfdo's: {only_ours:#?}",
        t.len(),
        o.len()
    );
    (ours, o.len())
}

fn build_bolt(llvm: Llvm, source: &str, dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let bin = build_with(llvm, source, dir, &[BOLT_LDFLAGS, extra].concat());
    let renamed = dir.join(name);
    std::fs::rename(&bin, &renamed).unwrap();
    renamed
}

#[test]
fn switch_interpreter_absolute_and_pic_jump_tables() {
    if !tools() {
        return;
    }
    for llvm in releases() {
        let dir = tempfile::tempdir().unwrap();
        let plain = build_bolt(
            llvm,
            "interp.c",
            dir.path(),
            "interp-nopie",
            &["-fno-pie", "-no-pie"],
        );
        let (_, n) = same_as_perf2bolt(llvm, dir.path(), &plain, &["18"]);
        assert!(n > 20, "{llvm}: {n} records");
        let pie = build_bolt(
            llvm,
            "interp.c",
            dir.path(),
            "interp-pie",
            &["-fpie", "-pie"],
        );
        let (_, n) = same_as_perf2bolt(llvm, dir.path(), &pie, &["18"]);
        assert!(n > 20, "{llvm}: {n} records");
    }
}

#[test]
fn cpp_program_and_llvm_bolt_accepts_the_profile() {
    if !tools() {
        return;
    }
    for llvm in releases() {
        cpp_program_bolted(llvm);
    }
}

fn cpp_program_bolted(llvm: Llvm) {
    let dir = tempfile::tempdir().unwrap();
    let bin = build_bolt(
        llvm,
        "shapes.cpp",
        dir.path(),
        "shapes",
        &["-fno-pie", "-no-pie"],
    );
    let (fdata, n) = same_as_perf2bolt(llvm, dir.path(), &bin, &["2000"]);
    assert!(n > 20, "{n} records");
    let bolted = dir.path().join("shapes.bolt");
    let out = run_ok(
        Command::new(llvm.bolt())
            .arg(&bin)
            .arg("-o")
            .arg(&bolted)
            .arg(format!("-data={}", fdata.display()))
            .args([
                "-reorder-blocks=ext-tsp",
                "-reorder-functions=hfsort",
                "-split-functions",
                "-dyno-stats",
            ]),
    );
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(
        log.contains("BOLT-INFO") && !log.contains("0 out of"),
        "llvm-bolt read no profile:\n{log}"
    );
    let want = run_ok(Command::new(&bin).arg("50")).stdout;
    let got = run_ok(Command::new(&bolted).arg("50")).stdout;
    assert_eq!(got, want, "the BOLTed program's output differs");
}

const TWO_FILES_MAIN: &str = r#"
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) static int work(int x) { int s = 0; for (int i = 0; i < x; i++) { if (i % 3) s += i; else s ^= i; } return s; }
int other(int);
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000; long t = 0;
    for (int k = 0; k < n; k++) { t += work(k % 50); t += other(k); }
    printf("%ld\n", t);
    return 0;
}
"#;
const TWO_FILES_OTHER: &str = r#"
__attribute__((noinline)) static int work(int x) { return x * 7 + 1; }
int other(int k) { return work(k) + (k & 1 ? 3 : 5); }
"#;

/// Two static functions named `work`: BOLT numbers local names (`work/1`, `work/2`).
#[test]
fn static_functions_of_one_name_are_numbered() {
    if !tools() {
        return;
    }
    for llvm in releases() {
        static_functions_numbered(llvm);
    }
}

fn static_functions_numbered(llvm: Llvm) {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.c"), dir.path().join("b.c"));
    std::fs::write(&a, TWO_FILES_MAIN).unwrap();
    std::fs::write(&b, TWO_FILES_OTHER).unwrap();
    let bin = dir.path().join("twofiles");
    Clang::named(llvm.clang())
        .flags(["-O2", "-g", "-fno-pie", "-no-pie"])
        .flags(BOLT_LDFLAGS)
        .input(&a)
        .input(&b)
        .out(&bin)
        .run();
    let (fdata, _) = same_as_perf2bolt(llvm, dir.path(), &bin, &["3000"]);
    let text = std::fs::read_to_string(fdata).unwrap();
    assert!(
        text.contains(" work/1 ") && text.contains(" work/2 "),
        "{text}"
    );
}

#[test]
fn bad_inputs_are_refused_without_output() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = build_bolt(
        Llvm::DEFAULT,
        "lz.c",
        dir.path(),
        "lz",
        &["-fno-pie", "-no-pie"],
    );
    // IP-only samples (perf's cpu-clock): no branch stacks.
    let ip_only = dir.path().join("ip.data");
    run_ok(
        Command::new("perf")
            .args(["record", "-q", "-e", "cpu-clock", "-c", "10000", "-o"])
            .arg(&ip_only)
            .arg("--")
            .arg(&bin)
            .arg("20000"),
    );
    let out_path = dir.path().join("out.fdata");
    let refused = |input_flag: &str, input: &Path| -> String {
        let res = kfdo()
            .args(["profile", "--format", "bolt", "--binary"])
            .arg(&bin)
            .arg(input_flag)
            .arg(input)
            .arg("-o")
            .arg(&out_path)
            .output()
            .unwrap();
        assert!(
            !res.status.success(),
            "{input_flag} {}: accepted",
            input.display()
        );
        assert!(!out_path.exists(), "an output was left behind");
        String::from_utf8_lossy(&res.stderr).into_owned()
    };
    let err = refused("--perf-data", &ip_only);
    assert!(err.contains("branch stack"), "{err}");

    // A recording of another program: nothing of this binary in it.
    let other = build_bolt(
        Llvm::DEFAULT,
        "interp.c",
        dir.path(),
        "interp",
        &["-fno-pie", "-no-pie"],
    );
    let data = dir.path().join("interp.data");
    record_emulated(&other, &["16"], &data);
    let err = refused("--perf-data", &data);
    assert!(err.contains("lz"), "{err}");

    // perf script text is not an input of this format.
    let err = refused("--perf-script", &data);
    assert!(err.contains("--perf-data only"), "{err}");
}
