//! Emulated LBR against independent sources: valgrind's callgrind (exact jump and call
//! counts), the emulated counters, perf script, llvm-profgen-19 and perf2bolt. Each test
//! builds its program with clang-19 at test time and runs the real tools.

mod common;

use common::stdout_of;
use kfdo_perf::{PerfData, Record};
use kfdo_record::{record_user, RecordConfig};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A branchy program: a jump table, indirect calls, recursion, data-dependent conditions.
const FID_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static int sq(int x) { return x * x; }
static int cube(int x) { return x * x * x; }
static int neg(int x) { return -x; }
typedef int (*op_t)(int);
static op_t ops[3] = {sq, cube, neg};
__attribute__((noinline)) static int classify(unsigned v) {
  switch (v % 7) {
  case 0: return 3;
  case 1: return v > 100 ? 5 : 1;
  case 2: return 8;
  case 3: return 13;
  case 4: return 21;
  case 5: return (int)(v >> 3);
  default: return 34;
  }
}
__attribute__((noinline)) static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  unsigned seed = 12345;
  long acc = 0;
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    acc += classify(seed >> 8);
    acc += ops[(seed >> 4) % 3](i & 15);
    if ((seed & 3) == 0) acc ^= fib(6);
  }
  printf("%ld\n", acc);
  const char *e = getenv("KFDO_TEST_EXIT");
  return e ? atoi(e) : 0;
}
"#;

fn tool(name: &str) -> String {
    let ok = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(ok, "{name} not found: run scripts/install-deps.sh");
    name.to_string()
}

fn build(dir: &Path, name: &str, src: &str, flags: &[&str]) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let out = dir.join(name);
    let st = Command::new(tool("clang-19"))
        .args(["-O2", "-g"])
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(&c)
        .status()
        .unwrap();
    assert!(st.success(), "clang-19 failed on {name}.c");
    out
}

/// Section address ranges of an ELF file, by name.
fn sections(path: &Path) -> HashMap<String, (u64, u64)> {
    let b = std::fs::read(path).unwrap();
    let u16_ = |o: usize| u16::from_le_bytes(b[o..o + 2].try_into().unwrap()) as usize;
    let u32_ = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize;
    let u64_ = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    let shoff = u64_(0x28) as usize;
    let (shentsize, shnum, shstrndx) = (u16_(0x3a), u16_(0x3c), u16_(0x3e));
    let strtab = u64_(shoff + shstrndx * shentsize + 0x18) as usize;
    let mut m = HashMap::new();
    for i in 0..shnum {
        let s = shoff + i * shentsize;
        let name_off = strtab + u32_(s);
        let end = b[name_off..].iter().position(|&c| c == 0).unwrap();
        let name = String::from_utf8_lossy(&b[name_off..name_off + end]).to_string();
        let addr = u64_(s + 0x10);
        let size = u64_(s + 0x20);
        m.insert(name, (addr, addr + size));
    }
    m
}

/// The byte at a virtual address of a non-PIE ELF file (via its section table).
fn byte_at(path: &Path, addr: u64) -> u8 {
    let b = std::fs::read(path).unwrap();
    let u16_ = |o: usize| u16::from_le_bytes(b[o..o + 2].try_into().unwrap()) as usize;
    let u64_ = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    let phoff = u64_(0x20) as usize;
    for i in 0..u16_(0x38) {
        let p = phoff + i * u16_(0x36);
        let (off, va, fsz) = (u64_(p + 8), u64_(p + 16), u64_(p + 32));
        if u32::from_le_bytes(b[p..p + 4].try_into().unwrap()) == 1 && va <= addr && addr < va + fsz
        {
            return b[(off + addr - va) as usize];
        }
    }
    panic!("{addr:#x} not in a loadable segment");
}

struct Samples {
    /// (ip, branches newest first)
    samples: Vec<(u64, Vec<(u64, u64)>)>,
    mmaps: Vec<(String, u64, u64, u64)>,
}

