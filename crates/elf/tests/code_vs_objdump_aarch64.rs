//! `Code` on aarch64 programs (cross-compiled with clang-19) against
//! `llvm-objdump-19 -d` over `.text`: every instruction start and its kind.

mod common;

use common::*;
use kfdo_elf::{Arch, Binary, Code, InsnKind};

/// Our kind for an objdump A64 mnemonic (traps folded into Other, as the
/// x86-64 check does; they have their own unit test).
fn objdump_kind(mnemonic: &str) -> InsnKind {
    match mnemonic {
        "bl" => InsnKind::Call,
        "blr" | "blraa" | "blraaz" | "blrab" | "blrabz" => InsnKind::IndirectCall,
        "ret" | "retaa" | "retab" | "eret" => InsnKind::Return,
        "cbz" | "cbnz" | "tbz" | "tbnz" => InsnKind::CondBranch,
        m if m.starts_with("b.") || m.starts_with("bc.") => InsnKind::CondBranch,
        "b" => InsnKind::Jump,
        "br" | "braa" | "braaz" | "brab" | "brabz" => InsnKind::IndirectJump,
        _ => InsnKind::Other,
    }
}

fn check(src: &str, flags: &[&str], must_see: &[InsnKind]) {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec!["--target=aarch64-linux-gnu"];
    all.extend(flags);
    let path = build(dir.path(), src, "bin", &all);
    let bin = Binary::open(&path).unwrap();
    assert_eq!(bin.arch(), Arch::Aarch64, "e_machine of {}", path.display());
    let code = Code::new(&bin).unwrap();
    let text = bin.section_by_name(".text").unwrap();
    let (lo, hi) = (text.addr, text.addr + text.size);

    let dump = run(
        "llvm-objdump-19",
        &[
            "-d",
            // Zero words are `udf #0` to LLVM, not "...": list them.
            "--disassemble-zeroes",
            "--no-show-raw-insn",
            "-j",
            ".text",
            path.to_str().unwrap(),
        ],
    );
    let mut theirs: Vec<(u64, InsnKind)> = Vec::new();
    for line in dump.lines() {
        if !line.starts_with(' ') {
            continue;
        }
        let Some((a, rest)) = line.trim_start().split_once(':') else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(a, 16) else {
            continue;
        };
        let Some(mnemonic) = rest.split_whitespace().next() else {
            continue;
        };
        if mnemonic == "<unknown>" {
            continue;
        }
        theirs.push((addr, objdump_kind(mnemonic)));
    }
    let ours: Vec<(u64, InsnKind)> = code
        .iter()
        .filter(|(a, _, _)| (lo..hi).contains(a))
        .map(|(a, size, k)| {
            assert_eq!(size, 4, "A64 instruction at {a:#x}");
            (
                a,
                if k == InsnKind::Trap {
                    InsnKind::Other
                } else {
                    k
                },
            )
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o.0, t.0, "instruction start");
        assert_eq!(o.1, t.1, "kind at {:#x}", o.0);
        seen.insert(o.1);
    }
    assert_eq!(ours.len(), theirs.len(), "instruction count in .text");
    for k in must_see {
        assert!(seen.contains(k), "{src}: no {k:?} seen");
    }
    eprintln!(
        "{src} (aarch64): {} instructions in .text agree, kinds seen {seen:?}",
        ours.len()
    );
}

/// Whether clang-19 can link for aarch64 here (Debian's cross sysroot).
fn cross_tools() -> bool {
    kfdo_testkit::require_tools(&["clang-19", "llvm-objdump-19", "aarch64-linux-gnu-gcc"])
}

#[test]
fn c_program_matches_objdump() {
    if !cross_tools() {
        return;
    }
    use InsnKind::*;
    // branches.c has every branch form; interp.c is the x86-64 check's program.
    check(
        "branches.c",
        &["-O2", "-g"],
        &[Call, IndirectCall, Return, CondBranch, Jump, IndirectJump],
    );
    check(
        "interp.c",
        &["-O2", "-g"],
        &[Call, Return, CondBranch, Jump],
    );
}

#[test]
fn pointer_authentication_and_bti_match_objdump() {
    if !cross_tools() {
        return;
    }
    // With v8.3 and -mbranch-protection=standard clang signs return addresses
    // (paciasp ... retaa) and puts BTI landing pads at indirect targets: retaa
    // must be a return, the hints plain instructions.
    check(
        "branches.c",
        &[
            "-O2",
            "-g",
            "-march=armv8.3-a",
            "-mbranch-protection=standard",
        ],
        &[InsnKind::Call, InsnKind::Return, InsnKind::CondBranch],
    );
}
