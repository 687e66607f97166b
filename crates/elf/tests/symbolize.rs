//! `Symbolizer::frames` and `Code` against the LLVM 19 reference tools, for
//! every instruction of real programs built with clang-19 at test time.
//!
//! Two oracles:
//! * `llvm-symbolizer-19 --inlining --functions=linkage --no-demangle
//!   --verbose`: every field of every frame (name, function start line, line,
//!   column, discriminator), innermost first (we compare reversed);
//! * `llvm-profgen-19 --show-disassembly-only --show-source-locations`: the
//!   exact set of addresses llvm-profgen decodes, and the inline context it
//!   derives from them (`leaf:lineoffset.disc @ caller:...`), i.e. exactly
//!   what the profile generator will consume.

mod common;

use std::path::Path;

use common::*;
use kfdo_elf::{Binary, Code, Frame, Symbolizer};

/// `object_text`: the file is a relocatable object, whose `.text` kfdo places at this
/// address while llvm-symbolizer reads an object's addresses as section offsets; given
/// a bare address, llvm-symbolizer then takes the function's name from any section's
/// symbol at that offset (a `.LCPI` constant-pool label of `.rodata`, say), so a
/// local-label name of theirs, or the name of a symbol outside `.text` (aarch64 objects
/// name their constant tables), is not held against ours.
fn check_against_llvm_symbolizer(bin_path: &Path, object_text: Option<u64>) {
    let object = object_text.is_some();
    let bin = Binary::open(bin_path).unwrap();
    let code = Code::new(&bin).unwrap();
    let sym = Symbolizer::new(&bin).unwrap();
    let addrs: Vec<u64> = code.iter().map(|(a, _, _)| a).collect();
    assert!(addrs.len() > 100, "too few instructions: {}", addrs.len());
    let bias = object_text.unwrap_or(0);
    let text = bin
        .section_by_name(".text")
        .map(|s| s.addr..s.addr + s.size);
    let not_code_name = |name: &str| {
        name.starts_with(".L")
            || bin
                .symbol_address(name)
                .is_some_and(|a| text.as_ref().is_some_and(|t| !t.contains(&a)))
    };
    let theirs_at: Vec<u64> = addrs.iter().map(|a| a - bias).collect();
    let llvm = llvm_symbolize(bin_path, &theirs_at);
    let mut frames: Vec<Frame> = Vec::new();
    let (mut mismatches, mut no_die, mut inlined) = (Vec::new(), 0usize, 0usize);
    let (mut with_disc, mut uniq) = (0usize, 0usize);
    for (&addr, theirs) in addrs.iter().zip(&llvm) {
        sym.frames(addr, &mut frames);
        if frames.len() > 1 {
            inlined += 1;
        }
        with_disc += frames.iter().any(|f| f.discriminator != 0) as usize;
        uniq += frames.iter().any(|f| f.func.contains(".__uniq.")) as usize;
        // llvm-symbolizer (unlike llvm-profgen) falls back to the ELF symbol
        // name when no DWARF subroutine covers the address: one frame and no
        // "Function start line". llvm-profgen gets "<invalid>" there and
        // keeps no frame, which is what we return.
        if frames.is_empty() && theirs.len() == 1 && theirs[0].start_line.is_none() {
            no_die += 1;
            continue;
        }
        // Outermost first, stopping at an unnamed frame like llvm-profgen.
        let expect: Vec<_> = theirs
            .iter()
            .rev()
            .take_while(|f| !f.func.is_empty() && f.func != "??")
            .collect();
        let same = expect.len() == frames.len()
            && expect.iter().zip(&frames).all(|(t, o)| {
                (t.func == *o.func || (object && not_code_name(&t.func)))
                    && t.line == o.line
                    && t.column == o.column
                    && t.start_line.unwrap_or(0) == o.start_line
                    && t.discriminator == o.discriminator
            });
        if !same {
            mismatches.push(format!(
                "{addr:#x}:\n  llvm: {:?}\n  ours: {:?}",
                expect, frames
            ));
        }
    }
    eprintln!(
        "{}: {} instructions, {} with inlined frames, {} without a DWARF subroutine, {} mismatches",
        bin_path.display(),
        addrs.len(),
        inlined,
        no_die,
        mismatches.len()
    );
    assert!(inlined > 50, "test program should inline heavily");
    assert!(
        with_disc > 10,
        "expected discriminators (-fdebug-info-for-profiling)"
    );
    assert!(uniq > 10, "expected .__uniq. linkage names");
    assert!(
        mismatches.is_empty(),
        "{} of {} addresses differ from llvm-symbolizer-19; first ones:\n{}",
        mismatches.len(),
        addrs.len(),
        mismatches[..mismatches.len().min(15)].join("\n")
    );
}

