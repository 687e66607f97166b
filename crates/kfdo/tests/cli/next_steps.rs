//! Each command's summary says what to do next: `kfdo record` the `kfdo profile` line of
//! its recording, `kfdo profile` the compiler (or post-link) command that reads the
//! profile, and the lines work as printed.

use crate::common::*;
use std::path::Path;
use std::process::{Command, Output};

pub(super) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The text after `PREFIX: next: ` on stderr.
pub(super) fn next_line(err: &str, prefix: &str) -> String {
    let tag = format!("{prefix}: next: ");
    err.lines()
        .find_map(|l| l.strip_prefix(&tag))
        .unwrap_or_else(|| panic!("no `{tag}` line in:\n{err}"))
        .to_string()
}

/// Runs a printed `kfdo ...` line through the shell, with this build's kfdo.
fn run_kfdo_line(line: &str, dir: &Path) -> Output {
    let rest = line
        .strip_prefix("kfdo ")
        .unwrap_or_else(|| panic!("not a kfdo line: {line}"));
    let kfdo = env!("CARGO_BIN_EXE_kfdo");
    run_ok(
        Command::new("sh")
            .arg("-c")
            .arg(format!("'{kfdo}' {rest}"))
            .current_dir(dir),
    )
}

#[test]
fn record_prints_the_profile_line_of_its_recording_and_it_works() {
    let dir = tempfile::tempdir().unwrap();
    let bin = build("lz.c", dir.path(), &[]);
    let data = dir.path().join("lz.data");
    let rec = run_ok(
        kfdo()
            .args([
                "record", "--method", "emulated", "-c", "211", "--json", "-o",
            ])
            .arg(&data)
            .arg("--")
            .arg(&bin)
            .arg("20000"),
    );
    let line = next_line(&stderr(&rec), "kfdo record");
    let profile = dir.path().join("lz.afdo");
    assert_eq!(
        line,
        format!(
            "kfdo profile --binary {} --perf-data {} -o {}",
            bin.display(),
            data.display(),
            profile.display()
        )
    );
    let j: serde_json::Value = serde_json::from_slice(&rec.stdout).unwrap();
    assert_eq!(j["next"].as_str(), Some(line.as_str()));

    let out = run_kfdo_line(&line, dir.path());
    assert!(profile.is_file(), "{}", stderr(&out));

    // --quiet prints neither line.
    let quiet = run_ok(
        kfdo()
            .args([
                "--quiet", "record", "--method", "emulated", "-c", "211", "-o",
            ])
            .arg(dir.path().join("q.data"))
            .arg("--")
            .arg(&bin)
            .arg("2000"),
    );
    assert!(!stderr(&quiet).contains("next:"), "{}", stderr(&quiet));
}

#[test]
fn profile_prints_the_flags_that_read_it_and_clang_takes_them() {
    let dir = tempfile::tempdir().unwrap();
    let bin = build("lz.c", dir.path(), &["-fbasic-block-address-map"]);
    let data = dir.path().join("lz.data");
    record_emulated(&bin, &["20000"], &data);
    let profile = |format: &str, out: &Path| -> (String, serde_json::Value) {
        let o = run_ok(
            kfdo()
                .args(["profile", "--json", "--format", format, "--binary"])
                .arg(&bin)
                .arg("--perf-data")
                .arg(&data)
                .arg("-o")
                .arg(out),
        );
        let err = stderr(&o);
        assert!(!err.contains("no discriminators"), "{err}");
        let line = next_line(&err, "kfdo profile");
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(j["next"].as_str(), Some(line.as_str()));
        (line, j)
    };

    let afdo = dir.path().join("lz.afdo");
    let (line, _) = profile("extbinary", &afdo);
    // The clang release that built the binary (its DWARF producer), not whichever
    // `clang` is first on PATH.
    assert_eq!(
        line,
        format!("clang-19 -fprofile-sample-use={}", afdo.display())
    );
    let flags: Vec<&str> = line.split_whitespace().skip(1).collect();
    Clang::new()
        .cflags()
        .flags(&flags)
        .program("lz.c")
        .out(dir.path().join("lz.fdo"))
        .run();

    let prefix = dir.path().join("lz");
    let (line, j) = profile("propeller", &prefix);
    let cc = j["propeller"]["cc_profile"].as_str().unwrap();
    let ld = j["propeller"]["ld_profile"].as_str().unwrap();
    assert!(
        line.contains(&format!("-fbasic-block-sections=list={cc}"))
            && line.contains(&format!("-Wl,--symbol-ordering-file={ld}")),
        "{line}"
    );
    let flags: Vec<&str> = line.split_whitespace().skip(1).collect();
    Clang::new()
        .cflags()
        .flags(&flags)
        .program("lz.c")
        .out(dir.path().join("lz.propeller"))
        .run();

    let gcov = dir.path().join("lz.gcov");
    let o = run_ok(
        kfdo()
            .args([
                "profile",
                "--format",
                "gcov",
                "--gcc-version",
                "12",
                "--binary",
            ])
            .arg(&bin)
            .arg("--perf-data")
            .arg(&data)
            .arg("-o")
            .arg(&gcov),
    );
    assert_eq!(
        next_line(&stderr(&o), "kfdo profile"),
        format!("gcc-12 -fauto-profile={}", gcov.display())
    );

    let fdata = dir.path().join("lz.fdata");
    let (line, _) = profile("bolt", &fdata);
    assert!(
        line.starts_with(&format!(
            "llvm-bolt {} -o {}.bolt -data={} ",
            bin.display(),
            bin.display(),
            fdata.display()
        )),
        "{line}"
    );

    let quiet = run_ok(
        kfdo()
            .args(["--quiet", "profile", "--binary"])
            .arg(&bin)
            .arg("--perf-data")
            .arg(&data)
            .arg("-o")
            .arg(dir.path().join("q.afdo")),
    );
    assert!(!stderr(&quiet).contains("next:"), "{}", stderr(&quiet));
}

