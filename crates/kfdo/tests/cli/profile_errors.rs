//! Bad input to `kfdo profile`: each case is a clear error that names the file
//! and says what to do, a non-zero exit, and no output file.

use crate::common;

use common::*;
use std::path::Path;
use std::process::Command;

/// One emulated-LBR recording of lz, shared by the cases (recording is the slow part).
fn fixture() -> &'static LzRecording {
    lz()
}

/// Run `kfdo profile` expecting failure: returns stderr, checks there is no output.
fn fails(bin: &Path, input: &[&str], extra: &[&str]) -> String {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out.prof");
    let o = kfdo()
        .arg("profile")
        .arg("--binary")
        .arg(bin)
        .args(input)
        .arg("-o")
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        !o.status.success(),
        "expected failure, got success; stderr: {stderr}"
    );
    assert!(!out.exists(), "an output file was left behind: {stderr}");
    let leftovers: Vec<_> = std::fs::read_dir(out_dir.path()).unwrap().collect();
    assert!(
        leftovers.is_empty(),
        "temporary files left behind: {leftovers:?}"
    );
    assert!(stderr.starts_with("kfdo: error: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn truncated_perf_data() {
    let f = fixture();
    let bytes = std::fs::read(&f.data).unwrap();
    for cut in [8, 100, bytes.len() / 2, bytes.len() - 1] {
        let p = f.dir.join(format!("cut-{cut}.data"));
        std::fs::write(&p, &bytes[..cut]).unwrap();
        let e = fails(&f.bin, &["--perf-data", p.to_str().unwrap()], &[]);
        assert!(
            e.contains(p.to_str().unwrap()) || e.contains(&format!("cut-{cut}.data")),
            "{e}"
        );
        assert!(e.contains("offset"), "names the place: {e}");
    }
}

#[test]
fn not_a_perf_data_file() {
    let f = fixture();
    let e = fails(&f.bin, &["--perf-data", f.bin.to_str().unwrap()], &[]);
    assert!(
        e.contains("not a perf.data file") && e.contains("perf record"),
        "{e}"
    );
    let text = f.dir.join("notes.txt");
    std::fs::write(&text, "hello\n").unwrap();
    let e = fails(&f.bin, &["--perf-script", text.to_str().unwrap()], &[]);
    assert!(e.contains("notes.txt"), "{e}");
}

#[test]
fn build_id_mismatch_names_both_ids() {
    let f = fixture();
    let other_dir = tempfile::tempdir().unwrap();
    let other = build("lz.c", other_dir.path(), &["-O1"]);
    let e = fails(&other, &["--perf-data", f.data.to_str().unwrap()], &[]);
    assert!(e.contains("build-id mismatch"), "{e}");
    assert!(
        e.contains(&build_id_hex(&f.bin)) && e.contains(&build_id_hex(&other)),
        "both ids: {e}"
    );
}

#[test]
fn binary_without_debug_info() {
    let f = fixture();
    let plain = f.dir.join("lz-nodebug");
    Clang::new().flag("-O2").out(&plain).program("lz.c").run();
    let e = fails(&plain, &["--perf-data", f.data.to_str().unwrap()], &[]);
    assert!(
        e.contains("lz-nodebug") && e.contains("debug info") && e.contains("-g"),
        "{e}"
    );
}

#[test]
fn no_samples_for_the_binary() {
    let f = fixture();
    // A binary that never ran in the recording.
    let other_dir = tempfile::tempdir().unwrap();
    let interp = build("interp.c", other_dir.path(), &[]);
    let e = fails(&interp, &["--perf-data", f.data.to_str().unwrap()], &[]);
    assert!(
        e.contains("no mapping of") && e.contains("lz"),
        "lists what was mapped: {e}"
    );
    // The binary ran, but not in the selected process.
    let e = fails(
        &f.bin,
        &["--perf-data", f.data.to_str().unwrap()],
        &["--pid", "1"],
    );
    assert!(e.contains("none of the") && e.contains("pid"), "{e}");
}

#[test]
fn branch_mode_on_data_without_branch_stacks() {
    let f = fixture();
    let ip = f.dir.join("ip.data");
    run_ok(
        Command::new("perf")
            .args(["record", "-q", "-e", "cpu-clock", "-o"])
            .arg(&ip)
            .arg(&f.bin)
            .arg("300000"),
    );
    let e = fails(&f.bin, &["--perf-data", ip.to_str().unwrap()], &[]);
    assert!(
        e.contains("no branch stacks") && e.contains("--ip-only"),
        "{e}"
    );
    // The same file is fine with --ip-only.
    let out = f.dir.join("ip.prof");
    run_ok(
        kfdo()
            .args(["-q", "profile", "--ip-only", "--binary"])
            .arg(&f.bin)
            .arg("--perf-data")
            .arg(&ip)
            .arg("-o")
            .arg(&out),
    );
    assert!(out.exists());
}

#[test]
fn unwritable_output() {
    let f = fixture();
    let o = kfdo()
        .args(["profile", "--binary"])
        .arg(&f.bin)
        .arg("--perf-data")
        .arg(&f.data)
        .args(["-o", "/nonexistent-dir/out.prof"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        e.contains("/nonexistent-dir/out.prof")
            && e.contains("/nonexistent-dir does not exist: create it"),
        "{e}"
    );
}

#[test]
fn kernel_flag_on_a_user_binary() {
    let f = fixture();
    let e = fails(
        &f.bin,
        &["--perf-data", f.data.to_str().unwrap()],
        &["--kernel"],
    );
    assert!(e.contains("not a vmlinux"), "{e}");
}

/// A stripped copy of the recorded binary (`strip -s`: no `.symtab`, no DWARF): no
/// sample can be placed in its code, and the error says that it was stripped and what
/// to profile instead, for a sample profile and for the raw counts alike.
#[test]
fn stripped_binary_says_it_has_no_symbols() {
    let f = fixture();
    let deployed = f.dir.join("stripped");
    std::fs::create_dir_all(&deployed).unwrap();
    let stripped = deployed.join("lz");
    run_ok(
        Command::new("strip")
            .arg("-s")
            .arg("-o")
            .arg(&stripped)
            .arg(&f.bin),
    );
    let said = format!(
        "{} has no symbol table (.symtab) and no DWARF: it was stripped (strip -s)",
        stripped.display()
    );
    let e = fails(&stripped, &["--perf-data", f.data.to_str().unwrap()], &[]);
    assert!(
        e.contains(&said) && e.contains("profile the unstripped binary"),
        "{e}"
    );
    assert!(e.contains("build with -g and do not strip it"), "{e}");

    let out_dir = tempfile::tempdir().unwrap();
    let parquet = out_dir.path().join("host.parquet");
    let o = kfdo()
        .args(["profile", "--ip-only", "--host", "h", "--binary"])
        .arg(&stripped)
        .arg("--perf-data")
        .arg(&f.data)
        .arg("--raw-out")
        .arg(&parquet)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{e}");
    assert!(
        e.contains(&said) && e.contains("strip --strip-debug"),
        "{e}"
    );
    assert!(!e.contains("fall in"), "{e}");
    assert_eq!(std::fs::read_dir(out_dir.path()).unwrap().count(), 0, "{e}");
}
