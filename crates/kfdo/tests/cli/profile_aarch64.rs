//! aarch64 programs on this x86-64 machine: cross-compiled with clang-19
//! (`--target=aarch64-linux-gnu`, Debian's cross sysroot), recorded by `kfdo record`
//! under qemu-aarch64 (picked from the ELF header) with the emulated LBR, and profiled
//! by `kfdo profile`, whose profile must equal llvm-profgen-19's on the same perf.data
//! (through `perf script`): every function, total, head, body sample, call target and
//! inlinee, and the raw aggregate byte for byte.
//!
//! And the mismatch: an aarch64 binary with x86-64 samples, and the reverse, is a clear
//! error naming both architectures, with nothing written.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const AARCH64: &[&str] = &["--target=aarch64-linux-gnu", "-fuse-ld=lld"];

fn tools() -> bool {
    kfdo_testkit::require_tools(&[
        "clang-19",
        "llvm-profgen-19",
        "perf",
        "qemu-aarch64",
        "aarch64-linux-gnu-gcc",
    ])
}

/// `kfdo record --method emulated` at a prime period, through the CLI.
fn record(bin: &Path, args: &[&str], period: u64, out: &Path) {
    run_ok(
        kfdo()
            .args(["record", "-q", "--method", "emulated", "-c"])
            .arg(period.to_string())
            .arg("-o")
            .arg(out)
            .arg("--")
            .arg(bin)
            .args(args),
    );
}

fn perf_script(data: &Path, out: &Path) {
    let o = run_ok(
        Command::new("perf")
            .args(["script", "-F", "ip,brstack", "--show-mmap-events", "-i"])
            .arg(data),
    );
    std::fs::write(out, &o.stdout).unwrap();
}

