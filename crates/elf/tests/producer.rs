//! The compiler that built a binary, from its DWARF: GCC's release for gcc-11 and
//! gcc-12 builds, nothing for clang's and for a stripped binary.

use std::path::Path;
use std::process::Command;

use kfdo_elf::{gcc_major_of_producer, producers, Binary};
use kfdo_testkit::require_tools;

const PROGRAM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/programs/branches.c");

fn cc(compiler: &str, dir: &Path, name: &str) -> std::path::PathBuf {
    let out = dir.join(name);
    let res = Command::new(compiler)
        .args(["-O2", "-g", "-o"])
        .arg(&out)
        .arg(PROGRAM)
        .output()
        .unwrap();
    assert!(
        res.status.success(),
        "{compiler} failed: {}",
        String::from_utf8_lossy(&res.stderr)
    );
    out
}

fn gcc_majors(bin: &Path) -> Vec<u32> {
    let b = Binary::open(bin).unwrap();
    producers(&b)
        .unwrap()
        .iter()
        .filter_map(|p| gcc_major_of_producer(p))
        .collect()
}

#[test]
fn gcc_builds_name_their_release_clang_and_stripped_builds_none() {
    if !require_tools(&["gcc-11", "gcc-12", "clang-19", "strip"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for v in [11, 12] {
        let bin = cc(&format!("gcc-{v}"), dir.path(), &format!("b{v}"));
        let majors = gcc_majors(&bin);
        assert!(!majors.is_empty(), "gcc-{v}: no GCC producer in the DWARF");
        assert!(majors.iter().all(|&m| m == v), "gcc-{v}: {majors:?}");
    }

    let clang = cc("clang-19", dir.path(), "clang");
    let b = Binary::open(&clang).unwrap();
    let p = producers(&b).unwrap();
    assert!(p.iter().any(|p| p.contains("clang")), "{p:?}");
    assert_eq!(gcc_majors(&clang), Vec::<u32>::new());

    let stripped = cc("gcc-11", dir.path(), "stripped");
    let res = Command::new("strip").arg(&stripped).output().unwrap();
    assert!(res.status.success());
    let b = Binary::open(&stripped).unwrap();
    assert_eq!(producers(&b).unwrap(), Vec::<String>::new());
}
