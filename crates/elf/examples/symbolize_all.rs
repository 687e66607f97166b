//! Symbolizes every instruction of a binary with kfdo-elf, then with
//! llvm-symbolizer-19 in the same run, and prints instructions/s and the ratio.
//!
//! usage: cargo run --release -p kfdo-elf --example symbolize_all -- BINARY [--check]
//!
//! `--check` also compares every frame with llvm-symbolizer's (slower: it
//! parses the reference output). A good large input:
//!   clang-19 -O2 -g -fdebug-info-for-profiling -funique-internal-linkage-names \
//!     -fPIC -shared sqlite3.c -o libsqlite3.so
//!
//! llvm-symbolizer is single-threaded, so both a single-threaded and a
//! parallel kfdo time are shown. Times include building the lazy per-unit
//! tables (DIE trees, line tables) from a cold `Symbolizer`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

use rayon::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: symbolize_all BINARY [--check]")?;
    let check = args.any(|a| a == "--check");

    let t = Instant::now();
    let bin = kfdo_elf::Binary::open(path.as_ref())?;
    let code = kfdo_elf::Code::new(&bin)?;
    let addrs: Vec<u64> = code.iter().map(|(a, _, _)| a).collect();
    let t_code = t.elapsed();
    println!(
        "{path}: {} instructions decoded in {:.3}s ({:.1} M insn/s, {} threads)",
        addrs.len(),
        t_code.as_secs_f64(),
        addrs.len() as f64 / t_code.as_secs_f64() / 1e6,
        rayon::current_num_threads()
    );

    // Single-threaded, cold.
    let t = Instant::now();
    let sym = kfdo_elf::Symbolizer::new(&bin)?;
    let mut frames = Vec::new();
    let mut total_frames = 0usize;
    for &a in &addrs {
        sym.frames(a, &mut frames);
        total_frames += frames.len();
    }
    let t_single = t.elapsed();
    drop(sym);

    // Parallel, cold.
    let t = Instant::now();
    let sym = kfdo_elf::Symbolizer::new(&bin)?;
    let total_par: usize = addrs
        .par_chunks(4096)
        .map(|chunk| {
            let mut frames = Vec::new();
            chunk
                .iter()
                .map(|&a| {
                    sym.frames(a, &mut frames);
                    frames.len()
                })
                .sum::<usize>()
        })
        .sum();
    let t_par = t.elapsed();
    assert_eq!(total_frames, total_par);

    // llvm-symbolizer-19 on the same addresses, one process, via stdin.
    let t = Instant::now();
    let mut child = Command::new("llvm-symbolizer-19")
        .args([
            "--inlining",
            "--functions=linkage",
            "--no-demangle",
            "--verbose",
        ])
        .arg(format!("--obj={path}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().unwrap();
    let input: String = addrs.iter().map(|a| format!("{a:#x}\n")).collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let stdout = BufReader::new(child.stdout.take().unwrap());
    // Frames per address, innermost first: (name, line, discriminator).
    let mut blocks: Vec<Vec<(String, u32, u32)>> = Vec::new();
    let mut cur: Vec<(String, u32, u32)> = Vec::new();
    let mut n_blocks = 0usize;
    for line in stdout.lines() {
        let line = line?;
        if line.is_empty() {
            n_blocks += 1;
            if check {
                blocks.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if !check {
            continue;
        }
        if let Some(v) = line.strip_prefix("  Line: ") {
            cur.last_mut().unwrap().1 = v.parse()?;
        } else if let Some(v) = line.strip_prefix("  Discriminator: ") {
            cur.last_mut().unwrap().2 = v.parse()?;
        } else if !line.starts_with(' ') {
            cur.push((line, 0, 0));
        }
    }
    writer.join().unwrap()?;
    child.wait()?;
    let t_llvm = t.elapsed();
    assert_eq!(n_blocks, addrs.len());

    let rate = |d: std::time::Duration| addrs.len() as f64 / d.as_secs_f64();
    println!("{total_frames} frames");
    println!(
        "kfdo-elf, 1 thread : {:8.3}s  {:>12.0} insn/s",
        t_single.as_secs_f64(),
        rate(t_single)
    );
    println!(
        "kfdo-elf, {} threads: {:8.3}s  {:>12.0} insn/s",
        rayon::current_num_threads(),
        t_par.as_secs_f64(),
        rate(t_par)
    );
    println!(
        "llvm-symbolizer-19 : {:8.3}s  {:>12.0} insn/s",
        t_llvm.as_secs_f64(),
        rate(t_llvm)
    );
    println!(
        "ratio (llvm time / kfdo time): {:.1}x single-threaded, {:.1}x parallel",
        t_llvm.as_secs_f64() / t_single.as_secs_f64(),
        t_llvm.as_secs_f64() / t_par.as_secs_f64()
    );

    if check {
        let (mut diffs, mut outer_name_only) = (0usize, 0usize);
        for (&a, theirs) in addrs.iter().zip(&blocks) {
            sym.frames(a, &mut frames);
            // Same no-subroutine rule as the tests: llvm-symbolizer falls back
            // to the ELF symbol name where llvm-profgen (and we) keep nothing.
            if frames.is_empty() && theirs.len() == 1 {
                continue;
            }
            let ok = theirs.len() == frames.len()
                && theirs
                    .iter()
                    .rev()
                    .zip(&frames)
                    .all(|(t, f)| t.0 == *f.func && t.1 == f.line && t.2 == f.discriminator);
            // llvm-symbolizer (not llvm-profgen) replaces the outermost frame's
            // name with the ELF symbol's (e.g. `foo.llvm.123` for `foo`).
            let outer_only = !ok
                && theirs.len() == frames.len()
                && theirs
                    .iter()
                    .rev()
                    .zip(&frames)
                    .enumerate()
                    .all(|(i, (t, f))| {
                        (i == 0 || t.0 == *f.func) && t.1 == f.line && t.2 == f.discriminator
                    });
            if outer_only {
                outer_name_only += 1;
            } else if !ok {
                diffs += 1;
                if diffs <= 5 {
                    println!("diff at {a:#x}: llvm {theirs:?} ours {frames:?}");
                }
            }
        }
        println!(
            "check: {diffs} of {} addresses differ ({outer_name_only} more differ only in the outermost name, from llvm-symbolizer's symbol-table override that llvm-profgen turns off)",
            addrs.len()
        );
    }
    Ok(())
}