fn read_perf(path: &Path) -> Samples {
    let pd = PerfData::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let a = &pd.attrs()[0];
    assert!(a.has_branch_stack(), "attr has no branch stack");
    let mut s = Samples {
        samples: Vec::new(),
        mmaps: Vec::new(),
    };
    for r in pd.records() {
        match r.unwrap() {
            Record::Sample(x) => s.samples.push((
                x.ip,
                x.branch_stack.iter().map(|b| (b.from, b.to)).collect(),
            )),
            Record::Mmap(m) => s
                .mmaps
                .push((m.filename.to_string(), m.start, m.len, m.pgoff)),
            _ => {}
        }
    }
    s
}

/// Callgrind's exact counts of jumps (conditional taken and unconditional) and calls,
/// keyed by (source instruction, target).
fn callgrind(dir: &Path, exe: &Path, args: &[&str]) -> HashMap<(u64, u64), u64> {
    let out = dir.join("callgrind.out");
    let st = Command::new(tool("valgrind"))
        .args([
            "-q",
            "--tool=callgrind",
            "--collect-jumps=yes",
            "--dump-instr=yes",
        ])
        .args(["--compress-pos=no", "--compress-strings=no"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(exe)
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    let text = std::fs::read_to_string(&out).unwrap();
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let mut m = HashMap::new();
    let mut pending: Option<(u64, u64)> = None; // (count, target)
    for line in text.lines() {
        let rest = line
            .strip_prefix("jump=")
            .or_else(|| line.strip_prefix("jcnd="))
            .or_else(|| line.strip_prefix("calls="));
        if let Some(r) = rest {
            let mut it = r.split_whitespace();
            let cnt = it.next().unwrap();
            // jcnd=TAKEN/EXECUTED (a conditional jump), jump=COUNT, calls=COUNT
            let taken = cnt.split('/').next().unwrap().parse::<u64>().unwrap();
            pending = Some((taken, hex(it.next().unwrap())));
            continue;
        }
        if line.starts_with("0x") {
            if let Some((c, t)) = pending.take() {
                let src = hex(line.split_whitespace().next().unwrap());
                *m.entry((src, t)).or_insert(0) += c;
            }
        } else if !line.starts_with(['j', 'c']) {
            pending = None;
        }
    }
    m
}

#[test]
fn period_1_branch_counts_equal_callgrind() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "fid", FID_C, &["-no-pie", "-fno-pie"]);
    let data = dir.path().join("p1.data");
    let counters = dir.path().join("c.json");
    let out = record_user(
        &RecordConfig::new(&exe, &data)
            .args(["2000"])
            .period(1)
            .depth(1)
            .counters(&counters),
    )
    .unwrap();
    assert_eq!(out.exit_code, 0);
    let s = read_perf(&data);
    // Every taken branch is one sample: the counters agree.
    let c = out.counters.unwrap();
    assert_eq!(s.samples.len() as u64, c.total.user.taken_branches);
    assert_eq!(out.samples, s.samples.len() as u64);
    let text = sections(&exe)[".text"];
    let in_text = |a: u64| text.0 <= a && a < text.1;
    let mut vl: HashMap<(u64, u64), u64> = HashMap::new();
    for (ip, br) in &s.samples {
        assert_eq!(br.len(), 1);
        assert_eq!(
            *ip, br[0].1,
            "sample IP is the target of the sampled branch"
        );
        *vl.entry(br[0]).or_insert(0) += 1;
    }
    // Without counters the plugin takes its fast path (one word per block): the same
    // branches, edge by edge, as the counting path above.
    let fast = dir.path().join("fast.data");
    record_user(
        &RecordConfig::new(&exe, &fast)
            .args(["2000"])
            .period(1)
            .depth(1),
    )
    .unwrap();
    let mut vl_fast: HashMap<(u64, u64), u64> = HashMap::new();
    for (_, br) in &read_perf(&fast).samples {
        *vl_fast.entry(br[0]).or_insert(0) += 1;
    }
    assert_eq!(vl_fast, vl, "fast path vs counting path");
    let cg = callgrind(dir.path(), &exe, &["2000"]);
    // Within the program's .text (callgrind reports calls through the PLT as calls of the
    // library function, and no returns): equal counts, edge by edge.
    let mut compared = 0;
    for (&(f, t), &n) in &cg {
        if in_text(f) && in_text(t) && n > 0 {
            assert_eq!(
                vl.get(&(f, t)).copied().unwrap_or(0),
                n,
                "edge {f:#x}->{t:#x}: vLBR vs callgrind"
            );
            compared += 1;
        }
    }
    for (&(f, t), &n) in &vl {
        if in_text(f) && in_text(t) && !cg.contains_key(&(f, t)) {
            let op = byte_at(&exe, f);
            let op = if op == 0xf3 { byte_at(&exe, f + 1) } else { op };
            assert!(
                op == 0xc3 || op == 0xc2,
                "edge {f:#x}->{t:#x} ({n}x) only in vLBR and not a return"
            );
        }
    }
    assert!(compared >= 15, "only {compared} edges compared");
}

