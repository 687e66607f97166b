//! Shared by the `format_*` tests (included with `#[path]`): a seeded
//! random-profile generator, hand-built profiles and reference-tool helpers.
//! Compiled alone it is an empty test crate.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use kfdo_afdo::{FunctionSamples, LineLocation, Profile};

/// xorshift64*: small, seeded, deterministic.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
    /// Counts spread over magnitudes (many small, some huge, a few zero).
    pub fn count(&mut self) -> u64 {
        match self.below(10) {
            0 => 0,
            1..=5 => self.below(100),
            6..=8 => self.below(100_000),
            _ => self.below(1 << 40),
        }
    }
}

/// A function name: plain C, Itanium-mangled C++, unique-internal-linkage
/// (`.__uniq.<digits>`), or other suffixed forms.
pub fn name(r: &mut Rng) -> String {
    let base = [
        "foo",
        "bar",
        "sqlite3VdbeExec",
        "lua_gettop",
        "ZSTD_compress",
        "main",
        "memcpy_x",
    ];
    let b = base[r.below(base.len() as u64) as usize];
    let n = r.below(500);
    match r.below(6) {
        0 => format!("{b}{n}"),
        1 => format!("_ZN4kfdo{}{b}{n}Ev", b.len() + n.to_string().len()),
        2 => format!("{b}{n}.__uniq.{}", r.next_u64() % 100_000_000_000_000),
        3 => format!("_ZNSt6vectorIiSaIiEE9push_backERKi{n}"),
        4 => format!("{b}_{n}.llvm.{}", r.below(1 << 20)),
        _ => format!("_ZL{}{b}{n}", b.len() + n.to_string().len()),
    }
}

fn loc(r: &mut Rng) -> LineLocation {
    let off = if r.chance(5) {
        r.below(0x10000) as u32
    } else {
        r.below(60) as u32
    };
    let disc = match r.below(10) {
        0..=5 => 0,
        6..=8 => r.below(16) as u32,
        // FS-discriminator-like large values.
        _ => r.next_u64() as u32,
    };
    LineLocation::new(off, disc)
}

fn fill(r: &mut Rng, fs: &mut FunctionSamples, depth: u32) {
    let nbody = r.below(12);
    for _ in 0..nbody {
        let l = loc(r);
        let c = r.count();
        fs.add_body(l, c);
        if r.chance(20) {
            for _ in 0..1 + r.below(4) {
                let n = name(r);
                let c = r.count();
                fs.add_call_target(l, &n, c);
            }
        }
    }
    if depth < 4 {
        let ninl = if r.chance(50) { r.below(4) } else { 0 };
        for _ in 0..ninl {
            let l = loc(r);
            let n = name(r);
            let inl = fs.inlinee_mut(l, &n);
            fill(r, inl, depth + 1);
        }
    }
    // Totals: usually the sum of what is below, sometimes anything.
    let sum: u64 = fs.body.values().map(|x| x.count).sum::<u64>()
        + fs.callsites
            .values()
            .flat_map(|m| m.values())
            .map(|f| f.total_samples)
            .sum::<u64>();
    fs.total_samples = if r.chance(80) { sum } else { r.count() };
}

/// A random profile with `n` top-level functions (some totals tie, to check
/// the order of equal totals).
pub fn random_profile(seed: u64, n: usize) -> Profile {
    let mut r = Rng::new(seed);
    let mut p = Profile::new();
    while p.functions.len() < n {
        let nm = name(&mut r);
        if p.functions.contains_key(&nm) {
            continue;
        }
        let f = p.function_mut(&nm);
        fill(&mut r, f, 0);
        if r.chance(30) {
            f.total_samples = 1000; // ties
        }
        f.head_samples = r.count();
    }
    p
}

/// A hand-built profile touching every feature once.
pub fn hand_profile() -> Profile {
    let mut p = Profile::new();
    let m = p.function_mut("main");
    m.add_total(5000);
    m.add_head(3);
    m.add_body(LineLocation::new(0, 0), 3);
    m.add_body(LineLocation::new(2, 0), 1000);
    m.add_body(LineLocation::new(2, 1), 500);
    m.add_call_target(LineLocation::new(3, 0), "_Z6targetv", 40);
    m.add_call_target(LineLocation::new(3, 0), "other.__uniq.123456", 40);
    m.add_call_target(LineLocation::new(3, 0), "abc", 70);
    m.add_body(LineLocation::new(3, 0), 150);
    let i = m.inlinee_mut(LineLocation::new(4, 0), "_ZN1A3getEv");
    i.add_total(2000);
    i.add_body(LineLocation::new(1, 0), 2000);
    let j = i.inlinee_mut(LineLocation::new(2, 7), "helper.__uniq.99");
    j.add_total(10);
    j.add_body(LineLocation::new(0, 0), 10);
    m.inlinee_mut(LineLocation::new(4, 0), "_ZN1A3setEi")
        .add_total(1);
    let s = p.function_mut("static_fn.__uniq.1234");
    s.add_total(5000);
    s.add_head(50);
    s.add_body(LineLocation::new(1, 0), 5000);
    let z = p.function_mut("zero");
    z.add_body(LineLocation::new(1, 0), 0);
    p
}

/// Run a command, panic with its stderr on failure, return stdout.
pub fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

pub fn write_file(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p
}

pub fn text_of(p: &Profile) -> Vec<u8> {
    let mut v = Vec::new();
    kfdo_afdo::write_profile(p, kfdo_afdo::Format::Text, &mut v).unwrap();
    v
}

pub fn ext_of(p: &Profile) -> Vec<u8> {
    let mut v = Vec::new();
    kfdo_afdo::write_profile(p, kfdo_afdo::Format::ExtBinary, &mut v).unwrap();
    v
}

/// A profile shaped like what a profile generator emits for a large
/// program: `n` functions with a handful of body records each, some call
/// targets, a few shallow inlinees.
pub fn typical_profile(seed: u64, n: usize) -> Profile {
    let mut r = Rng::new(seed);
    let mut p = Profile::new();
    for i in 0..n {
        let nm = match i % 4 {
            0 => format!("_ZN4kfdo6module{i}7processEv"),
            1 => format!("static_fn_{i}.__uniq.{}", r.next_u64() % 1_000_000_000_000),
            2 => format!("function_number_{i}"),
            _ => format!("_ZNK3std6vectorIiE2atEm{i}"),
        };
        let f = p.function_mut(&nm);
        for _ in 0..3 + r.below(10) {
            let l = LineLocation::new(
                r.below(80) as u32,
                if r.chance(20) {
                    1 + r.below(8) as u32
                } else {
                    0
                },
            );
            let c = r.below(10_000);
            f.add_body(l, c);
            if r.chance(10) {
                f.add_call_target(l, &format!("callee_{}", r.below(n as u64)), c);
            }
        }
        if r.chance(15) {
            for _ in 0..1 + r.below(2) {
                let l = LineLocation::new(r.below(80) as u32, 0);
                let inl = f.inlinee_mut(l, &format!("_Z6inlinei{}", r.below(5000)));
                for _ in 0..2 + r.below(3) {
                    inl.add_body(LineLocation::new(r.below(20) as u32, 0), r.below(5000));
                }
                inl.total_samples = inl.body.values().map(|x| x.count).sum();
            }
        }
        f.total_samples = f.body.values().map(|x| x.count).sum();
        f.head_samples = r.below(1000);
    }
    p
}
