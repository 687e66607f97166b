//! Emulated LBR of an aarch64 program under qemu-aarch64, chosen from the program's ELF
//! header. There is no callgrind for a foreign program here, so the oracles are the
//! program's own disassembly (`llvm-objdump-19`: every recorded branch starts at a branch
//! instruction and a direct one lands on its encoded target) and the program's logic
//! (exact call counts per edge, known from its loop).

mod common;

use common::{stdout_of, symbol_range};
use kfdo_perf::{PerfData, Record};
use kfdo_record::{record_user, RecordConfig};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// N iterations; each makes one indirect call (ops[i % 3]: blr), a call into a jump table
/// (step, 16 cases: bl, br), a bit test (bit5: tbz/tbnz, then f_add when bit 5 of i is set) and a
/// null test (nonnull: cbz/cbnz).
const PROG_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
typedef long (*op_t)(long);
__attribute__((noinline)) long f_add(long x) { return x + 3; }
__attribute__((noinline)) long f_xor(long x) { return x ^ 0x55; }
__attribute__((noinline)) long f_mul(long x) { return x * 7; }
op_t ops[3] = {f_add, f_xor, f_mul};
__attribute__((noinline)) long step(int k, long x) {
  switch (k) {
  case 0: return x + 3;
  case 1: return x ^ 0x55;
  case 2: return x * 7;
  case 3: return x >> 1;
  case 4: return x - 11;
  case 5: return x | 0x100;
  case 6: return ~x;
  case 7: return x * 13 + 1;
  case 8: return x & 0xfff;
  case 9: return x << 2;
  case 10: return x / 3;
  case 11: return x % 1000;
  case 12: return -x;
  case 13: return x ^ (x >> 4);
  case 14: return x + 0x1234;
  default: return x;
  }
}
__attribute__((noinline)) long bit5(unsigned long v, long x) {
  if (v & 32) x = f_add(x);
  return x;
}
__attribute__((noinline)) long nonnull(const long *p) { return p ? *p : 1; }
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 3000;
  long acc = 0;
  for (long i = 0; i < n; i++) {
    acc = ops[i % 3](acc) & 0xffff;
    acc = step((int)(i & 15), acc);
    acc = bit5((unsigned long)i, acc);
    acc += nonnull((i & 1) ? &acc : 0);
  }
  printf("%ld\n", acc);
  const char *e = getenv("KFDO_TEST_EXIT");
  return e ? atoi(e) : 0;
}
"#;

const N: u64 = 3000;

fn tools() -> bool {
    kfdo_testkit::require_tools(&[
        "clang-19",
        "llvm-objdump-19",
        "llvm-nm-19",
        "qemu-aarch64",
        "aarch64-linux-gnu-gcc",
    ])
}

/// The program, cross-compiled (dynamically linked: QEMU finds its libc in Debian's
/// cross sysroot) and not PIE, so that addresses are the file's.
fn build(dir: &Path) -> PathBuf {
    let c = dir.join("prog.c");
    std::fs::write(&c, PROG_C).unwrap();
    let exe = dir.join("prog-a64");
    stdout_of(
        Command::new("clang-19")
            .args(["--target=aarch64-linux-gnu", "-O2", "-g", "-fuse-ld=lld"])
            .args(["-no-pie", "-fno-pie", "-o"])
            .arg(&exe)
            .arg(&c),
    );
    exe
}

/// One instruction of the disassembly: its mnemonic and, for a direct branch, its target.
struct Insn {
    mnemonic: String,
    target: Option<u64>,
}

fn disassemble(exe: &Path) -> HashMap<u64, Insn> {
    let out = stdout_of(
        Command::new("llvm-objdump-19")
            .args(["-d", "--no-show-raw-insn"])
            .arg(exe),
    );
    let mut m = HashMap::new();
    for line in out.lines().filter(|l| l.starts_with(' ')) {
        let Some((a, rest)) = line.trim_start().split_once(':') else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(a, 16) else {
            continue;
        };
        let mut toks = rest.split_whitespace();
        let Some(mnemonic) = toks.next() else {
            continue;
        };
        // Direct branches print their target as "0x4005f0 <f+0x10>": the last hex word
        // before the '<'.
        let target = rest
            .split('<')
            .next()
            .and_then(|s| s.split_whitespace().last())
            .and_then(|t| t.strip_prefix("0x"))
            .and_then(|h| u64::from_str_radix(h, 16).ok());
        m.insert(
            addr,
            Insn {
                mnemonic: mnemonic.to_string(),
                target,
            },
        );
    }
    m
}

/// (from, to) of each sample's one branch record, counted; and the perf.data's ARCH.
fn edges(data: &Path) -> (HashMap<(u64, u64), u64>, Option<String>, u64) {
    let pd = PerfData::open(data).unwrap_or_else(|e| panic!("{}: {e}", data.display()));
    let mut m = HashMap::new();
    let mut samples = 0;
    for r in pd.records() {
        if let Record::Sample(s) = r.unwrap() {
            let stack: Vec<_> = s.branch_stack.iter().collect();
            assert_eq!(stack.len(), 1);
            let b = &stack[0];
            assert_eq!(
                s.ip, b.to,
                "the sample IP is the target of the sampled branch"
            );
            *m.entry((b.from, b.to)).or_insert(0) += 1;
            samples += 1;
        }
    }
    (m, pd.arch(), samples)
}