#[test]
fn threads_and_fork_child_are_recorded_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(
        dir.path(),
        "thr",
        common::THREADS_C,
        &["-no-pie", "-fno-pie", "-pthread"],
    );
    common::threads_and_child_take_the_loops_branches(&exe, dir.path());
}

/// A return to its own address, once per call: `ret` pops its own address, runs again,
/// then returns after the asm.
const SELF_RET_C: &str = r#"
#include <stdio.h>
__attribute__((noinline)) static void self_ret(void) {
  __asm__ volatile("lea 1f(%%rip), %%rax\n push %%rax\n"
                   "lea 2f(%%rip), %%rax\n push %%rax\n"
                   "jmp 2f\n"
                   "2: ret\n"
                   "1:\n" ::: "rax", "memory");
}
int main(void) {
  for (int i = 0; i < 1000; i++) self_ret();
  puts("ok");
  return 0;
}
"#;

#[test]
fn a_transfer_to_its_own_address_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "selfret", SELF_RET_C, &["-no-pie", "-fno-pie"]);
    let text = sections(&exe)[".text"];
    // The fast path, and the counting path (every block through its descriptor).
    for counting in [false, true] {
        let data = dir.path().join(format!("self-{counting}.data"));
        let mut cfg = RecordConfig::new(&exe, &data).period(1).depth(1);
        if counting {
            cfg = cfg.counters(dir.path().join("c.json"));
        }
        assert_eq!(record_user(&cfg).unwrap().exit_code, 0);
        let mut to_self: HashMap<u64, u64> = HashMap::new();
        for (_, br) in &read_perf(&data).samples {
            let (f, t) = br[0];
            if f == t && text.0 <= f && f < text.1 {
                *to_self.entry(f).or_insert(0) += 1;
            }
        }
        let counts: Vec<u64> = to_self.values().copied().collect();
        assert_eq!(
            counts,
            [1000],
            "counters {counting}: branches to themselves {to_self:x?}"
        );
    }
}

#[test]
fn period_1_depth_32_is_a_sliding_window_and_ip_is_target() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "fid", FID_C, &[]);
    let data = dir.path().join("p.data");
    record_user(&RecordConfig::new(&exe, &data).args(["50"]).period(1)).unwrap();
    let s = read_perf(&data);
    assert!(s.samples.len() > 1000);
    for w in s.samples.windows(2) {
        let (a, b) = (&w[0].1, &w[1].1);
        assert_eq!(b[0].1, w[1].0);
        if a.len() == 32 {
            assert_eq!(b.len(), 32);
            assert_eq!(
                &b[1..],
                &a[..31],
                "the newest entry is pushed, the oldest dropped"
            );
        }
    }
}

