//! What the user-mode recording tests of both architectures share: a program whose
//! loop runs in two threads and a forked child, and the check that each of them is
//! recorded under its own pid/tid with exactly the branches of the loop run alone.
#![allow(dead_code)]

use kfdo_perf::{PerfData, Record};
use kfdo_record::{record_user, RecordConfig};
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// Two threads and a forked child run the same loop: each of them is recorded, under its
/// own pid / tid, with exactly the branches of the loop run alone.
pub const THREADS_C: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
__attribute__((noinline)) long worker_loop(long n) {
  long x = 7, acc = 0;
  for (long i = 0; i < n; i++) {
    if (x & 1) x = 3 * x + 1; else x >>= 1;
    if (x == 1) x = i + 7;
    acc += x;
  }
  return acc;
}
static void *thread_main(void *p) { return (void *)worker_loop((long)p); }
int main(int argc, char **argv) {
  long n = 20000;
  if (argc > 1) { printf("%ld\n", worker_loop(n)); return 0; }
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, thread_main, (void *)n);
  long sum = 0;
  for (int i = 0; i < 2; i++) { void *r; pthread_join(t[i], &r); sum += (long)r; }
  pid_t c = fork();
  if (c == 0) _exit(worker_loop(n) == sum / 2 ? 0 : 1);
  int st;
  waitpid(c, &st, 0);
  printf("%ld\n", sum);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}
"#;

/// The stdout of `cmd`, which must succeed (testkit's `run_stdout`, naming the command;
/// not `run_ok`, which is testkit's and returns the whole output).
pub fn stdout_of(cmd: &mut Command) -> String {
    let what = format!("{cmd:?}");
    kfdo_testkit::run_stdout(cmd, &what)
}

/// The address range of a function symbol (llvm-nm-19).
pub fn symbol_range(exe: &Path, name: &str) -> (u64, u64) {
    let out = stdout_of(Command::new("llvm-nm-19").arg("-S").arg(exe));
    for line in out.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 4 && f[3] == name {
            let hex = |s: &str| u64::from_str_radix(s, 16).unwrap();
            let (a, n) = (hex(f[0]), hex(f[1]));
            return (a, a + n);
        }
    }
    panic!("{name} not in the symbol table of {}", exe.display());
}

/// Records `exe` (built from [`THREADS_C`], not PIE) at period 1, with the argument
/// `alone` and without, in `dir`, and checks the two threads and the child each took
/// exactly the loop's branches.
pub fn threads_and_child_take_the_loops_branches(exe: &Path, dir: &Path) {
    let (lo, hi) = symbol_range(exe, "worker_loop");
    let inside = |(f, t): (u64, u64)| lo <= f && f < hi && lo <= t && t < hi;
    // The loop's branches by (pid, tid), at period 1.
    let edges = |name: &str, args: &[&str]| {
        let data = dir.join(name);
        let out =
            record_user(&RecordConfig::new(exe, &data).args(args).period(1).depth(1)).unwrap();
        assert_eq!(out.exit_code, 0, "{name}: the program failed");
        let pd = PerfData::open(&data).unwrap();
        let mut m: HashMap<(u32, u32), HashMap<(u64, u64), u64>> = HashMap::new();
        for r in pd.records() {
            if let Record::Sample(x) = r.unwrap() {
                let e = x.branch_stack.iter().next().expect("a branch per sample");
                let b = (e.from, e.to);
                if inside(b) {
                    *m.entry((x.pid, x.tid)).or_default().entry(b).or_insert(0) += 1;
                }
            }
        }
        m
    };
    let alone = edges("alone.data", &["alone"]);
    assert_eq!(alone.len(), 1);
    let alone = alone.into_values().next().unwrap();
    assert!(
        alone.values().sum::<u64>() > 5000,
        "the loop's branches: {alone:?}"
    );
    let many = edges("threads.data", &[]);
    let pids: std::collections::HashSet<u32> = many.keys().map(|k| k.0).collect();
    assert_eq!(many.len(), 3, "two threads and a child: {:?}", many.keys());
    assert_eq!(
        pids.len(),
        2,
        "the threads' process and the child: {:?}",
        many.keys()
    );
    for (who, m) in &many {
        assert_eq!(
            m, &alone,
            "pid/tid {who:?}: the loop's branches vs the loop alone"
        );
    }
}
