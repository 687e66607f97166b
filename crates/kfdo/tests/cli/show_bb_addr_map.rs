//! `kfdo show --bb-addr-map`: the command prints every function and block of the map
//! (the field-by-field comparison with llvm-readobj-19 is crates/elf/tests/bb_addr_map.rs),
//! and refuses a binary without one.

use crate::common;

use std::process::Command;

use common::*;
use kfdo_testkit::require_tools;

#[test]
fn prints_each_function_and_block() {
    if !require_tools(&["clang-19", "llvm-readobj-19"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = build("shapes.cpp", dir.path(), &["-fbasic-block-address-map"]);
    let out = run_ok(kfdo().args(["show", "--bb-addr-map"]).arg(&bin));
    let text = String::from_utf8(out.stdout).unwrap();
    let readobj = run_ok(
        Command::new("llvm-readobj-19")
            .arg("--bb-addr-map")
            .arg(&bin),
    );
    let readobj = String::from_utf8(readobj.stdout).unwrap();
    let functions = readobj.matches("Function {").count();
    let blocks = readobj.matches("ID: ").count();
    assert!(functions > 10, "{functions} functions");
    assert!(
        text.starts_with(&format!(
            "# {}: {functions} functions, {blocks} basic blocks\n",
            bin.display()
        )),
        "{}",
        &text[..200.min(text.len())]
    );
    assert_eq!(text.matches("\nfunction ").count(), functions);
    assert_eq!(text.matches("\n    bb ").count(), blocks);
    assert!(text.contains("function main "), "main is named");
}

#[test]
fn binary_without_map_is_an_error() {
    if !require_tools(&["clang-19"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = build("lz.c", dir.path(), &[]);
    let out = kfdo()
        .args(["show", "--bb-addr-map"])
        .arg(&bin)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("no basic-block address map") && err.contains("-fbasic-block-address-map"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}
