//! `kfdo collect` on its own, without a store: the spool's size cap, copies of one
//! binary, a collector killed mid-window, one that cannot record, and the shipped
//! systemd unit. The loop with a
//! store and both mergers is `fleet_loop`.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::collect::{can_sample_the_machine, events, num, own_build_id, status, Workload};
use common::{build, kfdo, ok, repo_root, run_ok};

/// An emptied folder `name` of the test target's and, in it, lz with a build-id of its
/// own (`define`): other tests' lz may run while the collector records the machine.
fn lz_of_its_own(name: &str, define: &'static str) -> (PathBuf, PathBuf) {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let lz = build("lz.c", &root, &own_build_id(define));
    (root, lz)
}

#[test]
fn a_full_spool_drops_its_oldest_files_first() {
    let Some(_one_at_a_time) = common::heavy_test("kfdo collect with a small spool") else {
        return;
    };
    if !can_sample_the_machine(&["clang-19", "perf"]) {
        return;
    }
    let (root, lz) = lz_of_its_own("collect_full", "-DKFDO_TEST_BINARY=collect_full");
    let spool = root.join("spool");
    let _work = Workload::start(&lz, "1000000");
    run_ok(
        kfdo()
            .args(["collect", "run", "--spool"])
            .arg(&spool)
            .args(["--host", "small", "--program", "lz", "--method", "ip"])
            .args(["--window", "1s", "--every", "1s", "--windows", "5"])
            .args(["--max-cpu", "400", "--spool-max", "8K"]),
    );
    let s = status(&spool);
    assert!(num(&s, "files.dropped_spool_full") >= 1, "{}", events(&s));
    assert!(num(&s, "files.waiting_bytes") <= 8192, "{s}");
    assert_eq!(
        num(&s, "files.waiting") + num(&s, "files.dropped_spool_full"),
        num(&s, "files.spooled")
    );
    // The newest windows are the ones kept.
    let mut kept: Vec<String> = std::fs::read_dir(spool.join("ready"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    let newest = format!("{:08}", num(&s, "next_seq") - 1);
    assert!(kept.last().unwrap().starts_with(&newest), "{kept:?}");
    assert!(events(&s).contains("spool full"), "{}", events(&s));
    let text =
        String::from_utf8(run_ok(kfdo().args(["collect", "status", "--spool"]).arg(&spool)).stdout)
            .unwrap();
    assert!(text.contains("spool full"), "{text}");
}

/// Two copies of one binary (one build-id, two paths) running in the same window: the
/// window's file is named by the build-id, so the copies make one file, not two
/// writers of one name (which stopped the collector).
#[test]
fn copies_of_one_binary_at_two_paths_make_one_file_per_window() {
    let Some(_one_at_a_time) = common::heavy_test("kfdo collect with two copies of lz") else {
        return;
    };
    if !can_sample_the_machine(&["clang-19", "perf"]) {
        return;
    }
    let (root, lz) = lz_of_its_own("collect_copies", "-DKFDO_TEST_BINARY=collect_copies");
    let copies: Vec<_> = ["a", "b"]
        .iter()
        .map(|d| {
            let dir = root.join(d);
            std::fs::create_dir_all(&dir).unwrap();
            let copy = dir.join("lz");
            std::fs::copy(&lz, &copy).unwrap();
            copy
        })
        .collect();
    let spool = root.join("spool");
    let _a = Workload::start(&copies[0], "1000000");
    let _b = Workload::start(&copies[1], "1000000");
    // The copies by path: other tests run binaries named lz at the same time.
    run_ok(
        kfdo()
            .args(["collect", "run", "--spool"])
            .arg(&spool)
            .arg("--program")
            .arg(&copies[0])
            .arg("--program")
            .arg(&copies[1])
            .args(["--host", "twins", "--method", "ip"])
            .args(["--window", "1s", "--every", "1s", "--windows", "3"])
            .args(["--max-cpu", "400"]),
    );
    let s = status(&spool);
    let id = common::build_id_hex(&lz);
    let kept: Vec<String> = std::fs::read_dir(spool.join("ready"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!kept.is_empty(), "{}", events(&s));
    assert!(
        kept.iter().all(|k| k.contains(&id)),
        "{kept:?} (lz is {id})"
    );
    let mut windows: Vec<&str> = kept.iter().map(|k| &k[..8]).collect();
    windows.dedup();
    assert_eq!(
        windows.len(),
        kept.len(),
        "two files of one window: {kept:?}"
    );
    assert_eq!(num(&s, "files.spooled"), kept.len() as u64);
    assert_eq!(num(&s, "windows.failed"), 0, "{}", events(&s));
}

/// The shipped systemd unit: systemd accepts it, and its command line, with the example
/// environment file's values, is one `kfdo collect run` takes (run for zero windows on
/// an empty spool: it checks every option and stops).
#[test]
fn the_shipped_systemd_unit_runs_a_valid_collect_command() {
    if !kfdo_testkit::require_tools(&["systemd-analyze"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let unit_text =
        std::fs::read_to_string(repo_root().join("contrib/systemd/kfdo-collect.service")).unwrap();
    let env_text =
        std::fs::read_to_string(repo_root().join("contrib/systemd/kfdo-collect.env")).unwrap();
    let env: Vec<(String, String)> = env_text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect();
    // systemd's own check, with this build's kfdo and the example environment file.
    let env_file = dir.path().join("collect.env");
    std::fs::write(&env_file, &env_text).unwrap();
    let unit = dir.path().join("kfdo-collect.service");
    std::fs::write(
        &unit,
        unit_text
            .replace("/usr/local/bin/kfdo", env!("CARGO_BIN_EXE_kfdo"))
            .replace("/etc/kfdo/collect.env", env_file.to_str().unwrap()),
    )
    .unwrap();
    let verify = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit)
        .output()
        .unwrap();
    assert!(
        verify.status.success() && verify.stderr.is_empty(),
        "systemd-analyze verify: {}",
        String::from_utf8_lossy(&verify.stderr)
    );
    // ExecStart, continuation lines joined, ${VAR}s from the environment file.
    let joined = unit_text.replace("\\\n", " ");
    let exec = joined
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("the unit has an ExecStart");
    let mut words: Vec<String> = exec
        .split_whitespace()
        .map(|w| {
            env.iter().fold(w.to_string(), |w, (k, v)| {
                w.replace(&format!("${{{k}}}"), v)
            })
        })
        .collect();
    assert!(words.iter().all(|w| !w.contains("${")), "{words:?}");
    assert_eq!(words[0], "/usr/local/bin/kfdo");
    let spool_at = words.iter().position(|w| w == "--spool").unwrap() + 1;
    let spool = dir.path().join("spool");
    words[spool_at] = spool.display().to_string();
    let out = kfdo()
        .args(&words[1..])
        .args(["--windows", "0", "--drain-timeout", "1s"])
        .envs(env.iter().filter(|(k, _)| k.starts_with("AWS_")).cloned())
        .output()
        .unwrap();
    ok(out, "the unit's kfdo collect command");
    let s = status(&spool);
    assert_eq!(s["upload"], "s3://my-bucket/fleet/raw/", "{s}");
    assert_eq!(s["host_class"], "web");
    assert_eq!(s["state"], "stopped");
    assert_eq!(s["cost"]["max_cpu_percent"].as_f64(), Some(2.0));
}

/// SIGKILL in the middle of a window: nothing half-written reaches `ready/`, perf goes
/// with the collector, and the next start clears the leftovers and goes on with the next
/// window number.
#[test]
fn a_killed_collector_loses_only_the_window_it_was_recording() {
    if !can_sample_the_machine(&["perf"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let log = dir.path().join("collect.log");
    let mut child = kfdo()
        .args(["collect", "run", "--spool"])
        .arg(&spool)
        .args([
            "--host", "k", "--method", "ip", "--window", "20s", "--every", "30s",
        ])
        .args(["--max-cpu", "400"])
        .stderr(Stdio::from(std::fs::File::create(&log).unwrap()))
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !status(&spool)["state"]
        .as_str()
        .is_some_and(|s| s.starts_with("recording"))
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "never started recording"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap();
    child.wait().unwrap();
    // perf was told to end with its parent (a parent-death signal).
    let perf_gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        !perf_writes_into(&spool)
    });
    assert!(perf_gone, "perf outlived the collector");
    assert_eq!(std::fs::read_dir(spool.join("ready")).unwrap().count(), 0);
    let out = kfdo()
        .args(["collect", "run", "--spool"])
        .arg(&spool)
        .args([
            "--host", "k", "--method", "ip", "--window", "1s", "--every", "1s",
        ])
        .args(["--windows", "1", "--max-cpu", "400", "--min-samples", "1"])
        .output()
        .unwrap();
    ok(out, "the collector started again");
    let s = status(&spool);
    assert_eq!(
        num(&s, "next_seq"),
        2,
        "the killed window's number is not reused"
    );
    assert_eq!(num(&s, "windows.recorded"), 1);
    let leftovers: Vec<_> = std::fs::read_dir(spool.join("work")).unwrap().collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Whether a perf process is writing into this spool.
fn perf_writes_into(spool: &Path) -> bool {
    let needle = spool.join("work").display().to_string();
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| String::from_utf8_lossy(&c).contains(&needle))
            .unwrap_or(false)
    })
}

/// A collector whose first window cannot be recorded (here: a cgroup that does not
/// exist) stops with perf's own words and a non-zero exit, instead of retrying forever
/// in silence; nothing is spooled.
#[test]
fn a_collector_that_cannot_record_says_why_and_stops() {
    if !kfdo_testkit::require_tools(&["perf"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let out = kfdo()
        .args(["collect", "run", "--spool"])
        .arg(&spool)
        .args([
            "--host",
            "c",
            "--method",
            "ip",
            "--cgroup",
            "kfdo-no-such-cgroup",
        ])
        .args(["--window", "1s", "--every", "1s", "--windows", "2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("--cgroup=kfdo-no-such-cgroup") && err.contains("kfdo-no-such-cgroup"),
        "{err}"
    );
    let s = status(&spool);
    assert_eq!(
        s["state"], "stopped: the first window could not be recorded",
        "{s}"
    );
    assert_eq!(num(&s, "windows.failed"), 1);
    assert_eq!(std::fs::read_dir(spool.join("ready")).unwrap().count(), 0);
}

/// A `--spool` that is a file is refused with the fix, and the file is left as it was.
#[test]
fn a_spool_that_is_a_file_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, b"mine\n").unwrap();
    let out = kfdo()
        .args(["collect", "run", "--spool"])
        .arg(&file)
        .args(["--host", "h", "--method", "ip", "--windows", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "--spool {}: is a file, not a folder",
            file.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"mine\n");
}
