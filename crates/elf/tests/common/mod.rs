//! Shared helpers for the integration tests: build programs with clang-19
//! into a temp dir and run the LLVM reference tools on them.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub use kfdo_toolchain::Llvm;

pub const PROGRAMS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/programs");

/// Compiles `src` (relative to tests/programs) with clang-19/clang++-19.
pub fn build(dir: &Path, src: &str, out: &str, flags: &[&str]) -> PathBuf {
    build_with(Llvm::DEFAULT, dir, src, out, flags)
}

/// Compiles `src` with `llvm`'s clang / clang++.
pub fn build_with(llvm: Llvm, dir: &Path, src: &str, out: &str, flags: &[&str]) -> PathBuf {
    let cxx = src.ends_with(".cpp");
    let compiler = if cxx { llvm.clangxx() } else { llvm.clang() };
    let out_path = dir.join(out);
    let mut cmd = Command::new(&compiler);
    cmd.arg(Path::new(PROGRAMS).join(src))
        .args(flags)
        .arg("-fuse-ld=lld")
        .arg("-o")
        .arg(&out_path);
    let res = cmd.output().expect("run clang");
    assert!(
        res.status.success(),
        "{compiler} failed: {}",
        String::from_utf8_lossy(&res.stderr)
    );
    out_path
}

pub fn run(cmd: &str, args: &[&str]) -> String {
    let res = Command::new(cmd).args(args).output().expect(cmd);
    assert!(
        res.status.success(),
        "{cmd} {args:?} failed: {}",
        String::from_utf8_lossy(&res.stderr)
    );
    String::from_utf8(res.stdout).expect("utf8")
}

/// One frame as llvm-symbolizer --verbose prints it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LlvmFrame {
    pub func: String,
    pub filename: String,
    pub start_line: Option<u32>,
    pub line: u32,
    pub column: u32,
    pub discriminator: u32,
}

/// Symbolizes `addrs` through one llvm-symbolizer-19 process; returns per
/// address the frames innermost first, as the tool prints them.
pub fn llvm_symbolize(bin: &Path, addrs: &[u64]) -> Vec<Vec<LlvmFrame>> {
    let mut child = Command::new("llvm-symbolizer-19")
        .args([
            "--inlining",
            "--functions=linkage",
            "--no-demangle",
            "--verbose",
        ])
        .arg(format!("--obj={}", bin.display()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("llvm-symbolizer-19");
    let mut stdin = child.stdin.take().unwrap();
    let input: String = addrs.iter().map(|a| format!("{a:#x}\n")).collect();
    let writer = std::thread::spawn(move || {
        stdin.write_all(input.as_bytes()).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut blocks = Vec::new();
    let mut cur: Vec<LlvmFrame> = Vec::new();
    for line in text.lines() {
        if line.is_empty() {
            blocks.push(std::mem::take(&mut cur));
            continue;
        }
        if let Some(rest) = line.strip_prefix("  ") {
            let f = cur.last_mut().expect("attribute before frame");
            let (k, v) = rest.split_once(": ").unwrap_or((rest, ""));
            match k {
                "Filename" => f.filename = v.to_string(),
                "Function start line" => f.start_line = Some(v.parse().unwrap()),
                "Line" => f.line = v.parse().unwrap(),
                "Column" => f.column = v.parse().unwrap(),
                "Discriminator" => f.discriminator = v.parse().unwrap(),
                _ => {}
            }
        } else {
            cur.push(LlvmFrame {
                func: line.to_string(),
                ..Default::default()
            });
        }
    }
    assert_eq!(blocks.len(), addrs.len(), "llvm-symbolizer output blocks");
    blocks
}

/// One instruction line of `llvm-profgen --show-disassembly-only
/// --show-source-locations`: address, whether it decoded, and the inline
/// context profgen printed for it.
pub struct ProfgenInsn {
    pub addr: u64,
    pub valid: bool,
    pub context: String,
}

fn profgen_lines(bin: &Path, locations: bool) -> Vec<String> {
    let mut cmd = Command::new("llvm-profgen-19");
    cmd.arg(format!("--binary={}", bin.display())).args([
        "--show-disassembly-only",
        "--perfscript=/dev/null",
        "--output=/dev/null",
    ]);
    if locations {
        cmd.arg("--show-source-locations");
    }
    let out = cmd.output().expect("llvm-profgen-19");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Runs llvm-profgen twice, with and without `--show-source-locations`: the
/// context is what the second run appends to each instruction line (after
/// padding), which is unambiguous even when the instruction text is long.
pub fn profgen_disassembly(bin: &Path) -> Vec<ProfgenInsn> {
    let plain = profgen_lines(bin, false);
    let located = profgen_lines(bin, true);
    assert_eq!(plain.len(), located.len(), "llvm-profgen output lengths");
    let mut v = Vec::new();
    for (p, l) in plain.iter().zip(&located) {
        let t = p.trim_start();
        let Some((a, rest)) = t.split_once(":\t") else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(a, 16) else {
            continue;
        };
        let p = p.trim_end();
        assert!(l.starts_with(p), "line mismatch: {p:?} vs {l:?}");
        v.push(ProfgenInsn {
            addr,
            valid: !rest.starts_with("<unknown>"),
            context: l[p.len()..].trim().to_string(),
        });
    }
    v
}

/// Our frames rendered the way llvm-profgen's `getReversedLocWithContext`
/// prints them: `leaf:off[.disc] @ caller:off[.disc]`.
pub fn profgen_context(frames: &[kfdo_elf::Frame]) -> String {
    let mut s = String::new();
    for f in frames.iter().rev() {
        if !s.is_empty() {
            s.push_str(" @ ");
        }
        s.push_str(&format!("{}:{}", f.func, f.line_offset()));
        if f.discriminator > 0 {
            s.push_str(&format!(".{}", f.discriminator));
        }
    }
    s
}

pub const PROFILING_FLAGS: &[&str] = &[
    "-O2",
    "-g",
    "-fdebug-info-for-profiling",
    "-funique-internal-linkage-names",
];
