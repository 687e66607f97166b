//! `Code` instruction starts and kinds against `llvm-objdump-19 -d` over
//! `.text`.

mod common;

use common::*;
use kfdo_elf::{Binary, Code, InsnKind};

const PREFIXES: &[&str] = &[
    "rep", "repe", "repz", "repne", "repnz", "lock", "notrack", "data16", "cs", "ds", "es", "ss",
    "fs", "gs", "bnd",
];

/// Our kind for an objdump mnemonic + operands (Trap folded into Other).
fn objdump_kind(text: &str) -> InsnKind {
    let mut toks = text.split_whitespace().skip_while(|t| PREFIXES.contains(t));
    let m = toks.next().unwrap_or("");
    let indirect = toks.next().is_some_and(|op| op.starts_with('*'));
    if m.starts_with("call") || m.starts_with("lcall") {
        if indirect {
            InsnKind::IndirectCall
        } else {
            InsnKind::Call
        }
    } else if m.starts_with("ret") || m.starts_with("lret") || m.starts_with("iret") {
        InsnKind::Return
    } else if m == "jmp" || m == "jmpq" || m == "ljmp" {
        if indirect {
            InsnKind::IndirectJump
        } else {
            InsnKind::Jump
        }
    } else if m.starts_with('j') || m.starts_with("loop") {
        InsnKind::CondBranch
    } else {
        InsnKind::Other
    }
}

fn check(src: &str, flags: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), src, "bin", flags);
    let bin = Binary::open(&path).unwrap();
    let code = Code::new(&bin).unwrap();
    let text = bin.section_by_name(".text").unwrap();
    let (lo, hi) = (text.addr, text.addr + text.size);

    let dump = run(
        "llvm-objdump-19",
        &[
            "-d",
            "--no-show-raw-insn",
            "-j",
            ".text",
            path.to_str().unwrap(),
        ],
    );
    let mut theirs: Vec<(u64, InsnKind)> = Vec::new();
    for line in dump.lines() {
        let Some((a, rest)) = line.trim_start().split_once(':') else {
            continue;
        };
        if !line.starts_with(' ') {
            continue;
        }
        let Ok(addr) = u64::from_str_radix(a, 16) else {
            continue;
        };
        let rest = rest.trim_start();
        if rest.starts_with("<unknown>") || rest.is_empty() {
            continue;
        }
        theirs.push((addr, objdump_kind(rest)));
    }
    let ours: Vec<(u64, InsnKind)> = code
        .iter()
        .filter(|(a, _, _)| (lo..hi).contains(a))
        .map(|(a, _, k)| {
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
    assert_eq!(ours.len(), theirs.len(), "instruction count in .text");
    let mut seen = std::collections::HashSet::new();
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o.0, t.0, "instruction start");
        assert_eq!(o.1, t.1, "kind at {:#x}", o.0);
        seen.insert(o.1);
    }
    // The programs exercise every interesting class.
    for k in [
        InsnKind::Call,
        InsnKind::Return,
        InsnKind::CondBranch,
        InsnKind::Jump,
    ] {
        assert!(seen.contains(&k), "{src}: no {k:?} seen");
    }
    // Lookup helpers agree with the table.
    for i in (0..code.len()).step_by(7) {
        let a = code.addr(i);
        assert!(code.is_code(a));
        assert_eq!(code.index_of(a), Some(i));
        assert_eq!(code.insn_at_or_after(a), Some(i));
        if code.size(i) > 1 {
            assert!(!code.is_code(a + 1));
            assert_eq!(
                code.insn_at_or_after(a + 1),
                (i + 1 < code.len()).then_some(i + 1)
            );
        }
    }
    assert_eq!(code.insn_at_or_after(0), Some(0));
    assert_eq!(code.insn_at_or_after(u64::MAX), None);
    eprintln!(
        "{src}: {} instructions in .text agree, kinds seen {seen:?}",
        ours.len()
    );
}

#[test]
fn c_program_matches_objdump() {
    if !kfdo_testkit::require_tools(&["clang-19", "llvm-objdump-19"]) {
        return;
    }
    check("interp.c", &["-O2", "-g"]);
}

#[test]
fn cxx_program_matches_objdump() {
    if !kfdo_testkit::require_tools(&["clang++-19", "llvm-objdump-19"]) {
        return;
    }
    check("containers.cpp", &["-O2", "-g"]);
}
