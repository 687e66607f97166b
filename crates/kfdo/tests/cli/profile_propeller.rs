//! `kfdo profile --format propeller` end to end with the real tools of each LLVM release
//! kfdo is tested with (19 and 22): programs built by that release's clang with the BB
//! address map, recorded with kfdo's emulated LBR, laid out, and
//! rebuilt with the cc profile (`-fbasic-block-sections=list=`) and the ld profile
//! (lld's `--symbol-ordering-file`). clang and lld must take both without a warning,
//! the relinked program's blocks and functions must sit in the profiles' order (read
//! back from its own BB address map and symbols), and its output must not change.
//! Bad inputs: clear errors, neither file written.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use kfdo_elf::{BbAddrMap, Binary};
use kfdo_testkit::require_tools;

fn tools() -> bool {
    require_tools(&[
        "clang-19",
        "clang++-19",
        "ld.lld-19",
        "llvm-objcopy-19",
        "qemu-x86_64",
    ])
}

const MAP: &[&str] = &["-fuse-ld=lld", "-fbasic-block-address-map"];

fn propeller(bin: &Path, data: &Path, prefix: &Path) -> std::process::Output {
    kfdo()
        .args(["profile", "-q", "--format", "propeller", "--binary"])
        .arg(bin)
        .arg("--perf-data")
        .arg(data)
        .arg("-o")
        .arg(prefix)
        .output()
        .unwrap()
}

fn paths(prefix: &Path) -> (PathBuf, PathBuf) {
    let p = prefix.display();
    (
        PathBuf::from(format!("{p}_cc_profile.txt")),
        PathBuf::from(format!("{p}_ld_profile.txt")),
    )
}

/// The cc profile's clusters: function -> clusters of block IDs.
fn clusters(cc: &str) -> Vec<(String, Vec<Vec<u32>>)> {
    let mut out: Vec<(String, Vec<Vec<u32>>)> = Vec::new();
    let mut lines = cc.lines();
    assert_eq!(lines.next(), Some("v1"), "the cc profile starts with v1");
    for line in lines {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("f") => out.push((words.next().unwrap().to_string(), Vec::new())),
            Some(_) if line.starts_with('c') => out
                .last_mut()
                .expect("a cluster line follows an f line")
                .1
                .push(
                    line[1..]
                        .split_whitespace()
                        .map(|w| w.parse().unwrap())
                        .collect(),
                ),
            other => panic!("unexpected cc profile line {line:?} ({other:?})"),
        }
    }
    out
}

/// Builds `source` with the map, records it, and lays it out. Returns the binary, the
/// recording and the prefix.
fn profile_program(
    llvm: Llvm,
    dir: &Path,
    source: &str,
    args: &[&str],
) -> (PathBuf, PathBuf, PathBuf) {
    let bin = build_with(llvm, source, dir, MAP);
    let data = dir.join("train.data");
    record_emulated(&bin, args, &data);
    let prefix = dir.join("prop");
    let out = propeller(&bin, &data, &prefix);
    assert!(
        out.status.success(),
        "kfdo profile --format propeller failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (bin, data, prefix)
}

/// Rebuilds `source` with the profiles; asserts clang and lld say nothing.
fn relink(llvm: Llvm, dir: &Path, source: &str, prefix: &Path, name: &str) -> PathBuf {
    let (cc, ld) = paths(prefix);
    let src = program_source(source);
    let out_bin = dir.join(name);
    let out = Clang::for_source(llvm, source)
        .cflags()
        .flags(MAP)
        .flag(format!("-fbasic-block-sections=list={}", cc.display()))
        .flag(format!("-Wl,--symbol-ordering-file={}", ld.display()))
        .out(&out_bin)
        .input(&src)
        .run();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.trim().is_empty(),
        "{} / {} warned about kfdo's profiles:\n{stderr}",
        llvm.clang(),
        llvm.lld()
    );
    out_bin
}

