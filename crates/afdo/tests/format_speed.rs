//! Speed of the writers and readers on 50k-function profiles, with
//! `llvm-profdata-19` on the same files in the same run as the reference.
//! Prints CPU times (run with `--release -- --nocapture` to see them). Not
//! a timed test: on shared machines CPU times vary several-fold from run to
//! run, so the only bound (release builds) is one that only quadratic
//! behaviour would exceed.

#[path = "format_gen.rs"]
mod gen;

use std::process::Command;
use std::time::{Duration, Instant};

use gen::*;
use kfdo_afdo::{parse_profile, text, Format, Profile, ProfileSummary};

/// CPU time (user + system) of this process and of its waited-for
/// children, from /proc/self/stat (clock ticks of 10 ms). The machines this
/// runs on are shared, so CPU time is a fairer measure than wall time.
fn cpu() -> (Duration, Duration) {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = s.rsplit_once(')').map(|x| x.1).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let tick = |n: u64| Duration::from_millis(n * 10);
    if f.len() < 15 {
        return (Duration::ZERO, Duration::ZERO);
    }
    (tick(f[11] + f[12]), tick(f[13] + f[14]))
}

/// Run `f`; return its value, its wall time and the CPU time it took (its
/// own, or that of the child processes it waited for if `child`).
fn time<T>(child: bool, f: impl FnOnce() -> T) -> (T, Duration) {
    let c0 = cpu();
    let t = Instant::now();
    let v = f();
    let wall = t.elapsed();
    let c1 = cpu();
    let cpu = if child { c1.1 - c0.1 } else { c1.0 - c0.0 };
    // Below the tick resolution, wall time is the better number.
    (
        v,
        if cpu < Duration::from_millis(50) {
            wall
        } else {
            cpu
        },
    )
}

fn measure(what: &str, p: &Profile) {
    let mut records = 0;
    for f in p.functions.values() {
        f.visit(&mut |g, _| records += g.body.len());
    }
    let (t, wt) = time(false, || {
        let mut v = Vec::new();
        kfdo_afdo::write_profile(p, Format::Text, &mut v).unwrap();
        v
    });
    let (e, we) = time(false, || {
        let mut v = Vec::new();
        kfdo_afdo::write_profile(p, Format::ExtBinary, &mut v).unwrap();
        v
    });
    let (pt, rt) = time(false, || text::parse_text(&t, "speed.txt").unwrap());
    let (pe, re) = time(false, || parse_profile(&e, "speed.extbinary").unwrap());
    let (_, st) = time(false, || ProfileSummary::compute(p));
    assert_eq!(&pt, p);
    assert_eq!(&pe, p);
    eprintln!(
        "{what}: {} functions, {records} body records; text {} KiB, extbinary {} KiB\n  \
         kfdo: write text {wt:.2?}, write extbinary {we:.2?} (summary {st:.2?}), \
         read text {rt:.2?}, read extbinary {re:.2?}",
        p.functions.len(),
        t.len() / 1024,
        e.len() / 1024
    );
    if kfdo_testkit::require_tools(&["llvm-profdata-19"]) {
        let dir = tempfile::tempdir().unwrap();
        let tp = write_file(dir.path(), "p.txt", &t);
        let ep = write_file(dir.path(), "p.extbinary", &e);
        let out = dir.path().join("out");
        let (_, lt2e) = time(true, || {
            run(Command::new("llvm-profdata-19")
                .args(["merge", "--sample", "--extbinary", "-o"])
                .arg(&out)
                .arg(&tp))
        });
        assert_eq!(std::fs::read(&out).unwrap(), e);
        let (_, le2t) = time(true, || {
            run(Command::new("llvm-profdata-19")
                .args(["merge", "--sample", "--text", "-o"])
                .arg(&out)
                .arg(&ep))
        });
        assert_eq!(std::fs::read(&out).unwrap(), t);
        eprintln!(
            "  text -> extbinary: kfdo {:.2?}, llvm-profdata-19 {lt2e:.2?} ({:.1}x); \
             extbinary -> text: kfdo {:.2?}, llvm-profdata-19 {le2t:.2?} ({:.1}x)",
            rt + we,
            lt2e.as_secs_f64() / (rt + we).as_secs_f64(),
            re + wt,
            le2t.as_secs_f64() / (re + wt).as_secs_f64(),
        );
    }
    if !cfg!(debug_assertions) {
        let bound = Duration::from_secs(120);
        for (what, d) in [
            ("write text", wt),
            ("write extbinary", we),
            ("read text", rt),
            ("read extbinary", re),
        ] {
            assert!(d < bound, "{what} took {d:?}");
        }
    }
}

#[test]
fn fifty_thousand_functions() {
    // Unoptimized builds only check that nothing is quadratic, on less.
    let n = if cfg!(debug_assertions) {
        5_000
    } else {
        50_000
    };
    measure("typical", &typical_profile(2024, n));
    measure("heavy (random, nested)", &random_profile(2024, n));
}
