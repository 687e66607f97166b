//! kfdo reads what `llvm-profgen-19` writes, and writes it back byte for
//! byte: a small program is built with clang-19 at test time, an LBR sample
//! script (`perf script -F ip,brstack` form) is synthesized from its
//! disassembly (loop back edges, the call into `work`, its return), and
//! llvm-profgen turns it into text and extbinary profiles with a body,
//! discriminators, an inlinee and a call target. Skipped without the tools.

#[path = "format_gen.rs"]
mod gen;

use std::path::Path;
use std::process::Command;

use gen::*;
use kfdo_afdo::{extbinary, read_profile};

const SOURCE: &str = r#"static inline int sq(int x) { return x * x + 1; }
__attribute__((noinline)) int work(int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    s += sq(i) ^ (s >> 3);
  return s;
}
int main(int argc, char **argv) { return work(argc * 1000000) & 1; }
"#;

struct Insn {
    addr: u64,
    mnemonic: String,
    target: Option<u64>,
}

/// Instructions of `func` from `llvm-objdump -d` output.
fn disassemble(bin: &Path, func: &str) -> Vec<Insn> {
    let out = run(Command::new("llvm-objdump-19")
        .args(["-d", "--no-show-raw-insn"])
        .arg(bin));
    let text = String::from_utf8_lossy(&out);
    let mut v = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.ends_with(">:") {
            inside = line.contains(&format!("<{func}>:"));
            continue;
        }
        if !inside {
            continue;
        }
        let Some((a, rest)) = line.split_once(':') else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(a.trim(), 16) else {
            continue;
        };
        let mut toks = rest.split_whitespace();
        let Some(mnemonic) = toks.next() else {
            continue;
        };
        let target = toks
            .next()
            .and_then(|t| u64::from_str_radix(t.trim_start_matches("0x"), 16).ok());
        v.push(Insn {
            addr,
            mnemonic: mnemonic.to_owned(),
            target,
        });
    }
    v
}

#[test]
fn reads_and_rewrites_llvm_profgen_output() {
    if !kfdo_testkit::require_tools(&["clang-19", "llvm-profgen-19", "llvm-objdump-19"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = write_file(d, "pg.c", SOURCE.as_bytes());
    let bin = d.join("pg");
    run(Command::new("clang-19")
        .args([
            "-O2",
            "-g",
            "-fdebug-info-for-profiling",
            "-no-pie",
            "-fno-pie",
            "-o",
        ])
        .arg(&bin)
        .arg(&src));

    let work = disassemble(&bin, "work");
    let main = disassemble(&bin, "main");
    let work_start = work[0].addr;
    let back_edges: Vec<(u64, u64)> = work
        .iter()
        .filter(|i| i.mnemonic.starts_with('j') && i.mnemonic != "jmp")
        .filter_map(|i| i.target.filter(|&t| t < i.addr).map(|t| (i.addr, t)))
        .collect();
    assert!(!back_edges.is_empty(), "no loop back edge found in work");
    let ret = work
        .iter()
        .rev()
        .find(|i| i.mnemonic.starts_with("ret"))
        .unwrap()
        .addr;
    let ci = main
        .iter()
        .position(|i| i.mnemonic.starts_with("call") && i.target == Some(work_start))
        .expect("main calls work");
    let (call, after_call) = (main[ci].addr, main[ci + 1].addr);

    // Newest branch first, as perf prints the branch stack.
    let br = |f: u64, t: u64| format!("0x{f:x}/0x{t:x}/P/-/-/0");
    let mut script = String::new();
    for k in 0..300 {
        let mut e = Vec::new();
        if k % 3 == 0 {
            e.push(br(ret, after_call));
        }
        while e.len() < 15 {
            let (f, t) = back_edges[(k + e.len()) % back_edges.len()];
            e.push(br(f, t));
        }
        e.push(br(call, work_start));
        let ip = if k % 3 == 0 {
            after_call
        } else {
            back_edges[0].1
        };
        script.push_str(&format!(" {ip:x} {}\n", e.join(" ")));
    }
    let script_path = write_file(d, "pg.script", script.as_bytes());
    let profgen = |fmt: &str, out: &str| {
        let o = d.join(out);
        run(Command::new("llvm-profgen-19")
            .arg(format!("--perfscript={}", script_path.display()))
            .arg(format!("--binary={}", bin.display()))
            .arg(format!("--format={fmt}"))
            .arg(format!("--output={}", o.display())));
        o
    };
    let pt = profgen("text", "pg.txt");
    let pe = profgen("extbinary", "pg.extbinary");

    let from_text = read_profile(&pt).unwrap();
    let from_ext = read_profile(&pe).unwrap();
    assert_eq!(
        from_text, from_ext,
        "text and extbinary from llvm-profgen differ"
    );
    // What the profile holds: work with a body, sq inlined into it, and
    // main calling work.
    let w = &from_ext.functions["work"];
    assert!(w.total_samples > 0 && !w.body.is_empty());
    assert!(w.callsites.values().any(|m| m.contains_key("sq")), "{w:?}");
    let m = &from_ext.functions["main"];
    assert!(
        m.body.values().any(|r| r.call_targets.contains_key("work")),
        "{m:?}"
    );
    assert!(w.body.keys().any(|l| l.discriminator != 0), "{w:?}");

    // kfdo writes both back byte for byte.
    assert_eq!(
        String::from_utf8_lossy(&text_of(&from_ext)),
        String::from_utf8_lossy(&std::fs::read(&pt).unwrap())
    );
    assert_eq!(ext_of(&from_text), std::fs::read(&pe).unwrap());
    // And the summary profgen stored is the one kfdo computes.
    let (_, stored) =
        extbinary::parse_extbinary_with_summary(&std::fs::read(&pe).unwrap(), "pg").unwrap();
    assert_eq!(stored, Some(kfdo_afdo::ProfileSummary::compute(&from_ext)));
}
