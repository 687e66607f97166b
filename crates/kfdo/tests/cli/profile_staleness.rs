//! `kfdo diff --binary`, the staleness check, on a real old/new build pair: a program
//! built by clang-19, then edited (one function removed, lines inserted into another)
//! and built again; both recorded with kfdo's emulated LBR and profiled. The check
//! must name exactly the function gone and the one whose lines moved, match the old
//! profile fully against its own build, and `kfdo report --profiles` must render it.

use crate::common;

use std::path::{Path, PathBuf};

use common::*;

fn tools() -> bool {
    kfdo_testkit::require_tools(&["clang-19", "qemu-x86_64"])
}

/// A program with three out-of-line steps called through a table (so the
/// edits below leave `main`'s code as it is).
const OLD_SRC: &str = r#"#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long mix(long x) {
  x ^= x >> 7;
  x *= 0x2545F491L;
  return x ^ (x >> 11);
}

__attribute__((noinline)) long helper(long x) {
  long s = 0;
  for (int i = 0; i < 8; i++) s += (x >> i) & 3;
  return s;
}

__attribute__((noinline)) long churn(long x) {
  long s = x;
  for (int i = 0; i < 16; i++) {
    s = s * 31 + i;
    s ^= s >> 5;
  }
  return s;
}

long (*steps[3])(long) = {mix, helper, churn};

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  long acc = 1;
  for (long i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) acc += steps[k](acc + i);
  printf("%ld\n", acc);
  return 0;
}
"#;

/// The next release: `helper` removed, two lines inserted into `churn`.
fn new_source() -> String {
    let start = OLD_SRC
        .find("__attribute__((noinline)) long helper")
        .unwrap();
    let end = OLD_SRC
        .find("__attribute__((noinline)) long churn")
        .unwrap();
    let mut s = OLD_SRC.replace(&OLD_SRC[start..end], "");
    s = s.replace(
        "    s = s * 31 + i;\n",
        "    s = s * 31 + i;\n    if (s & 1)\n      s += 7;\n",
    );
    s.replace("{mix, helper, churn}", "{mix, mix, churn}")
}

fn build_c(dir: &Path, name: &str, src: &str) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let bin = dir.join(name);
    Clang::new().cflags().out(&bin).input(&c).run();
    bin
}

/// `kfdo diff --json --binary BINARY OLD NEW`, its JSON.
fn diff_json(binary: &Path, old: &Path, new: &Path) -> serde_json::Value {
    let out = run_ok(
        kfdo()
            .args(["diff", "--json", "--binary"])
            .arg(binary)
            .arg(old)
            .arg(new),
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn diff_and_staleness_name_the_removed_and_edited_functions() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (old_bin, new_bin) = (build_c(d, "old", OLD_SRC), build_c(d, "new", &new_source()));
    let (old_prof, new_prof) = (d.join("old.prof"), d.join("new.prof"));
    for (bin, prof) in [(&old_bin, &old_prof), (&new_bin, &new_prof)] {
        let data = d.join("rec.data");
        record_emulated(bin, &["20000"], &data);
        profile_perf_data(bin, &data, prof, "extbinary");
    }
    let j = diff_json(&new_bin, &old_prof, &new_prof);
    let names = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&j["removed"]), ["helper"], "{j:#}");
    assert_eq!(names(&j["added"]), Vec::<String>::new(), "{j:#}");
    let st = &j["staleness"];
    assert_eq!(names(&st["gone"]), ["helper"], "{st:#}");
    assert_eq!(names(&st["stale"]), ["churn"], "{st:#}");
    assert!(!st["stale"][0]["new_locations"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(
        st["fresh_functions"].as_u64(),
        Some(2),
        "mix and main still fit: {st:#}"
    );
    let share = st["matching_share"].as_f64().unwrap();
    assert!(share > 0.0 && share < 1.0, "{st:#}");
    // The old profile against its own build: everything matches.
    let j = diff_json(&old_bin, &old_prof, &old_prof);
    assert_eq!(
        j["staleness"]["matching_share"].as_f64(),
        Some(1.0),
        "{j:#}"
    );
    // Text output says the same.
    let text = run_ok(
        kfdo()
            .arg("diff")
            .arg("--binary")
            .arg(&new_bin)
            .arg(&old_prof)
            .arg(&new_prof),
    );
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("helper") && text.contains("churn"), "{text}");
    // The HTML report renders the overlap and the diff of the two profiles.
    let rep = d.join("report");
    run_ok(
        kfdo()
            .args(["report", "-q", "--store"])
            .arg(d.join("none.db"))
            .arg("-o")
            .arg(&rep)
            .arg("--profiles")
            .arg(&old_prof)
            .arg(&new_prof),
    );
    let page = std::fs::read_to_string(rep.join("index.html")).unwrap();
    assert!(page.contains("Removed functions") && page.contains("<td class=\"l\">helper</td>"));
    assert!(std::fs::read_to_string(rep.join("report.md"))
        .unwrap()
        .contains("whole-program similarity"));
}