/// The relinked binary follows the profiles: each cc function's first cluster is one
/// run of blocks in that order starting at the function's symbol, the blocks no
/// cluster names sit in a `.cold` part, and the ld profile's symbols are in
/// ascending address order.
fn assert_layout_followed(bin: &Path, prefix: &Path) -> usize {
    let (cc, ld) = paths(prefix);
    let cc = std::fs::read_to_string(cc).unwrap();
    let ld = std::fs::read_to_string(ld).unwrap();
    let b = Binary::open(bin).unwrap();
    let map = BbAddrMap::read(&b).unwrap();
    let names = BbAddrMap::function_names(&b);
    let by_name: HashMap<&str, &kfdo_elf::BbFunction> = map
        .functions
        .iter()
        .filter_map(|f| names.get(&f.address()).map(|n| (n.as_str(), f)))
        .collect();
    let mut checked = 0;
    for (func, cl) in clusters(&cc) {
        let f = by_name
            .get(func.as_str())
            .unwrap_or_else(|| panic!("{func} of the cc profile is not in the relinked map"));
        let hot = &cl[0];
        let first_range: Vec<u32> = f.ranges[0].blocks.iter().map(|b| b.id).collect();
        assert_eq!(
            &first_range, hot,
            "{func}: the hot part's blocks are not in the cluster's order"
        );
        let listed: Vec<u32> = cl.iter().flatten().copied().collect();
        let total = f.blocks().count();
        if listed.len() < total {
            assert!(
                f.ranges.len() >= 2,
                "{func}: {} of {total} blocks are cold but the function was not split",
                total - listed.len()
            );
            assert!(
                b.symbol_address(&format!("{func}.cold")).is_some(),
                "{func}.cold is missing"
            );
        }
        checked += 1;
    }
    let addresses: Vec<(u64, &str)> = ld
        .lines()
        .map(|s| {
            let a = b
                .symbol_address(s)
                .unwrap_or_else(|| panic!("ld profile symbol {s} is not in the relinked binary"));
            (a, s)
        })
        .collect();
    for w in addresses.windows(2) {
        assert!(
            w[0].0 < w[1].0,
            "the ld profile orders {} before {} but lld placed them at {:#x} and {:#x}",
            w[0].1,
            w[1].1,
            w[0].0,
            w[1].0
        );
    }
    checked
}

fn output_of(bin: &Path, args: &[&str]) -> Vec<u8> {
    run_ok(Command::new(bin).args(args)).stdout
}

#[test]
fn interpreter_relinked_in_the_profiles_order() {
    if !tools() {
        return;
    }
    for llvm in releases() {
        interpreter_relinked(llvm);
    }
}

/// The releases whose clang and lld take the profiles.
fn releases() -> Vec<Llvm> {
    kfdo_testkit::llvm_releases(&["clang", "clang++", "ld.lld"])
}

fn interpreter_relinked(llvm: Llvm) {
    let dir = tempfile::tempdir().unwrap();
    let (bin, data, prefix) = profile_program(llvm, dir.path(), "interp.c", &["18"]);
    let (cc, ld) = paths(&prefix);
    let cc_text = std::fs::read_to_string(&cc).unwrap();
    let ld_text = std::fs::read_to_string(&ld).unwrap();
    let fns = clusters(&cc_text);
    assert!(
        fns.iter().any(|(n, _)| n == "run"),
        "the interpreter loop is hot:\n{cc_text}"
    );
    assert!(
        ld_text.lines().any(|l| l.ends_with(".cold")),
        "some hot function has cold blocks to split:\n{ld_text}"
    );
    // The same samples give the same files.
    let again = dir.path().join("again");
    assert!(propeller(&bin, &data, &again).status.success());
    let (cc2, ld2) = paths(&again);
    assert_eq!(cc_text, std::fs::read_to_string(cc2).unwrap());
    assert_eq!(ld_text, std::fs::read_to_string(ld2).unwrap());

    let relinked = relink(llvm, dir.path(), "interp.c", &prefix, "interp-propeller");
    assert!(assert_layout_followed(&relinked, &prefix) >= 1);
    assert_eq!(output_of(&bin, &["18"]), output_of(&relinked, &["18"]));
}

#[test]
fn cpp_program_relinked_in_the_profiles_order() {
    if !tools() {
        return;
    }
    for llvm in releases() {
        let dir = tempfile::tempdir().unwrap();
        let (bin, _, prefix) = profile_program(llvm, dir.path(), "shapes.cpp", &["2000"]);
        let relinked = relink(llvm, dir.path(), "shapes.cpp", &prefix, "shapes-propeller");
        assert!(assert_layout_followed(&relinked, &prefix) >= 2, "{llvm}");
        assert_eq!(output_of(&bin, &["2000"]), output_of(&relinked, &["2000"]));
    }
}

