//! `Window::Markers`: only what runs between the program's KFDO_WINDOW_START and
//! KFDO_WINDOW_STOP is sampled and counted; a program that never opens a window is an
//! error, with no perf.data left behind. Real clang-19 builds under real qemu-x86_64, and
//! the same program cross-compiled for aarch64 under qemu-aarch64 (its markers are
//! `movk xzr` words).

use kfdo_perf::{PerfData, Record};
use kfdo_record::{record_user, RecordConfig, Window};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Linked at fixed addresses (no PIE), so that sample addresses are the symbols'.
/// `outside` runs before and after the window, three times the work of `inside`, which
/// runs in it (`argv[1]` = "nomark" leaves the markers out).
const WINDOWED_C: &str = r#"
#include <stdio.h>
#include <string.h>
#include "kfdo_markers.h"
__attribute__((noinline)) static unsigned outside(unsigned n) {
  unsigned s = 1;
  for (unsigned i = 0; i < n; i++) s = s * 33u + (s >> 3) + (i & 1 ? 7 : 11);
  return s;
}
__attribute__((noinline)) static unsigned inside(unsigned n) {
  unsigned s = 5;
  for (unsigned i = 0; i < n; i++) s = s * 17u + (s >> 5) + (i & 2 ? 3 : 13);
  return s;
}
int main(int argc, char **argv) {
  int mark = !(argc > 1 && strcmp(argv[1], "nomark") == 0);
  unsigned r = outside(300000);
  if (mark) KFDO_WINDOW_START();
  r ^= inside(200000);
  if (mark) KFDO_WINDOW_STOP();
  r ^= outside(300001);
  printf("%u\n", r);
  return 0;
}
"#;

fn markers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("markers")
}

fn build(dir: &Path) -> PathBuf {
    build_for(dir, &[])
}

/// `target`: extra clang flags (`--target=aarch64-linux-gnu`, ...).
fn build_for(dir: &Path, target: &[&str]) -> PathBuf {
    let c = dir.join("windowed.c");
    std::fs::write(&c, WINDOWED_C).unwrap();
    let exe = dir.join("windowed");
    let st = Command::new("clang-19")
        .args(target)
        .args(["-O2", "-g", "-fno-pie", "-no-pie", "-I"])
        .arg(markers_dir())
        .arg("-o")
        .arg(&exe)
        .arg(&c)
        .status()
        .unwrap();
    assert!(st.success(), "clang-19 failed on windowed.c");
    exe
}

/// The address range of a function (llvm-nm-19 -S).
fn symbol_range(exe: &Path, name: &str) -> (u64, u64) {
    let out = Command::new("llvm-nm-19")
        .arg("-S")
        .arg(exe)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for f in text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
    {
        if f.len() == 4 && f[3] == name {
            let hex = |s: &str| u64::from_str_radix(s, 16).unwrap();
            return (hex(f[0]), hex(f[0]) + hex(f[1]));
        }
    }
    panic!("{name} not in the symbol table of {}", exe.display());
}

fn sample_ips(path: &Path) -> Vec<u64> {
    let pd = PerfData::open(path).unwrap();
    pd.records()
        .filter_map(|r| match r.unwrap() {
            Record::Sample(s) => Some(s.ip),
            _ => None,
        })
        .collect()
}

fn user_insns(counters: &kfdo_record::CountersFile) -> u64 {
    counters.total.user.instructions
}

#[test]
fn only_the_marked_window_is_sampled_and_counted() {
    if !kfdo_testkit::require_tools(&["clang-19", "llvm-nm-19", "qemu-x86_64"]) {
        return;
    }
    only_the_window(&[]);
}

#[test]
fn aarch64_only_the_marked_window_is_sampled_and_counted() {
    if !kfdo_testkit::require_tools(&[
        "clang-19",
        "llvm-nm-19",
        "qemu-aarch64",
        "aarch64-linux-gnu-gcc",
    ]) {
        return;
    }
    only_the_window(&["--target=aarch64-linux-gnu", "-fuse-ld=lld"]);
}

fn only_the_window(target: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_for(dir.path(), target);
    let (in_lo, in_hi) = symbol_range(&exe, "inside");
    let (out_lo, out_hi) = symbol_range(&exe, "outside");

    let record = |window: Window, name: &str| {
        let mut cfg = RecordConfig::new(&exe, dir.path().join(format!("{name}.data")))
            .period(101)
            .counters(dir.path().join(format!("{name}.json")));
        cfg.window = window;
        cfg.stdio.stdout = kfdo_record::StdStream::Null;
        let out = record_user(&cfg).unwrap();
        (out, sample_ips(&dir.path().join(format!("{name}.data"))))
    };
    let (whole, whole_ips) = record(Window::Whole, "whole");
    let (win, win_ips) = record(Window::Markers, "window");
    assert_eq!(whole.windows, None);
    assert_eq!(win.windows, Some(1));

    let count_in =
        |ips: &[u64], lo: u64, hi: u64| ips.iter().filter(|&&ip| ip >= lo && ip < hi).count();
    // The whole run is mostly `outside`; the window holds `inside` and nothing of
    // `outside` (a sample's ip is the target of its branch, so a few may land in main
    // around the markers).
    let (whole_out, whole_in) = (
        count_in(&whole_ips, out_lo, out_hi),
        count_in(&whole_ips, in_lo, in_hi),
    );
    assert!(
        whole_out > 2 * whole_in && whole_in > 100,
        "whole run: {whole_out} samples in outside(), {whole_in} in inside()"
    );
    assert_eq!(
        count_in(&win_ips, out_lo, out_hi),
        0,
        "samples of outside()"
    );
    let inside = count_in(&win_ips, in_lo, in_hi);
    assert!(
        inside * 100 >= win_ips.len() * 95 && inside > 100,
        "{inside} of {} samples in inside()",
        win_ips.len()
    );
    // Counters: the window's instructions are those of `inside`, about 2/8 of the
    // loops' work (200000 of 800000 iterations, similar bodies), nowhere near the whole.
    let (w, all) = (
        user_insns(win.counters.as_ref().unwrap()),
        user_insns(whole.counters.as_ref().unwrap()),
    );
    let share = w as f64 / all as f64;
    assert!(
        (0.15..0.40).contains(&share),
        "window {w} of {all} instructions ({share:.3})"
    );
}

#[test]
fn a_program_that_never_opens_a_window_is_an_error_and_writes_nothing() {
    if !kfdo_testkit::require_tools(&["clang-19", "qemu-x86_64"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let out = dir.path().join("nomark.data");
    let mut cfg = RecordConfig::new(&exe, &out).args(["nomark"]);
    cfg.window = Window::Markers;
    cfg.stdio.stdout = kfdo_record::StdStream::Null;
    let err = record_user(&cfg).unwrap_err().to_string();
    assert!(err.contains("never opened a measurement window"), "{err}");
    assert!(err.contains("kfdo_markers.h"), "{err}");
    assert!(!out.exists(), "a perf.data was left behind");
}