/// A program whose hot loop is a static helper inlined into `main`.
const INLINED_SRC: &str = r#"#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) long step(long x) {
  long s = x;
  for (int i = 0; i < 16; i++) {
    s = s * 31 + i;
    s ^= s >> 5;
  }
  return s;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  long acc = 1;
  for (long i = 0; i < n; i++)
    acc += step(acc + i);
  printf("%ld\n", acc);
  return 0;
}
"#;

/// Builds `src` as `DIR/prog.c`, compiled from DIR under that relative name: both
/// releases then give the static helper the same unique internal linkage name (its
/// hash is of the source file's name), as one file rebuilt in place does.
fn build_in(dir: &Path, src: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("prog.c"), src).unwrap();
    Clang::new()
        .cflags()
        .out("prog")
        .input("prog.c")
        .in_dir(dir)
        .run();
    dir.join("prog")
}

#[test]
fn lines_inserted_into_an_inlined_helper_make_its_caller_stale() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The next release: two lines at the top of the helper, which moves every line
    // of its body that the old profile's inlinee is keyed by.
    let new_src = INLINED_SRC.replace(
        "  long s = x;\n",
        "  if (x & 1)\n    x += 7;\n  long s = x;\n",
    );
    let old_bin = build_in(&d.join("old"), INLINED_SRC);
    let new_bin = build_in(&d.join("new"), &new_src);
    let old_prof = d.join("old.prof");
    let data = d.join("rec.data");
    record_emulated(&old_bin, &["20000"], &data);
    profile_perf_data(&old_bin, &data, &old_prof, "extbinary");
    let j = diff_json(&new_bin, &old_prof, &old_prof);
    let st = &j["staleness"];
    let stale: Vec<&str> = st["stale"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(stale, ["main"], "{st:#}");
    // The lines that changed are the helper's, where it is inlined in main:
    // `SITE>NAME:LINE`, NAME being its unique internal linkage name.
    let locations: Vec<&str> = ["missing_locations", "new_locations"]
        .iter()
        .flat_map(|k| st["stale"][0][k].as_array().unwrap())
        .map(|l| l.as_str().unwrap())
        .collect();
    let in_step = |l: &str| {
        l.split_once('>')
            .is_some_and(|(site, rest)| site.parse::<u32>().is_ok() && rest.contains("step"))
    };
    assert!(
        !locations.is_empty() && locations.iter().all(|l| in_step(l)),
        "{st:#}"
    );
    assert_eq!(st["fresh_functions"].as_u64(), Some(0), "{st:#}");
    assert_eq!(st["matching_share"].as_f64(), Some(0.0), "{st:#}");
    // The text says so too, and the old build still matches its own profile.
    let text = run_ok(
        kfdo()
            .arg("diff")
            .arg("--binary")
            .arg(&new_bin)
            .arg(&old_prof)
            .arg(&old_prof),
    );
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("0 of 1 functions still match"), "{text}");
    let j = diff_json(&old_bin, &old_prof, &old_prof);
    assert_eq!(
        j["staleness"]["matching_share"].as_f64(),
        Some(1.0),
        "{j:#}"
    );
}