/// Runs kfdo expecting failure; returns stderr and asserts neither file exists.
fn fails(bin: &Path, data: &Path, prefix: &Path) -> String {
    let out = propeller(bin, data, prefix);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "kfdo accepted a bad input");
    let (cc, ld) = paths(prefix);
    assert!(!cc.exists() && !ld.exists(), "a profile was written: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// The first map entry's byte offset and its version-2 layout, for patching.
fn map_section(bin: &Path, dir: &Path) -> Vec<u8> {
    let dump = dir.join("map.bin");
    run_ok(
        Command::new("llvm-objcopy-19")
            .arg(format!(
                "--dump-section=.llvm_bb_addr_map={}",
                dump.display()
            ))
            .arg(bin)
            .arg(dir.join("scratch")),
    );
    std::fs::read(dump).unwrap()
}

fn with_map(bin: &Path, dir: &Path, map: &[u8], name: &str) -> PathBuf {
    let file = dir.join(format!("{name}.map"));
    std::fs::write(&file, map).unwrap();
    let out = dir.join(name);
    run_ok(
        Command::new("llvm-objcopy-19")
            .arg(format!(
                "--update-section=.llvm_bb_addr_map={}",
                file.display()
            ))
            .arg(bin)
            .arg(&out),
    );
    out
}

fn uleb(bytes: &[u8], at: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return v;
        }
    }
}

/// Where each block's size lies in a version-2 entry without features that starts at
/// `at`: (offset of the size field, its length in bytes, value), and where the next
/// entry starts.
fn block_sizes(map: &[u8], mut at: usize) -> (Vec<(usize, usize, u64)>, usize) {
    assert_eq!(map[at], 2, "clang-19 writes version 2");
    assert_eq!(map[at + 1], 0, "no feature bits without PGO analysis");
    at += 2 + 8;
    let n = uleb(map, &mut at);
    let mut sizes = Vec::new();
    for _ in 0..n {
        uleb(map, &mut at); // id
        uleb(map, &mut at); // offset
        let start = at;
        let v = uleb(map, &mut at);
        sizes.push((start, at - start, v));
        uleb(map, &mut at); // metadata
    }
    (sizes, at)
}

#[test]
fn bad_inputs_are_refused_and_nothing_is_written() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (bin, data, _) = profile_program(Llvm::DEFAULT, d, "interp.c", &["18"]);

    // A binary built without the map.
    let plain_dir = d.join("plain");
    std::fs::create_dir(&plain_dir).unwrap();
    let plain = build("interp.c", &plain_dir, &["-fuse-ld=lld"]);
    let plain_data = d.join("plain.data");
    record_emulated(&plain, &["18"], &plain_data);
    let err = fails(&plain, &plain_data, &d.join("nomap"));
    assert!(err.contains("-fbasic-block-address-map"), "{err}");

    // A map of a version LLVM never wrote.
    let mut map = map_section(&bin, d);
    map[0] = 9;
    let unknown = with_map(&bin, d, &map, "interp-v9");
    let err = fails(&unknown, &data, &d.join("v9"));
    assert!(
        err.contains("version 9") && err.contains("byte 0x0"),
        "{err}"
    );

    // Samples of another build: the same program at -O1.
    let other_dir = d.join("o1");
    std::fs::create_dir(&other_dir).unwrap();
    let other = build("interp.c", &other_dir, &[MAP, &["-O1"]].concat());
    let err = fails(&other, &data, &d.join("other"));
    assert!(err.contains("build") || err.contains("build-id"), "{err}");

    // The hottest function's blocks moved since the map was written: every block of
    // `run` takes the next block's size, so its block boundaries no longer fall on
    // its instructions.
    let map = map_section(&bin, d);
    let b = Binary::open(&bin).unwrap();
    let names = BbAddrMap::function_names(&b);
    let run = BbAddrMap::read(&b)
        .unwrap()
        .functions
        .iter()
        .position(|f| names.get(&f.address()).map(String::as_str) == Some("run"))
        .expect("run is mapped");
    let mut at = 0;
    for _ in 0..run {
        at = block_sizes(&map, at).1;
    }
    let (sizes, _) = block_sizes(&map, at);
    let mut stale = map.clone();
    let same_width: Vec<_> = sizes.iter().filter(|s| s.1 == 1).collect();
    assert!(same_width.len() >= 4, "run has blocks to shuffle");
    for (i, s) in same_width.iter().enumerate() {
        let next = same_width[(i + 1) % same_width.len()];
        stale[s.0] = next.2 as u8;
    }
    assert_ne!(stale, map);
    let moved = with_map(&bin, d, &stale, "interp-stale");
    let err = fails(&moved, &data, &d.join("stale"));
    assert!(
        err.contains("stale") || err.contains("does not match"),
        "{err}"
    );
    assert!(err.contains("run"), "the message names the function: {err}");
}
