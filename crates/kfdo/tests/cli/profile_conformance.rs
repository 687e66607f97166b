//! `kfdo profile` against the reference converter, llvm-profgen of each LLVM release kfdo
//! is tested with (19 and 22), on the same input: real programs built with that
//! release's clang at test time, branch stacks from
//! kfdo's emulated LBR (the `kfdo-record` emulated recorder: every taken branch under
//! qemu-x86_64, sampled every PERIOD branches with the last 32 records, newest
//! first, as Intel LBR sampling on the taken-branch event writes them).
//!
//! Deliberate differences from llvm-profgen (19 or 22): none are needed for these
//! programs; the profiles must be equal in every function, total, head sample,
//! body sample, call target and inlinee. (Where kfdo differs by design, in
//! inputs llvm-profgen cannot read correctly, it is tested elsewhere: several
//! processes mapping the binary at different bases are separated per process
//! by kfdo, while llvm-profgen applies the latest mmap to every sample.)

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Recorded {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    bin: PathBuf,
    data: PathBuf,
    script: PathBuf,
}

/// The tools of a release these tests run.
const TOOLS: &[&str] = &["clang", "clang++", "llvm-profgen", "llvm-profdata"];

/// Build `source` with `llvm`'s clang, run it under emulated LBR, and print its perf
/// script.
fn record(llvm: Llvm, source: &str, args: &[&str], period: u64, extra_cflags: &[&str]) -> Recorded {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let bin = build_with(llvm, source, &dir, extra_cflags);
    let data = dir.join("perf.data");
    let cfg = kfdo_record::RecordConfig::new(bin.as_os_str(), &data)
        .args(args.iter().copied())
        .period(period);
    let outcome =
        kfdo_record::record_user(&cfg).unwrap_or_else(|e| panic!("recording {source}: {e}"));
    assert_eq!(outcome.exit_code, 0, "{source} failed under emulation");
    assert!(
        outcome.samples > 1000,
        "{source}: only {} samples",
        outcome.samples
    );
    let script = dir.join("perf.script");
    let out = run_ok(
        Command::new("perf")
            .args(["script", "-F", "ip,brstack", "--show-mmap-events", "-i"])
            .arg(&data),
    );
    std::fs::write(&script, &out.stdout).unwrap();
    Recorded {
        _dir: tmp,
        dir,
        bin,
        data,
        script,
    }
}

fn llvm_profgen(llvm: Llvm, bin: &Path, script: &Path, out: &Path, extra: &[&str]) {
    run_ok(
        Command::new(llvm.profgen())
            .arg(format!("--binary={}", bin.display()))
            .arg(format!("--perfscript={}", script.display()))
            .arg(format!("--output={}", out.display()))
            .args(extra),
    );
}

fn kfdo_profile(r: &Recorded, input: &[&str], out: &Path, extra: &[&str]) {
    run_ok(
        kfdo()
            .arg("-q")
            .arg("profile")
            .arg("--binary")
            .arg(&r.bin)
            .args(input)
            .arg("-o")
            .arg(out)
            .args(extra),
    );
}

