//! No command writes over one of its own inputs: each refuses before doing any work,
//! names both paths and the fix, exits 1, and leaves the input as it was.

use crate::common::*;
use std::path::Path;
use std::process::Command;

fn fixture() -> &'static LzRecording {
    lz()
}

/// Runs `cmd`, expecting the refusal: exit 1, the output and the input named as the
/// command line spells them, the fix, and the input file byte for byte as it was.
fn refuses(cmd: &mut Command, output: &Path, input: &Path) -> String {
    refuses_named(cmd, output, input, input)
}

fn refuses_named(cmd: &mut Command, output: &Path, input: &Path, input_file: &Path) -> String {
    let before = std::fs::read(input_file).unwrap();
    let o = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{cmd:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(&output.display().to_string())
            && stderr.contains(&input.display().to_string()),
        "names both paths: {stderr}"
    );
    assert!(stderr.contains("choose another"), "says the fix: {stderr}");
    assert_eq!(
        std::fs::read(input_file).unwrap(),
        before,
        "{} was changed",
        input_file.display()
    );
    stderr
}

#[test]
fn profile_refuses_to_write_over_its_recording() {
    let f = fixture();
    let e = refuses(
        kfdo()
            .arg("profile")
            .arg("--binary")
            .arg(&f.bin)
            .arg("--perf-data")
            .arg(&f.data)
            .arg("-o")
            .arg(&f.data),
        &f.data,
        &f.data,
    );
    assert!(e.contains("choose another -o"), "{e}");
}

#[test]
fn profile_refuses_a_hard_link_or_another_spelling_of_its_binary() {
    let f = fixture();
    let link = f.dir.join("lz-hard-link");
    let _ = std::fs::remove_file(&link);
    std::fs::hard_link(&f.bin, &link).unwrap();
    refuses(
        kfdo()
            .arg("profile")
            .arg("--binary")
            .arg(&f.bin)
            .arg("--perf-data")
            .arg(&f.data)
            .arg("-o")
            .arg(&link),
        &link,
        &f.bin,
    );
    // `./lz` from lz's directory is lz.
    refuses_named(
        kfdo()
            .current_dir(&f.dir)
            .args(["profile", "--binary", "lz", "--perf-data"])
            .arg(&f.data)
            .args(["--raw-out", "./lz"]),
        Path::new("./lz"),
        Path::new("lz"),
        &f.bin,
    );
}

#[test]
fn record_refuses_to_write_over_the_program_it_records() {
    let dir = tempfile::tempdir().unwrap();
    let bin = build("lz.c", dir.path(), &[]);
    refuses_named(
        kfdo().current_dir(dir.path()).args([
            "record", "--method", "emulated", "-o", "lz", "--", "./lz", "1000",
        ]),
        Path::new("lz"),
        Path::new("./lz"),
        &bin,
    );
    assert!(!dir.path().join("lz.data").exists());
}

#[test]
fn record_refuses_counters_over_an_argument_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.txt");
    std::fs::write(&input, "the program's input\n").unwrap();
    let perf_data = dir.path().join("perf.data");
    let e = refuses(
        kfdo()
            .args(["record", "--method", "emulated", "-o"])
            .arg(&perf_data)
            .arg("--counters-out")
            .arg(&input)
            .args(["--", "cat"])
            .arg(&input),
        &input,
        &input,
    );
    assert!(e.contains("choose another --counters-out"), "{e}");
    assert!(!perf_data.exists(), "nothing is recorded");
}

#[test]
fn merge_refuses_to_write_over_a_profile_it_merges() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.prof");
    let b = dir.path().join("b.prof");
    profile_perf_data(&f.bin, &f.data, &a, "text");
    profile_perf_data(&f.bin, &f.data, &b, "extbinary");
    refuses(
        kfdo()
            .arg("merge")
            .arg(&a)
            .arg("--weight")
            .arg(format!("3:{}", b.display()))
            .arg("-o")
            .arg(&b),
        &b,
        &b,
    );
    refuses(
        kfdo().arg("merge").arg(&a).arg(&b).arg("-o").arg(&a),
        &a,
        &a,
    );
}

#[test]
fn heatmap_and_report_refuse_to_write_over_their_inputs() {
    let f = fixture();
    refuses(
        kfdo()
            .arg("heatmap")
            .arg("--binary")
            .arg(&f.bin)
            .arg(&f.data)
            .arg("-o")
            .arg(&f.data),
        &f.data,
        &f.data,
    );
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("kfdo-bench.db");
    std::fs::write(&store, b"not really a store, never read").unwrap();
    refuses(
        kfdo()
            .arg("report")
            .arg("--store")
            .arg(&store)
            .arg("-o")
            .arg(dir.path())
            .arg("--json-out")
            .arg(&store),
        &store,
        &store,
    );
}

/// Runs `cmd` (whose workload sleeps 30 s) expecting it to fail at once, before the
/// workload: within 10 s, exit 1, stderr naming `path`. Returns stderr.
fn fails_before_the_workload(cmd: &mut Command, path: &Path) -> String {
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{cmd:?} still running after 10 s: the workload ran before the output was checked"
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&path.display().to_string()),
        "names {}: {stderr}",
        path.display()
    );
    stderr
}

#[test]
fn record_checks_its_output_before_running_the_workload() {
    let dir = tempfile::tempdir().unwrap();
    let e = fails_before_the_workload(
        kfdo()
            .args(["record", "--method", "emulated", "-o"])
            .arg(dir.path())
            .args(["--", "sleep", "30"]),
        dir.path(),
    );
    assert!(e.contains("it is a directory"), "{e}");
    let missing = dir.path().join("no-such-dir/perf.data");
    let e = fails_before_the_workload(
        kfdo()
            .args(["record", "--method", "emulated", "-o"])
            .arg(&missing)
            .args(["--", "sleep", "30"]),
        &missing,
    );
    assert!(e.contains("does not exist"), "{e}");
    let counters = dir.path().join("no-such-dir/counters.json");
    fails_before_the_workload(
        kfdo()
            .args(["record", "--method", "emulated", "-o"])
            .arg(dir.path().join("perf.data"))
            .arg("--counters-out")
            .arg(&counters)
            .args(["--", "sleep", "30"]),
        &counters,
    );
}

#[test]
fn compare_checks_its_json_out_before_running_the_commands() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("no-such-dir/verdict.json");
    let e = fails_before_the_workload(
        kfdo()
            .args([
                "compare",
                "--counters",
                "none",
                "--runs",
                "1",
                "--warmup",
                "0",
                "--store",
            ])
            .arg(dir.path().join("bench.db"))
            .arg("--json-out")
            .arg(&json)
            .args(["--", "sleep 30", "sleep 31"]),
        &json,
    );
    assert!(e.contains("does not exist"), "{e}");
}