#[test]
fn a_binary_without_discriminators_is_told_to_add_debug_info_for_profiling() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("lz");
    // The test programs' CFLAGS carry -fdebug-info-for-profiling: this build must not.
    Clang::new()
        .flags(["-O2", "-g"])
        .program("lz.c")
        .out(&bin)
        .run();
    let data = dir.path().join("lz.data");
    record_emulated(&bin, &["20000"], &data);
    let o = run_ok(
        kfdo()
            .args(["profile", "--json", "--binary"])
            .arg(&bin)
            .arg("--perf-data")
            .arg(&data)
            .arg("-o")
            .arg(dir.path().join("lz.afdo")),
    );
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "kfdo profile: note: {} has no discriminators (built without \
             -fdebug-info-for-profiling)",
            bin.display()
        )),
        "{err}"
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["locations_with_discriminators"].as_u64(), Some(0));
}

#[test]
fn raw_out_prints_the_from_raw_line_and_it_works() {
    let dir = tempfile::tempdir().unwrap();
    let bin = build("lz.c", dir.path(), &[]);
    let data = dir.path().join("lz.data");
    record_emulated(&bin, &["20000"], &data);
    let parquet = dir.path().join("host.parquet");
    let o = run_ok(
        kfdo()
            .args(["profile", "--host", "h", "--binary"])
            .arg(&bin)
            .arg("--perf-data")
            .arg(&data)
            .arg("--raw-out")
            .arg(&parquet),
    );
    let line = next_line(&stderr(&o), "kfdo profile");
    let command = line
        .split(" (or ")
        .next()
        .unwrap_or_else(|| panic!("{line}"));
    let profile = dir.path().join("lz.afdo");
    assert_eq!(
        command,
        format!(
            "kfdo profile --binary {} --from-raw {} -o {}",
            bin.display(),
            parquet.display(),
            profile.display()
        )
    );
    run_kfdo_line(command, dir.path());
    assert!(profile.is_file());
}

/// A binary GCC built: `kfdo record` names a gcov profile, `kfdo profile` writes GCC's
/// format for the GCC release in the binary's DWARF producer without being told, and
/// names that gcc, which then reads the profile (an LLVM profile it refuses: "AutoFDO
/// profile magic number does not match").
#[test]
fn a_gcc_binary_gets_a_gcov_profile_and_the_gcc_that_built_it() {
    if !kfdo_testkit::require_tools(&["gcc-12", "qemu-x86_64"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("lz");
    run_ok(
        Command::new("gcc-12")
            .args(["-O2", "-g", "-o"])
            .arg(&bin)
            .arg(program_source("lz.c")),
    );
    let data = dir.path().join("lz.data");
    let rec = run_ok(
        kfdo()
            .args(["record", "--method", "emulated", "-c", "211", "-o"])
            .arg(&data)
            .arg("--")
            .arg(&bin)
            .arg("20000"),
    );
    let line = next_line(&stderr(&rec), "kfdo record");
    let profile = dir.path().join("lz.gcov");
    assert_eq!(
        line,
        format!(
            "kfdo profile --binary {} --perf-data {} -o {}",
            bin.display(),
            data.display(),
            profile.display()
        )
    );
    let out = run_kfdo_line(&line, dir.path());
    let next = next_line(&stderr(&out), "kfdo profile");
    assert_eq!(next, format!("gcc-12 -fauto-profile={}", profile.display()));
    let version = kfdo_afdo::GcovVersion::for_gcc(12).unwrap();
    kfdo_afdo::gcov::read_gcov(&profile, Some(version))
        .unwrap_or_else(|e| panic!("not a gcov profile for GCC 12: {e}"));
    let mut words = next.split_whitespace();
    let built = run_ok(
        Command::new(words.next().unwrap())
            .args(["-O2", "-g"])
            .args(words)
            .arg(program_source("lz.c"))
            .arg("-o")
            .arg(dir.path().join("lz.fdo")),
    );
    let said = String::from_utf8_lossy(&built.stderr);
    assert!(said.trim().is_empty(), "gcc-12 said:\n{said}");
    // An explicit --format still wins.
    let afdo = dir.path().join("lz.afdo");
    let o = run_ok(
        kfdo()
            .args(["profile", "--format", "extbinary", "--binary"])
            .arg(&bin)
            .arg("--perf-data")
            .arg(&data)
            .arg("-o")
            .arg(&afdo),
    );
    assert_eq!(
        next_line(&stderr(&o), "kfdo profile"),
        format!("clang -fprofile-sample-use={}", afdo.display())
    );
}