/// The whole check for one program: text profiles equal to llvm-profgen's from
/// perf.data and from perf script; raw aggregates byte-identical to
/// `--skip-symbolization`; extbinary that llvm-profdata reads back to the same
/// text and clang builds with; all with `llvm`'s tools.
fn conformance_with(
    llvm: Llvm,
    source: &str,
    args: &[&str],
    period: u64,
    extra_cflags: &[&str],
) -> kfdo_afdo::Profile {
    let r = record(llvm, source, args, period, extra_cflags);
    let d = &r.dir;
    let data = r.data.to_str().unwrap();
    let script = r.script.to_str().unwrap();

    llvm_profgen(
        llvm,
        &r.bin,
        &r.script,
        &d.join("ref.txt"),
        &["--format=text"],
    );
    kfdo_profile(
        &r,
        &["--perf-data", data],
        &d.join("kfdo.txt"),
        &["--format", "text"],
    );
    kfdo_profile(
        &r,
        &["--perf-script", script],
        &d.join("kfdo-script.txt"),
        &["--format", "text"],
    );
    let reference = read_text(&d.join("ref.txt"));
    let ours = read_text(&d.join("kfdo.txt"));
    assert!(
        ours == reference,
        "{source}: kfdo vs {}:\n{}",
        llvm.profgen(),
        diff(&ours, &reference)
    );
    assert_eq!(
        read_text(&d.join("kfdo-script.txt")),
        ours,
        "{source}: perf script input gave another profile"
    );

    // The unsymbolized aggregate, byte for byte (same sort order, same offsets).
    llvm_profgen(
        llvm,
        &r.bin,
        &r.script,
        &d.join("ref.raw"),
        &["--skip-symbolization"],
    );
    kfdo_profile(
        &r,
        &["--perf-data", data],
        &d.join("kfdo.raw"),
        &["--unsymbolized"],
    );
    assert_eq!(
        std::fs::read_to_string(d.join("kfdo.raw")).unwrap(),
        std::fs::read_to_string(d.join("ref.raw")).unwrap(),
        "{source}: raw profile differs from llvm-profgen --skip-symbolization"
    );
    // ... and a profile made from it equals the direct one.
    kfdo_profile(
        &r,
        &["--unsymbolized-in", d.join("ref.raw").to_str().unwrap()],
        &d.join("from-raw.txt"),
        &["--format", "text"],
    );
    assert_eq!(
        read_text(&d.join("from-raw.txt")),
        ours,
        "{source}: profile from the raw aggregate differs"
    );

    // extbinary: llvm-profdata's text of it is kfdo's text, byte for byte.
    let ext = d.join("kfdo.extbin");
    kfdo_profile(&r, &["--perf-data", data], &ext, &[]);
    let merged = run_ok(
        Command::new(llvm.profdata())
            .args(["merge", "--sample", "--text", "-o", "-"])
            .arg(&ext),
    );
    let ours_text = std::fs::read_to_string(d.join("kfdo.txt")).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&merged.stdout),
        ours_text,
        "{source}: llvm-profdata text of kfdo's extbinary"
    );
    let shown = run_ok(kfdo().arg("show").arg(&ext));
    assert_eq!(
        String::from_utf8_lossy(&shown.stdout),
        ours_text,
        "{source}: kfdo show of its extbinary"
    );

    // clang builds the program with either profile.
    for prof in [&ext, &d.join("kfdo.txt")] {
        let out = d.join("optimized");
        Clang::for_source(llvm, source)
            .cflags()
            .flag(format!("-fprofile-sample-use={}", prof.display()))
            .flag("-Werror=profile-instr-unprofiled")
            .out(&out)
            .program(source)
            .run();
        run_ok(Command::new(&out).args(args));
    }
    ours
}

/// [`conformance_with`] for each release installed; the profile of the last.
fn conformance(
    source: &str,
    args: &[&str],
    period: u64,
    extra_cflags: &[&str],
) -> kfdo_afdo::Profile {
    let releases = kfdo_testkit::llvm_releases(TOOLS);
    assert!(!releases.is_empty(), "no LLVM release to compare with");
    let mut last = None;
    for llvm in releases {
        last = Some(conformance_with(llvm, source, args, period, extra_cflags));
    }
    last.unwrap()
}

fn inlinees(p: &kfdo_afdo::Profile) -> usize {
    p.functions.values().map(|f| f.num_inlinees()).sum()
}

fn call_targets(p: &kfdo_afdo::Profile) -> usize {
    let mut n = 0;
    for f in p.functions.values() {
        f.visit(&mut |fs, _| {
            n += fs
                .body
                .values()
                .map(|r| r.call_targets.len())
                .sum::<usize>()
        });
    }
    n
}

#[test]
fn heavy_inlining_c_matches_llvm_profgen() {
    let p = conformance("lz.c", &["300000"], 61, &[]);
    assert!(
        inlinees(&p) >= 4,
        "lz inlines its helpers: {} inlinee profiles",
        inlinees(&p)
    );
    assert!(p.functions.keys().any(|n| n.contains(".__uniq.")) || inlinees(&p) > 0);
}