#[test]
fn perf_script_and_llvm_profgen_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "fid", FID_C, &[]); // PIE, dynamically linked
    let data = dir.path().join("perf.data");
    let out = record_user(&RecordConfig::new(&exe, &data).args(["20000"]).period(997)).unwrap();
    assert!(out.samples > 100, "{} samples", out.samples);
    // MMAP2 for the program, the dynamic loader and libc, with build-ids in the header.
    let s = read_perf(&data);
    let names: Vec<&str> = s.mmaps.iter().map(|m| m.0.as_str()).collect();
    assert!(names.iter().any(|n| n.ends_with("/fid")), "{names:?}");
    assert!(
        names.iter().any(|n| n.contains("ld-linux-x86-64")),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n.contains("libc.so")), "{names:?}");
    let ids = stdout_of(
        Command::new(tool("perf"))
            .args(["buildid-list", "-i"])
            .arg(&data),
    );
    assert!(ids.lines().any(|l| l.ends_with("/fid")), "{ids}");
    // perf script: one line per sample, with 32 from/to pairs.
    let script = stdout_of(
        Command::new("perf")
            .args(["script", "-F", "ip,brstack", "--show-mmap-events", "-i"])
            .arg(&data),
    );
    let sample_lines: Vec<&str> = script.lines().filter(|l| l.contains("/0x")).collect();
    assert_eq!(sample_lines.len() as u64, out.samples);
    assert!(
        sample_lines
            .iter()
            .filter(|l| l.matches("/0x").count() == 32)
            .count() as u64
            >= out.samples - 2
    );
    // llvm-profgen-19 from perf.data and from the script text: the same profile, with the
    // program's hot functions.
    let p1 = dir.path().join("a.prof");
    let p2 = dir.path().join("b.prof");
    let script_file = dir.path().join("perf.script");
    std::fs::write(&script_file, &script).unwrap();
    stdout_of(
        Command::new(tool("llvm-profgen-19"))
            .arg(format!("--binary={}", exe.display()))
            .arg(format!("--perfdata={}", data.display()))
            .args(["--format=text"])
            .arg(format!("--output={}", p1.display())),
    );
    stdout_of(
        Command::new("llvm-profgen-19")
            .arg(format!("--binary={}", exe.display()))
            .arg(format!("--perfscript={}", script_file.display()))
            .args(["--format=text"])
            .arg(format!("--output={}", p2.display())),
    );
    let a = std::fs::read_to_string(&p1).unwrap();
    assert_eq!(a, std::fs::read_to_string(&p2).unwrap());
    for f in ["main:", "classify:", "fib:"] {
        assert!(
            a.lines().any(|l| l.starts_with(f)),
            "{f} missing in profile:\n{a}"
        );
    }
}

#[test]
fn perf2bolt_reads_it() {
    let perf2bolt = Path::new("/usr/lib/llvm-19/bin/perf2bolt");
    assert!(perf2bolt.exists(), "perf2bolt missing: install bolt-19");
    let dir = tempfile::tempdir().unwrap();
    let exe = build(
        dir.path(),
        "fid",
        FID_C,
        &["-no-pie", "-fno-pie", "-Wl,--emit-relocs"],
    );
    let data = dir.path().join("perf.data");
    record_user(&RecordConfig::new(&exe, &data).args(["20000"]).period(997)).unwrap();
    let fdata = dir.path().join("out.fdata");
    let o = Command::new(perf2bolt)
        .arg("-p")
        .arg(&data)
        .arg("-o")
        .arg(&fdata)
        .arg(&exe)
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "perf2bolt failed:\n{log}");
    let f = std::fs::read_to_string(&fdata).unwrap();
    // fdata lines: 1 FROM_SYM OFF 1 TO_SYM OFF MISPRED COUNT
    let classify = f.lines().filter(|l| l.starts_with("1 classify")).count();
    assert!(
        classify > 3,
        "too few classify branches in fdata:\n{f}\n{log}"
    );
}