fn profile(bin: &Path, data: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    kfdo()
        .args(["-q", "profile", "--binary"])
        .arg(bin)
        .arg("--perf-data")
        .arg(data)
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn conformance(source: &str, args: &[&str], period: u64, extra: &[&str]) -> kfdo_afdo::Profile {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut flags = AARCH64.to_vec();
    flags.extend(extra);
    let bin = build(source, d, &flags);
    conformance_of(source, &bin, args, period, d)
}

/// The checks of [`conformance`] on a built binary, with files in `d`.
fn conformance_of(
    source: &str,
    bin: &Path,
    args: &[&str],
    period: u64,
    d: &Path,
) -> kfdo_afdo::Profile {
    let bin = bin.to_path_buf();
    let data = d.join("perf.data");
    record(&bin, args, period, &data);
    let script = d.join("perf.script");
    perf_script(&data, &script);

    let reference = d.join("ref.txt");
    run_ok(
        Command::new("llvm-profgen-19")
            .arg(format!("--binary={}", bin.display()))
            .arg(format!("--perfscript={}", script.display()))
            .arg(format!("--output={}", reference.display()))
            .arg("--format=text"),
    );
    let ours = d.join("kfdo.txt");
    let out = profile(&bin, &data, &ours, &["--format", "text"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (ours, reference) = (read_text(&ours), read_text(&reference));
    assert!(
        ours == reference,
        "{source} (aarch64): kfdo vs llvm-profgen-19:\n{}",
        diff(&ours, &reference)
    );

    let raw_ref = d.join("ref.raw");
    run_ok(
        Command::new("llvm-profgen-19")
            .arg(format!("--binary={}", bin.display()))
            .arg(format!("--perfscript={}", script.display()))
            .arg(format!("--output={}", raw_ref.display()))
            .arg("--skip-symbolization"),
    );
    let raw = d.join("kfdo.raw");
    let out = profile(&bin, &data, &raw, &["--unsymbolized"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&raw).unwrap(),
        std::fs::read_to_string(&raw_ref).unwrap(),
        "{source} (aarch64): raw aggregate differs from llvm-profgen --skip-symbolization"
    );
    eprintln!(
        "{source} (aarch64): {} functions, {} samples, equal to llvm-profgen-19",
        ours.functions.len(),
        ours.total()
    );
    ours
}

#[test]
fn aarch64_c_matches_llvm_profgen() {
    if !tools() {
        return;
    }
    let p = conformance("lz.c", &["100000"], 61, &[]);
    let inlinees: usize = p.functions.values().map(|f| f.num_inlinees()).sum();
    assert!(
        inlinees >= 4,
        "lz inlines its helpers: {inlinees} inlinee profiles"
    );
}

#[test]
fn aarch64_interpreter_matches_llvm_profgen() {
    if !tools() {
        return;
    }
    let p = conformance("interp.c", &["12"], 31, &["-no-pie", "-fno-pie"]);
    assert!(
        p.functions.values().any(|f| f.head_samples > 0),
        "recursive calls give head samples"
    );
}

/// The check: SQLite's speedtest1 (Debian bookworm's sqlite3 source, the
/// amalgamation generated as compare_sqlite.rs does), cross-compiled for aarch64 and
/// recorded under qemu-aarch64, profiles exactly as llvm-profgen-19 does.
#[test]
fn aarch64_sqlite3_speedtest1_matches_llvm_profgen() {
    let Some(_one_at_a_time) =
        common::heavy_test("sqlite3's speedtest1 cross-built and recorded under qemu-aarch64")
    else {
        return;
    };
    if !tools() {
        return;
    }
    let Some(src) = fetch_sqlite_source() else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sqlite3-speedtest1");
    std::fs::create_dir_all(&dir).unwrap();
    if !dir.join("sqlite3.c").exists() {
        run_ok(
            Command::new(src.join("configure"))
                .current_dir(&dir)
                .env("CC", "clang-19")
                .args(["--disable-tcl", "--disable-readline"]),
        );
        run_ok(Command::new("make").current_dir(&dir).arg("sqlite3.c"));
    }
    let exe = dir.join("speedtest1-aarch64");
    if !exe.exists() {
        let tmp = dir.join(".speedtest1-aarch64.tmp");
        Clang::new()
            .in_dir(&dir)
            .flags(AARCH64)
            .cflags()
            .flags([
                "-DSQLITE_OMIT_LOAD_EXTENSION",
                "-DSQLITE_THREADSAFE=0",
                "-I.",
            ])
            .out(&tmp)
            .input(src.join("test/speedtest1.c"))
            .input("sqlite3.c")
            .flag("-lm")
            .run();
        std::fs::rename(&tmp, &exe).unwrap();
    }
    let tmp = tempfile::tempdir().unwrap();
    let p = conformance_of(
        "speedtest1",
        &exe,
        &["--size", "5", "--memdb"],
        1009,
        tmp.path(),
    );
    assert!(p.functions.len() > 200, "{} functions", p.functions.len());
    assert!(p.functions.values().any(|f| f.head_samples > 0));
}

/// Records `source` for the host (x86-64) and for aarch64; returns the binaries and
/// their perf.data, in that order.
fn both(d: &Path) -> [(PathBuf, PathBuf); 2] {
    let x86 = d.join("x86");
    let a64 = d.join("a64");
    std::fs::create_dir_all(&x86).unwrap();
    std::fs::create_dir_all(&a64).unwrap();
    let bx = build("lz.c", &x86, &[]);
    let ba = build("lz.c", &a64, AARCH64);
    let (dx, da) = (x86.join("perf.data"), a64.join("perf.data"));
    record(&bx, &["20000"], 97, &dx);
    record(&ba, &["20000"], 97, &da);
    [(bx, dx), (ba, da)]
}

#[test]
fn samples_of_another_architecture_are_refused_by_name() {
    if !tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let [(bx, dx), (ba, da)] = both(tmp.path());
    for (bin, data, bin_arch, rec_arch) in [
        (&ba, &dx, "aarch64", "x86-64"),
        (&bx, &da, "x86-64", "aarch64"),
    ] {
        for format in ["text", "extbinary"] {
            let out_path = tmp.path().join(format!("mismatch.{format}"));
            let out = profile(bin, data, &out_path, &["--format", format]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{bin:?} with {data:?} was accepted");
            assert!(
                err.contains(&format!("recorded on {rec_arch}"))
                    && err.contains(&format!("is an {bin_arch} binary")),
                "the error names both architectures: {err}"
            );
            assert!(err.contains(&data.display().to_string()), "{err}");
            assert!(!out_path.exists(), "an output was written: {out_path:?}");
            eprintln!("{bin_arch} binary, {rec_arch} samples: {}", err.trim());
        }
    }
    // The matching pairs still profile.
    for (bin, data) in [(&bx, &dx), (&ba, &da)] {
        let out = profile(bin, data, &tmp.path().join("ok.txt"), &["--format", "text"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The recording method follows the program's ELF header: on this x86-64 host an
/// aarch64 program can only be emulated, so `auto` emulates it and says why, and a
/// hardware method is refused by name.
#[test]
fn a_foreign_program_is_emulated_and_hardware_methods_are_refused() {
    if !tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let bin = build("lz.c", tmp.path(), AARCH64);
    let data = tmp.path().join("auto.data");
    let out = kfdo()
        .args(["record", "-o"])
        .arg(&data)
        .arg("--")
        .arg(&bin)
        .arg("1000")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("is an aarch64 program") && err.contains("qemu-aarch64"),
        "{err}"
    );
    assert!(data.exists());
    for method in ["lbr", "brbe", "ip"] {
        let refused = tmp.path().join(format!("{method}.data"));
        let out = kfdo()
            .args(["record", "--method", method, "-o"])
            .arg(&refused)
            .arg("--")
            .arg(&bin)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            err.contains(&format!("--method {method}"))
                && err.contains("an aarch64 program")
                && err.contains("use --method emulated"),
            "{err}"
        );
        assert!(!refused.exists());
    }
}