#[test]
fn non_pie_matches_llvm_profgen() {
    conformance("lz.c", &["200000"], 97, &["-no-pie", "-fno-pie"]);
}

/// lld does not page-align segments in the file: the text segment starts
/// mid-page, and perf's page-rounded mapping offset falls in the read-only
/// segment before it.
#[test]
fn lld_linked_pie_matches_llvm_profgen() {
    for llvm in kfdo_testkit::llvm_releases(TOOLS) {
        let p = conformance_with(llvm, "lz.c", &["300000"], 61, &["-fuse-ld=lld"]);
        let hottest = p
            .functions
            .values()
            .max_by_key(|f| f.total_samples)
            .unwrap();
        // clang-22 inlines compress into main; 19 keeps it a function of its own.
        let mut names = Vec::new();
        hottest.visit(&mut |fs, _| names.push(fs.name.clone()));
        assert!(
            names.iter().any(|n| n.contains("compress")),
            "{llvm}: the hottest function {} holds no compress: {names:?}",
            hottest.name
        );
    }
}

#[test]
fn cpp_matches_llvm_profgen() {
    let p = conformance("shapes.cpp", &["20000"], 31, &[]);
    assert!(
        p.functions.keys().any(|n| n.starts_with("_Z")),
        "mangled C++ names expected"
    );
    assert!(call_targets(&p) >= 3, "virtual calls give call targets");
}

#[test]
fn interpreter_with_recursion_matches_llvm_profgen() {
    let p = conformance("interp.c", &["20"], 31, &[]);
    assert!(
        p.functions.values().any(|f| f.head_samples > 0),
        "recursive calls give head samples"
    );
    assert!(call_targets(&p) >= 1);
}

/// IP-only samples from a real `perf record -e cpu-clock` on this machine,
/// against `llvm-profgen --leading-ip-only` of each release. llvm-profgen only accepts
/// lines that look like LBR samples even in that mode, so its copy of the
/// perf script gets a dummy `0x0/0x0/P/-/-/0` record appended to each sample
/// line (it ignores everything after the leading IP in that mode); kfdo reads
/// the perf.data and the unmodified perf script.
#[test]
fn ip_only_matches_llvm_profgen_leading_ip_only() {
    let mut compared = 0;
    for llvm in kfdo_testkit::llvm_releases(TOOLS) {
        if llvm.differences().profgen_leading_ip_only {
            ip_only_matches(llvm);
            compared += 1;
        } else {
            // The difference kfdo_toolchain records (and `kfdo optimize` refuses
            // autofdo-llvm-profgen for) holds: this llvm-profgen refuses the option.
            let out = Command::new(llvm.profgen())
                .arg("--leading-ip-only")
                .output()
                .unwrap();
            assert!(
                !out.status.success()
                    && String::from_utf8_lossy(&out.stderr)
                        .contains("Unknown command line argument '--leading-ip-only'"),
                "{}: kfdo_toolchain says it has no --leading-ip-only, yet it took it",
                llvm.profgen()
            );
        }
    }
    assert!(compared > 0, "no llvm-profgen with --leading-ip-only ran");
}