#[test]
fn exit_status_args_env_and_output_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "fid", FID_C, &[]);
    let data = dir.path().join("perf.data");
    let out = record_user(
        &RecordConfig::new(&exe, &data)
            .args(["10"])
            .env("KFDO_TEST_EXIT", "7")
            .counters(dir.path().join("c.json")),
    )
    .unwrap();
    assert_eq!(out.exit_code, 7);
    // perf.data is private, as perf record makes it; the counters JSON gets the mode any
    // file created here gets (0666 less the umask), not the temporary file's 0600.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let plain = dir.path().join("plain");
    std::fs::write(&plain, b"").unwrap();
    assert_eq!(mode(&data), 0o600, "perf.data");
    assert_eq!(
        mode(&dir.path().join("c.json")),
        mode(&plain),
        "counters JSON"
    );
}

#[test]
fn counters_are_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "fid", FID_C, &[]);
    let run = |n: &str| {
        let o = record_user(
            &RecordConfig::new(&exe, dir.path().join(format!("{n}.data")))
                .args(["3000"])
                .counters(dir.path().join(format!("{n}.json"))),
        )
        .unwrap();
        o.counters.unwrap().total
    };
    let (a, b) = (run("a"), run("b"));
    assert_eq!(a, b);
    assert!(a.user.instructions > a.user.taken_branches && a.user.taken_branches > 0);
    assert!(a.user.conditional_branches > 0 && a.user.l1i_misses > 0 && a.user.itlb_misses > 0);
    assert!(a.user.l1i_misses < a.user.l1i_accesses);
    assert_eq!(a.kernel.instructions, 0);
}

/// Each process's counters say how many threads it ran (the thing that makes counts vary
/// between runs): the program and its two threads, and its forked child alone, which
/// does not inherit the parent's threads.
#[test]
fn counters_say_how_many_threads_each_process_ran() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "thr", common::THREADS_C, &["-pthread"]);
    let count = |n: &str, args: &[&str]| {
        let o = record_user(
            &RecordConfig::new(&exe, dir.path().join(format!("{n}.data")))
                .args(args)
                .counters(dir.path().join(format!("{n}.json"))),
        )
        .unwrap();
        assert_eq!(o.exit_code, 0, "{n}: the program failed");
        o.counters.unwrap()
    };
    let many = count("many", &[]);
    let mut threads: Vec<u32> = many.processes.iter().map(|p| p.threads).collect();
    threads.sort_unstable();
    assert_eq!(threads, [1, 3], "the child, and the program (main + 2)");
    assert_eq!(many.threads(), 3);
    let alone = count("alone", &["alone"]);
    assert_eq!(alone.threads(), 1);
    assert_eq!(alone.processes.len(), 1);
}

#[test]
fn a_recording_without_samples_is_an_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "fid", FID_C, &[]);
    let data = dir.path().join("perf.data");
    let period = 1u64 << 40;
    let e = record_user(&RecordConfig::new(&exe, &data).args(["10"]).period(period)).unwrap_err();
    match &e {
        kfdo_record::Error::NoSamples { path, period: p } => {
            assert_eq!((path, *p), (&data, period))
        }
        other => panic!("expected NoSamples, got {other:?}"),
    }
    let msg = e.to_string();
    assert!(
        msg.contains(&data.display().to_string())
            && msg.contains(&format!("--period {period}"))
            && msg.contains("smaller --period"),
        "{msg}"
    );
    assert!(!data.exists(), "no perf.data is left behind");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".kfdo-tmp-"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");

    // A counting run (counters asked for) keeps its counters, and says why the
    // perf.data is empty.
    let counters = dir.path().join("c.json");
    let out = record_user(
        &RecordConfig::new(&exe, &data)
            .args(["10"])
            .period(period)
            .counters(&counters),
    )
    .unwrap();
    assert_eq!(out.samples, 0);
    assert!(counters.exists() && out.counters.unwrap().total.user.instructions > 0);
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains(&format!("--period {period}"))),
        "{:?}",
        out.warnings
    );
}