fn check_against_llvm_profgen(bin_path: &Path) {
    let bin = Binary::open(bin_path).unwrap();
    let code = Code::new(&bin).unwrap();
    let sym = Symbolizer::new(&bin).unwrap();
    let pg = profgen_disassembly(bin_path);
    let pg_valid: Vec<u64> = {
        let mut v: Vec<u64> = pg.iter().filter(|i| i.valid).map(|i| i.addr).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut ours: Vec<u64> = code.iter().map(|(a, _, _)| a).collect();
    if bin.arch() == kfdo_elf::Arch::Aarch64 {
        // llvm-profgen's disassembler gets no target features (the generic CPU), so it
        // rejects extension instructions (LSE atomics in the outlined-atomics helpers,
        // say) that we decode; only those may be ours alone.
        ours.retain(|&a| pg_valid.binary_search(&a).is_ok() || generic_cpu_decodes(&bin, a));
    }
    if pg_valid != ours {
        let only_pg: Vec<_> = pg_valid
            .iter()
            .filter(|a| !code.is_code(**a))
            .take(10)
            .collect();
        let only_us: Vec<_> = ours
            .iter()
            .filter(|a| pg_valid.binary_search(a).is_err())
            .take(10)
            .collect();
        panic!(
            "decoded addresses differ: profgen {} vs ours {}; only profgen: {only_pg:x?}; only ours: {only_us:x?}",
            pg_valid.len(),
            ours.len()
        );
    }
    let mut frames = Vec::new();
    let mut bad = Vec::new();
    for insn in pg.iter().filter(|i| i.valid) {
        sym.frames(insn.addr, &mut frames);
        let ctx = profgen_context(&frames);
        let ok = insn.context == ctx;
        if !ok {
            bad.push(format!(
                "{:#x}\n  profgen: {}\n  ours:    {ctx}",
                insn.addr, insn.context
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} contexts differ from llvm-profgen-19; first ones:\n{}",
        bad.len(),
        pg.len(),
        bad[..bad.len().min(15)].join("\n")
    );
}

/// Whether `llvm-mc-19` for aarch64 without target features decodes the word at `addr`.
fn generic_cpu_decodes(bin: &Binary, addr: u64) -> bool {
    let off = bin.vaddr_to_file_offset(addr).unwrap() as usize;
    let word = &bin.data()[off..off + 4];
    let text: String = word.iter().map(|b| format!("{b:#04x} ")).collect();
    let out = std::process::Command::new("llvm-mc-19")
        .args(["--disassemble", "-triple=aarch64"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(text.as_bytes())?;
            c.wait_with_output()
        })
        .expect("llvm-mc-19");
    let err = String::from_utf8_lossy(&out.stderr);
    let decoded = !err.contains("invalid instruction encoding");
    eprintln!(
        "{addr:#x}: {text}-> llvm-mc-19 generic: {}",
        if decoded {
            "decodes"
        } else {
            "invalid (extension)"
        }
    );
    decoded
}

fn variant(src: &str, out: &str, extra: &[&str]) {
    if !kfdo_testkit::require_tools(&["clang-19", "llvm-symbolizer-19", "llvm-profgen-19"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut flags = PROFILING_FLAGS.to_vec();
    flags.extend_from_slice(extra);
    let bin = build(dir.path(), src, out, &flags);
    check_against_llvm_symbolizer(&bin, None);
    check_against_llvm_profgen(&bin);
}

#[test]
fn c_interpreter_dwarf5() {
    variant("interp.c", "interp5", &["-gdwarf-5"]);
}

#[test]
fn c_interpreter_dwarf4() {
    variant("interp.c", "interp4", &["-gdwarf-4"]);
}

#[test]
fn c_interpreter_dwarf5_no_pie_compressed() {
    variant(
        "interp.c",
        "interp5z",
        &["-gdwarf-5", "-no-pie", "-gz=zlib"],
    );
}

#[test]
fn cxx_containers_dwarf5() {
    variant("containers.cpp", "containers5", &["-gdwarf-5"]);
}

#[test]
fn cxx_containers_dwarf4() {
    variant("containers.cpp", "containers4", &["-gdwarf-4"]);
}

/// A relocatable object (what a kernel module is): its sections all start at 0 and its
/// DWARF is only right once relocated. kfdo's layout puts `.text` first, and the frames
/// must agree with llvm-symbolizer's at every instruction.
#[test]
fn c_interpreter_relocatable_object() {
    if !kfdo_testkit::require_tools(&["clang-19", "llvm-symbolizer-19"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut flags = PROFILING_FLAGS.to_vec();
    flags.extend_from_slice(&["-gdwarf-5", "-c"]);
    let obj = build(dir.path(), "interp.c", "interp.o", &flags);
    let bin = Binary::open(&obj).unwrap();
    assert!(bin.is_relocatable());
    let text = bin.section_by_name(".text").unwrap().addr;
    assert_eq!(text, kfdo_elf::RELOCATABLE_LAYOUT_BASE);
    check_against_llvm_symbolizer(&obj, Some(text));
}

/// Whether clang-19 can link for aarch64 here (Debian's cross sysroot, which
/// gcc-aarch64-linux-gnu and libc6-dev-arm64-cross install).
fn aarch64_cross() -> bool {
    kfdo_testkit::require_tools(&["aarch64-linux-gnu-gcc"])
}

#[test]
fn c_interpreter_aarch64_dwarf5() {
    if aarch64_cross() {
        variant(
            "interp.c",
            "interp5-a64",
            &["--target=aarch64-linux-gnu", "-gdwarf-5"],
        );
    }
}

/// An aarch64 relocatable object (an arm64 kernel module): its DWARF carries
/// R_AARCH64_ABS64 / ABS32 relocations.
#[test]
fn c_interpreter_aarch64_relocatable_object() {
    if !kfdo_testkit::require_tools(&["clang-19", "llvm-symbolizer-19"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut flags = PROFILING_FLAGS.to_vec();
    flags.extend_from_slice(&["--target=aarch64-linux-gnu", "-gdwarf-5", "-c"]);
    let obj = build(dir.path(), "interp.c", "interp-a64.o", &flags);
    let bin = Binary::open(&obj).unwrap();
    assert!(bin.is_relocatable());
    assert_eq!(bin.arch(), kfdo_elf::Arch::Aarch64);
    let text = bin.section_by_name(".text").unwrap().addr;
    check_against_llvm_symbolizer(&obj, Some(text));
}