fn ip_only_matches(llvm: Llvm) {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let bin = build_with(llvm, "lz.c", d, &[]);
    let data = d.join("ip.data");
    run_ok(
        Command::new("perf")
            .args(["record", "-q", "-e", "cpu-clock", "-c", "50000", "-o"])
            .arg(&data)
            .arg(&bin)
            .arg("12000000"),
    );
    let script = run_ok(
        Command::new("perf")
            .args(["script", "-F", "ip,brstack", "--show-mmap-events", "-i"])
            .arg(&data),
    );
    let text = String::from_utf8(script.stdout).unwrap();
    std::fs::write(d.join("ip.script"), &text).unwrap();
    let adapted: String = text
        .lines()
        .map(|l| {
            if l.contains("PERF_RECORD_") {
                format!("{l}\n")
            } else {
                format!("{l} 0x0/0x0/P/-/-/0\n")
            }
        })
        .collect();
    std::fs::write(d.join("ip-profgen.script"), adapted).unwrap();
    llvm_profgen(
        llvm,
        &bin,
        &d.join("ip-profgen.script"),
        &d.join("ref.txt"),
        &["--format=text", "--leading-ip-only"],
    );

    for (flag, input) in [("--perf-data", "ip.data"), ("--perf-script", "ip.script")] {
        run_ok(
            kfdo()
                .args(["-q", "profile", "--ip-only", "--format", "text", "--binary"])
                .arg(&bin)
                .arg(flag)
                .arg(d.join(input))
                .arg("-o")
                .arg(d.join("kfdo.txt")),
        );
        let (ours, reference) = (
            read_text(&d.join("kfdo.txt")),
            read_text(&d.join("ref.txt")),
        );
        assert!(
            reference.total() > 0,
            "the recording must have samples in lz"
        );
        assert!(
            ours == reference,
            "{input}: kfdo --ip-only vs {} --leading-ip-only:\n{}",
            llvm.profgen(),
            diff(&ours, &reference)
        );
    }
}

/// Raw aggregates merge exactly: the profile of two recordings through their
/// raw files equals the profile of both perf.data files at once, and the raw
/// counts are the sums.
#[test]
fn raw_profiles_merge_exactly() {
    let a = record(Llvm::DEFAULT, "interp.c", &["18"], 17, &[]);
    let b_dir = tempfile::tempdir().unwrap();
    let b_data = b_dir.path().join("b.data");
    let cfg = kfdo_record::RecordConfig::new(a.bin.as_os_str(), &b_data)
        .args(["19"])
        .period(23);
    kfdo_record::record_user(&cfg).unwrap();
    let d = &a.dir;
    let (ra, rb) = (d.join("a.raw"), d.join("b.raw"));
    kfdo_profile(
        &a,
        &["--perf-data", a.data.to_str().unwrap()],
        &ra,
        &["--unsymbolized"],
    );
    kfdo_profile(
        &a,
        &["--perf-data", b_data.to_str().unwrap()],
        &rb,
        &["--unsymbolized"],
    );
    kfdo_profile(
        &a,
        &[
            "--unsymbolized-in",
            ra.to_str().unwrap(),
            rb.to_str().unwrap(),
        ],
        &d.join("ab.raw"),
        &["--unsymbolized"],
    );
    kfdo_profile(
        &a,
        &[
            "--perf-data",
            a.data.to_str().unwrap(),
            b_data.to_str().unwrap(),
        ],
        &d.join("both.raw"),
        &["--unsymbolized"],
    );
    assert_eq!(
        std::fs::read(d.join("ab.raw")).unwrap(),
        std::fs::read(d.join("both.raw")).unwrap()
    );

    let base = kfdo_elf::Binary::open(&a.bin).unwrap().preferred_base();
    let pa = kfdo_aggregate::RawProfile::read_text(&ra, base).unwrap();
    let pb = kfdo_aggregate::RawProfile::read_text(&rb, base).unwrap();
    let pab = kfdo_aggregate::RawProfile::read_text(&d.join("ab.raw"), base).unwrap();
    assert_eq!(pab.range_total(), pa.range_total() + pb.range_total());
    assert_eq!(pab.branch_total(), pa.branch_total() + pb.branch_total());

    kfdo_profile(
        &a,
        &[
            "--unsymbolized-in",
            ra.to_str().unwrap(),
            rb.to_str().unwrap(),
        ],
        &d.join("ab.txt"),
        &["--format", "text"],
    );
    kfdo_profile(
        &a,
        &[
            "--perf-data",
            a.data.to_str().unwrap(),
            b_data.to_str().unwrap(),
        ],
        &d.join("both.txt"),
        &["--format", "text"],
    );
    assert_eq!(read_text(&d.join("ab.txt")), read_text(&d.join("both.txt")));
}
