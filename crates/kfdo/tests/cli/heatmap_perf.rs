//! `kfdo heatmap` on a perf.data recorded here: a program with one hot
//! function for the first part of its run and a warm one after it, far apart
//! in its text. The picture's darkest rows must be the address ranges of the
//! two hottest functions in `perf report --stdio`, each dark in its own part
//! of the time axis.

use crate::common::Clang;
use kfdo_testkit::run_stdout;
use std::path::Path;
use std::process::Command;

use kfdo_heatmap::image;

const PROGRAM: &str = r#"
#include <stdint.h>
#include <stdlib.h>
static volatile uint64_t sink;
/* 16 KiB of padding between functions, so their bands are far apart. */
#define PAD(n) __attribute__((noinline)) void pad##n(void) { __asm__ volatile(".skip 16384, 0x90"); }
PAD(0)
__attribute__((noinline)) uint64_t hot_alpha(uint64_t n) {
  uint64_t x = sink; for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005ull + i; return x; }
PAD(1) PAD(2) PAD(3)
__attribute__((noinline)) uint64_t warm_beta(uint64_t n) {
  uint64_t x = sink; for (uint64_t i = 0; i < n; i++) x ^= (x << 13) + i; return x; }
PAD(4)
int main(int argc, char **argv) {
  /* Fixed amounts of work, not wall time: the shares stay the same on a busy machine. */
  long a = atol(argv[1]), b = atol(argv[2]);
  for (long k = 0; k < a; k++) sink += hot_alpha(100000);
  for (long k = 0; k < b; k++) sink += warm_beta(100000);
  return 0;
}
"#;

/// (symbol, percent) of user-space symbols, hottest first, from `perf report --stdio`.
fn perf_report_top(perf_data: &Path) -> Vec<(String, f64)> {
    let text = run_stdout(
        Command::new("perf")
            .args(["report", "--stdio", "--sort", "symbol", "-i"])
            .arg(perf_data),
        "perf report",
    );
    text.lines()
        .filter(|l| !l.starts_with('#') && l.contains("[.]"))
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let pct = it.next()?.trim_end_matches('%').parse::<f64>().ok()?;
            it.next(); // [.]
            Some((it.next()?.to_string(), pct))
        })
        .collect()
}

/// (address, size) of a symbol from `nm -S`.
fn nm_symbol(bin: &Path, name: &str) -> (u64, u64) {
    let text = run_stdout(Command::new("nm").arg("-S").arg(bin), "nm");
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() == 4 && f[3] == name {
            return (
                u64::from_str_radix(f[0], 16).unwrap(),
                u64::from_str_radix(f[1], 16).unwrap(),
            );
        }
    }
    panic!("{name} not in nm output");
}