fn is_branch(m: &str) -> bool {
    matches!(
        m,
        "b" | "bl" | "br" | "blr" | "ret" | "cbz" | "cbnz" | "tbz" | "tbnz"
    ) || m.starts_with("b.")
}

#[test]
fn period_1_records_every_taken_branch_at_its_instruction() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let data = dir.path().join("p1.data");
    let counters = dir.path().join("c.json");
    let out = record_user(
        &RecordConfig::new(&exe, &data)
            .args([N.to_string()])
            .period(1)
            .depth(1)
            .counters(&counters),
    )
    .unwrap();
    assert_eq!(out.exit_code, 0);
    let (vl, arch, samples) = edges(&data);
    assert_eq!(arch.as_deref(), Some("aarch64"), "perf.data ARCH feature");
    let c = out.counters.unwrap();
    assert_eq!(
        samples, c.total.user.taken_branches,
        "one sample per taken branch"
    );

    // The fast path (no counters) records the same edges.
    let fast = dir.path().join("fast.data");
    record_user(
        &RecordConfig::new(&exe, &fast)
            .args([N.to_string()])
            .period(1)
            .depth(1),
    )
    .unwrap();
    assert_eq!(edges(&fast).0, vl, "fast path vs counting path");

    let code = disassemble(&exe);
    let (lo, hi) = {
        let names = ["f_add", "f_xor", "f_mul", "step", "bit5", "nonnull", "main"];
        let r: Vec<(u64, u64)> = names.iter().map(|n| symbol_range(&exe, n)).collect();
        (
            r.iter().map(|x| x.0).min().unwrap(),
            r.iter().map(|x| x.1).max().unwrap(),
        )
    };
    let ours = |a: u64| (lo..hi).contains(&a);
    let mut kinds: HashMap<String, u64> = HashMap::new();
    for (&(from, to), &n) in &vl {
        if !ours(from) {
            continue;
        }
        let insn = code
            .get(&from)
            .unwrap_or_else(|| panic!("branch from {from:#x}: not an instruction start"));
        assert!(
            is_branch(&insn.mnemonic),
            "branch {from:#x}->{to:#x} ({n}x) from a `{}`",
            insn.mnemonic
        );
        if insn.mnemonic != "br" && insn.mnemonic != "blr" && insn.mnemonic != "ret" {
            assert_eq!(
                insn.target,
                Some(to),
                "{} at {from:#x}: recorded target {to:#x}",
                insn.mnemonic
            );
        }
        // (main returns into libc.)
        if insn.mnemonic == "ret" && ours(to) {
            let call = code.get(&(to - 4)).map(|i| i.mnemonic.as_str());
            assert!(
                matches!(call, Some("bl" | "blr")),
                "ret at {from:#x} returns to {to:#x}, not after a call ({call:?})"
            );
        }
        let k = if insn.mnemonic.starts_with("b.") {
            "b.cond".to_string()
        } else {
            insn.mnemonic.clone()
        };
        *kinds.entry(k).or_insert(0) += n;
    }
    for k in ["bl", "blr", "br", "ret", "b.cond", "cbz", "tbz"] {
        let alt = match k {
            "cbz" => "cbnz",
            "tbz" => "tbnz",
            _ => k,
        };
        assert!(
            kinds.get(k).copied().unwrap_or(0) + kinds.get(alt).copied().unwrap_or(0) > 0,
            "no taken {k} recorded: {kinds:?}"
        );
    }

    // Exact counts from the loop: edges into a function's entry, by the caller.
    let into = |callee: &str, caller: &str| -> u64 {
        let entry = symbol_range(&exe, callee).0;
        let (a, b) = symbol_range(&exe, caller);
        vl.iter()
            .filter(|((f, t), _)| *t == entry && (a..b).contains(f))
            .map(|(_, n)| n)
            .sum()
    };
    for f in ["f_add", "f_xor", "f_mul"] {
        assert_eq!(into(f, "main"), N / 3, "main -> {f} (blr)");
    }
    assert_eq!(into("step", "main"), N, "main -> step");
    assert_eq!(into("bit5", "main"), N, "main -> bit5");
    assert_eq!(into("nonnull", "main"), N, "main -> nonnull");
    let bit5_set = (0..N).filter(|i| i & 32 != 0).count() as u64;
    assert_eq!(into("f_add", "bit5"), bit5_set, "bit5 -> f_add");
    eprintln!("aarch64 taken branches by kind in the program: {kinds:?}");
}

#[test]
fn exit_status_passes_through() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let data = dir.path().join("x.data");
    let out = record_user(
        &RecordConfig::new(&exe, &data)
            .args(["10"])
            .env("KFDO_TEST_EXIT", "7"),
    )
    .unwrap();
    assert_eq!(out.exit_code, 7);
}

#[test]
fn threads_and_fork_child_are_recorded_exactly() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("thr.c");
    std::fs::write(&c, common::THREADS_C).unwrap();
    let exe = dir.path().join("thr-a64");
    stdout_of(
        Command::new("clang-19")
            .args(["--target=aarch64-linux-gnu", "-O2", "-g", "-fuse-ld=lld"])
            .args(["-no-pie", "-fno-pie", "-pthread", "-o"])
            .arg(&exe)
            .arg(&c),
    );
    common::threads_and_child_take_the_loops_branches(&exe, dir.path());
}
