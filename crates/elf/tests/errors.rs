//! Bad inputs give typed errors with the file name and a hint, never a panic.

mod common;

use std::path::Path;

use common::*;
use kfdo_elf::{Binary, Code, ElfError, Symbolizer};

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn not_an_elf_file() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("script.sh", &b"#!/bin/sh\necho hi\n"[..]),
        ("empty", &b""[..]),
        ("short", &b"\x7fEL"[..]),
    ] {
        let p = write(dir.path(), name, bytes);
        let e = Binary::open(&p).unwrap_err();
        assert!(matches!(e, ElfError::NotElf { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains(name) && msg.contains("not an ELF file"),
            "{msg}"
        );
    }
    let e = Binary::open(&dir.path().join("missing")).unwrap_err();
    assert!(matches!(e, ElfError::Io { .. }), "{e}");
}

#[test]
fn garbage_after_magic() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = b"\x7fELF\x02\x01\x01".to_vec();
    bytes.resize(200, 0xff);
    let p = write(dir.path(), "garbage", &bytes);
    let e = Binary::open(&p).unwrap_err();
    assert!(matches!(e, ElfError::Malformed { .. }), "{e}");
    let mut bytes32 = b"\x7fELF\x01\x01\x01".to_vec();
    bytes32.resize(200, 0);
    let p = write(dir.path(), "elf32", &bytes32);
    let e = Binary::open(&p).unwrap_err();
    assert!(matches!(e, ElfError::Unsupported { .. }), "{e}");
}

#[test]
fn truncated_elf_every_length_never_panics() {
    if !kfdo_testkit::require_tools(&["clang-19"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = build(dir.path(), "interp.c", "full", &["-O2", "-g"]);
    let full = std::fs::read(&bin).unwrap();
    // Every prefix in the header area, then coarser steps through the file;
    // each must give a result or a typed error, and whatever opens must also
    // survive disassembly and symbolization.
    let mut lens: Vec<usize> = (0..512).collect();
    lens.extend((512..full.len()).step_by(997));
    let mut opened = 0;
    for len in lens {
        match Binary::from_bytes(Path::new("truncated"), full[..len].to_vec()) {
            Ok(b) => {
                opened += 1;
                let _ = Code::new(&b);
                if let Ok(s) = Symbolizer::new(&b) {
                    let mut f = Vec::new();
                    for r in s.function_ranges().iter().take(20) {
                        s.frames(r.start, &mut f);
                    }
                }
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.starts_with("truncated:"), "{msg}");
            }
        }
    }
    // The section headers live at the end, so short prefixes must fail.
    let e =
        Binary::from_bytes(Path::new("truncated"), full[..full.len() / 2].to_vec()).unwrap_err();
    assert!(matches!(e, ElfError::Malformed { .. }), "{e}");
    eprintln!("{opened} prefixes opened");
}

#[test]
fn corrupted_debug_info_never_panics() {
    if !kfdo_testkit::require_tools(&["clang-19"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "interp.c", "full", &["-O2", "-g", "-gdwarf-5"]);
    let full = std::fs::read(&path).unwrap();
    let bin = Binary::open(&path).unwrap();
    let mut targets = Vec::new();
    for name in [
        ".debug_info",
        ".debug_abbrev",
        ".debug_line",
        ".debug_rnglists",
        ".debug_str_offsets",
        ".debug_addr",
    ] {
        if let Some(s) = bin.section_by_name(name) {
            targets.push((s.offset as usize, s.size as usize));
        }
    }
    // Deterministic pseudo-random byte flips inside the debug sections.
    let mut x: u64 = 0x243f6a8885a308d3;
    for round in 0..60 {
        let mut bytes = full.clone();
        for _ in 0..8 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (off, size) = targets[(x as usize) % targets.len()];
            if size == 0 {
                continue;
            }
            bytes[off + (x >> 8) as usize % size] = (x >> 32) as u8;
        }
        let b = Binary::from_bytes(Path::new("flipped"), bytes).unwrap();
        if let Ok(s) = Symbolizer::new(&b) {
            let code = Code::new(&b).unwrap();
            let mut f = Vec::new();
            for i in (0..code.len()).step_by(3) {
                s.frames(code.addr(i), &mut f);
            }
            let _ = s.function_ranges();
        }
        let _ = round;
    }
}

#[test]
fn no_debug_info() {
    if !kfdo_testkit::require_tools(&["clang-19"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "interp.c", "nodebug", &["-O2"]);
    let bin = Binary::open(&path).unwrap();
    assert!(!bin.has_debug_info());
    assert!(Code::new(&bin).unwrap().len() > 100, "code still decodes");
    let e = Symbolizer::new(&bin).unwrap_err();
    assert!(matches!(e, ElfError::NoDebugInfo { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("nodebug") && msg.contains("rebuild with -g"),
        "{msg}"
    );
}

#[test]
fn separate_and_split_debug_info_are_reported() {
    if !kfdo_testkit::require_tools(&["clang-19", "llvm-objcopy-19"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "interp.c", "prog", &["-O2", "-g"]);
    let dbg = dir.path().join("prog.debug");
    run(
        "llvm-objcopy-19",
        &[
            "--only-keep-debug",
            path.to_str().unwrap(),
            dbg.to_str().unwrap(),
        ],
    );
    run(
        "llvm-objcopy-19",
        &[
            "--strip-debug",
            &format!("--add-gnu-debuglink={}", dbg.display()),
            path.to_str().unwrap(),
        ],
    );
    let e = Symbolizer::new(&Binary::open(&path).unwrap()).unwrap_err();
    assert!(matches!(e, ElfError::SeparateDebugInfo { .. }), "{e}");
    assert!(e.to_string().contains("prog.debug"), "{e}");

    for dwarf in ["-gdwarf-5", "-gdwarf-4"] {
        let split = build(
            dir.path(),
            "interp.c",
            "split",
            &["-O2", "-g", "-gsplit-dwarf", dwarf],
        );
        let e = Symbolizer::new(&Binary::open(&split).unwrap()).unwrap_err();
        assert!(matches!(e, ElfError::SplitDwarf { .. }), "{dwarf}: {e}");
        assert!(e.to_string().contains("-gsplit-dwarf"), "{e}");
    }
}

#[test]
fn stripped_binary_has_no_code_like_llvm_profgen() {
    if !kfdo_testkit::require_tools(&["clang-19", "llvm-objcopy-19"]) {
        return;
    }
    // llvm-profgen disassembles from .symtab symbols only; a fully stripped
    // binary therefore has no decodable code, and neither does ours.
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "interp.c", "stripped", &["-O2"]);
    run("llvm-objcopy-19", &["--strip-all", path.to_str().unwrap()]);
    let bin = Binary::open(&path).unwrap();
    assert!(Code::new(&bin).unwrap().is_empty());
    assert!(bin.build_id().is_some() || bin.build_id().is_none());
}