#[test]
fn hot_band_matches_perf_report() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("hot.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let bin = dir.path().join("hot");
    Clang::new()
        .flags(["-O1", "-g"])
        .out(&bin)
        .input(&src)
        .run();
    let perf_data = dir.path().join("perf.data");
    run_stdout(
        Command::new("perf")
            .args(["record", "-q", "-e", "cpu-clock", "-F", "2000", "-o"])
            .arg(&perf_data)
            .arg("--")
            .arg(&bin)
            .args(["3000", "1500"]),
        "perf record -e cpu-clock",
    );

    let top = perf_report_top(&perf_data);
    assert!(top.len() >= 2, "perf report: {top:?}");
    assert_eq!(top[0].0, "hot_alpha", "perf report: {top:?}");
    assert_eq!(top[1].0, "warm_beta", "perf report: {top:?}");

    let png = dir.path().join("heat.png");
    let json = dir.path().join("heat.json");
    let out = run_stdout(
        Command::new(env!("CARGO_BIN_EXE_kfdo"))
            .args(["heatmap", "--binary"])
            .arg(&bin)
            .arg(&perf_data)
            .arg("-o")
            .arg(&png)
            .arg("--json")
            .arg(&json)
            .arg("--store")
            .arg(dir.path().join("r.db"))
            .args(["--label", "hot -O1 <test>"]),
        "kfdo heatmap",
    );
    eprintln!("{out}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // Our hottest functions are perf's, in the same order and close in share.
    let funcs = s["functions"].as_array().unwrap();
    let in_text = s["samples_in_text"].as_f64().unwrap();
    for (i, (name, pct)) in top.iter().take(2).enumerate() {
        assert_eq!(funcs[i]["name"], name.as_str());
        let ours = 100.0 * funcs[i]["samples"].as_f64().unwrap() / in_text;
        // perf's percentages count all samples (vdso, kernel); ours only the text.
        assert!(
            ours >= pct - 1.0,
            "{name}: {ours:.1} % here, {pct:.1} % in perf report"
        );
    }

    // The picture: the darkest rows are those functions' address ranges.
    // The file frames the plot with axes (geometry says where the plot lies in it).
    let framed = image::open(&png).unwrap().to_rgb8();
    let geo = &s["geometry"];
    let at = |k: &str| geo[k].as_u64().unwrap() as u32;
    let (left, top, w, h) = (at("png_left"), at("png_top"), at("width"), at("height"));
    assert!(left > 0 && top > 0, "{geo}");
    assert_eq!(
        framed.get_pixel(left - 1, top + h / 2).0,
        [51, 51, 51],
        "left axis"
    );
    assert_eq!(
        framed.get_pixel(left + w / 2, top + h).0,
        [51, 51, 51],
        "bottom axis"
    );
    let img = image::imageops::crop_imm(&framed, left, top, w, h).to_image();
    let (cell_h, ab) = (
        geo["cell_h"].as_u64().unwrap() as u32,
        s["address_buckets"].as_u64().unwrap() as u32,
    );
    let (lo, hi) = (
        s["text_lo"].as_u64().unwrap(),
        s["text_hi"].as_u64().unwrap(),
    );
    assert_eq!(img.height(), cell_h * ab);
    let darkness = |x: u32, y: u32| {
        let p = img.get_pixel(x, y);
        765 - (p[0] as u32 + p[1] as u32 + p[2] as u32)
    };
    let rows: Vec<u64> = (0..img.height())
        .map(|y| (0..img.width()).map(|x| darkness(x, y) as u64).sum())
        .collect();
    // Address range of pixel row y (row 0 is the top: the highest addresses).
    let range_of = |y: u32| {
        let bucket = (ab - 1 - y / cell_h) as u128;
        let span = (hi - lo) as u128;
        (
            lo + (span * bucket / ab as u128) as u64,
            lo + (span * (bucket + 1) / ab as u128) as u64,
        )
    };
    let overlaps = |(a, b): (u64, u64), (f, n): (u64, u64)| a < f + n && f < b;
    let mut order: Vec<u32> = (0..img.height()).collect();
    order.sort_by_key(|&y| std::cmp::Reverse(rows[y as usize]));
    let alpha = nm_symbol(&bin, "hot_alpha");
    let beta = nm_symbol(&bin, "warm_beta");
    let first = order[0];
    assert!(
        overlaps(range_of(first), alpha),
        "darkest row {first} covers {:x?}, hot_alpha is {alpha:x?}",
        range_of(first)
    );
    // The next band that is not hot_alpha's is warm_beta's.
    let second = *order
        .iter()
        .find(|&&y| !overlaps(range_of(y), alpha))
        .unwrap();
    assert!(
        overlaps(range_of(second), beta),
        "second band row {second} covers {:x?}, warm_beta is {beta:x?}",
        range_of(second)
    );
    // x is time: hot_alpha ran first, warm_beta after it.
    let dark_cols = |y: u32| -> (u32, u32) {
        let cols: Vec<u32> = (0..img.width()).filter(|&x| darkness(x, y) > 0).collect();
        (*cols.first().unwrap(), *cols.last().unwrap())
    };
    let (a0, a1) = dark_cols(first);
    let (b0, b1) = dark_cols(second);
    assert!(
        a1 < b0 + img.width() / 20,
        "hot_alpha's band ({a0}..{a1}) should end before warm_beta's begins ({b0}..{b1})"
    );
    assert!(
        b1 > img.width() * 9 / 10,
        "warm_beta's band should reach the end of time ({b1} of {})",
        img.width()
    );

    // Two tight loops: the hot text span is a few cache lines.
    let span = s["hot_text_bytes"].as_u64().unwrap();
    assert!((64..=512).contains(&span), "hot text span {span} bytes");
    assert!(png.with_extension("svg").exists());
    let _ = std::fs::copy(
        &png,
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("heatmap_perf.png"),
    );

    // --store: the next report carries the heat map and its span.
    let rep = dir.path().join("rep");
    run_stdout(
        Command::new(env!("CARGO_BIN_EXE_kfdo"))
            .args(["report", "--store"])
            .arg(dir.path().join("r.db"))
            .arg("-o")
            .arg(&rep),
        "kfdo report",
    );
    let html = std::fs::read_to_string(rep.join("index.html")).unwrap();
    assert!(html.contains("<h3>hot -O1 &lt;test&gt;</h3>"));
    assert!(html.contains(&format!("hot text span (90 % of samples): {span} bytes")));
    assert!(html.contains("data:image/svg+xml;base64,"));
    let md = std::fs::read_to_string(rep.join("report.md")).unwrap();
    assert!(md.contains(&format!("| {span} bytes |")), "{md}");
}

#[test]
fn mismatched_or_absent_binary_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("hot.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let bin = dir.path().join("hot");
    Clang::new().flag("-O1").out(&bin).input(&src).run();
    let perf_data = dir.path().join("perf.data");
    run_stdout(
        Command::new("perf")
            .args(["record", "-q", "-e", "cpu-clock", "-o"])
            .arg(&perf_data)
            .arg("--")
            .arg(&bin)
            .args(["300", "300"]),
        "perf record",
    );
    // A different program: none of the samples are in it.
    let other = dir.path().join("other");
    let other_src = dir.path().join("other.c");
    std::fs::write(&other_src, "int main(void) { return 0; }\n").unwrap();
    Clang::new().out(&other).input(&other_src).run();
    let out = Command::new(env!("CARGO_BIN_EXE_kfdo"))
        .args(["heatmap", "--binary"])
        .arg(&other)
        .arg(&perf_data)
        .arg("-o")
        .arg(dir.path().join("x.png"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no sample falls in"), "{err}");
    assert!(
        !dir.path().join("x.png").exists(),
        "no partial output on error"
    );

    // Same path, rebuilt differently: the recorded build-id no longer matches.
    Clang::new()
        .flags(["-O2", "-DREBUILT"])
        .out(&bin)
        .input(&src)
        .run();
    let out = Command::new(env!("CARGO_BIN_EXE_kfdo"))
        .args(["heatmap", "--binary"])
        .arg(&bin)
        .arg(&perf_data)
        .arg("-o")
        .arg(dir.path().join("y.png"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("build-id"), "{err}");
}

/// A program that forks: the parent and its child each spin in a function of their own.
/// perf does not repeat the parent's mappings for the child (it records a FORK), so the
/// child's samples belong to the binary only through the fork.
const FORKING: &str = r#"
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile uint64_t sink;
__attribute__((noinline)) uint64_t parent_spin(uint64_t n) {
  uint64_t x = sink; for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005ull + i; return x; }
__attribute__((noinline)) uint64_t child_spin(uint64_t n) {
  uint64_t x = sink; for (uint64_t i = 0; i < n; i++) x ^= (x << 13) + i; return x; }
int main(int argc, char **argv) {
  long a = atol(argv[1]);
  pid_t p = fork();
  if (p == 0) { for (long k = 0; k < a; k++) sink += child_spin(100000); _exit(0); }
  for (long k = 0; k < a; k++) sink += parent_spin(100000);
  waitpid(p, 0, 0);
  return 0;
}
"#;

/// Share of the in-text samples that the heat map's summary gives `name`.
fn share(summary: &serde_json::Value, name: &str) -> f64 {
    let total = summary["samples_in_text"].as_f64().unwrap();
    summary["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .map_or(0.0, |f| f["samples"].as_f64().unwrap() / total)
}

/// A forked child's samples appear in the heat map, recorded by perf (cpu-clock, which
/// follows the child) and by kfdo's emulated recording (QEMU follows fork).
#[test]
fn a_forked_childs_samples_are_in_the_heat_map() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("forking.c");
    std::fs::write(&src, FORKING).unwrap();
    let bin = dir.path().join("forking");
    Clang::new()
        .flags(["-O1", "-g"])
        .out(&bin)
        .input(&src)
        .run();
    let recordings = [
        (
            "perf.data",
            Command::new("perf")
                .args(["record", "-q", "-e", "cpu-clock", "-F", "2000", "-o"])
                .arg(dir.path().join("perf.data"))
                .arg("--")
                .arg(&bin)
                .arg("3000")
                .output(),
            "perf record",
        ),
        (
            "emulated.data",
            Command::new(env!("CARGO_BIN_EXE_kfdo"))
                .args(["record", "-q", "--method", "emulated", "-c", "1009", "-o"])
                .arg(dir.path().join("emulated.data"))
                .arg("--")
                .arg(&bin)
                .arg("300")
                .output(),
            "kfdo record --method emulated",
        ),
    ];
    for (file, out, what) in recordings {
        let out = out.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json = dir.path().join(format!("{file}.json"));
        run_stdout(
            Command::new(env!("CARGO_BIN_EXE_kfdo"))
                .args(["heatmap", "--binary"])
                .arg(&bin)
                .arg(dir.path().join(file))
                .arg("-o")
                .arg(dir.path().join(format!("{file}.png")))
                .arg("--json")
                .arg(&json),
            "kfdo heatmap",
        );
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let (parent, child) = (share(&s, "parent_spin"), share(&s, "child_spin"));
        // Equal work in each process: about half of the samples each.
        assert!(
            parent > 0.3 && child > 0.3,
            "{file}: parent_spin {parent:.2}, child_spin {child:.2} of the samples: {s}"
        );
    }
}
