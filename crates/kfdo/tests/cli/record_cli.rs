//! `kfdo record` and `kfdo capabilities` from the command line: pass-through of the
//! program's status, and the bad cases (missing or failing command, a crash under
//! emulation, Ctrl-C, a full disk): a clear error, and a perf.data that is complete and
//! valid, or absent.

use crate::common::Clang;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn kfdo() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kfdo"))
}

fn build(dir: &Path, name: &str, src: &str) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let out = dir.join(name);
    Clang::new().flags(["-O1", "-g"]).out(&out).input(&c).run();
    out
}

/// perf itself accepts the file and it holds samples with branch stacks.
fn assert_valid_perf_data(p: &Path) -> usize {
    let o = Command::new("perf")
        .args(["script", "-F", "ip,brstack", "-i"])
        .arg(p)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "perf script failed on {}: {}",
        p.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    text.lines().filter(|l| l.contains("/0x")).count()
}

const LOOP_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000, s = 0;
  for (long i = 0; i < n; i++) s += (i % 3) ? i : -i;
  printf("sum %ld\n", s);
  if (argc > 2 && strcmp(argv[2], "crash") == 0) { volatile int *p = 0; *p = 1; }
  return argc > 2 ? atoi(argv[2]) : 0;
}
"#;

#[test]
fn passes_exit_status_and_output_through() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "loop", LOOP_C);
    let data = dir.path().join("perf.data");
    let o = kfdo()
        .args(["record", "-q", "--method", "emulated", "-c", "101", "-o"])
        .arg(&data)
        .arg("--")
        .arg(&exe)
        .args(["100000", "5"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let native = Command::new(&exe).args(["100000", "5"]).output().unwrap();
    assert_eq!(o.stdout, native.stdout);
    assert!(assert_valid_perf_data(&data) > 100);
}

#[test]
fn missing_command_is_a_clear_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("perf.data");
    let o = kfdo()
        .args(["record", "--method", "emulated", "-o"])
        .arg(&data)
        .args(["--", "kfdo-no-such-command"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("kfdo-no-such-command: command not found"),
        "{err}"
    );
    assert!(!data.exists());
    let o = kfdo()
        .args(["record", "--method", "emulated", "-o"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("no command to record"));
    // Not an x86-64 program.
    let txt = dir.path().join("notes.txt");
    std::fs::write(&txt, "hello").unwrap();
    let mut perm = std::fs::metadata(&txt).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&txt, perm).unwrap();
    let o = kfdo()
        .args(["record", "--method", "emulated", "-o"])
        .arg(&data)
        .arg("--")
        .arg(&txt)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not an ELF program"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!data.exists());
}

#[test]
fn missing_output_directory_is_named_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir");
    let o = kfdo()
        .args(["record", "--method", "emulated", "-o"])
        .arg(missing.join("perf.data"))
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "the directory {} does not exist: create it",
            missing.display()
        )),
        "{err}"
    );
    assert!(!missing.exists());
}

#[test]
fn failing_command_keeps_its_status_and_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("perf.data");
    let o = kfdo()
        .args(["record", "-q", "--method", "emulated", "-c", "101", "-o"])
        .arg(&data)
        .args(["--", "false"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(assert_valid_perf_data(&data) > 0);
}

#[test]
fn crash_under_emulation_passes_the_signal_and_keeps_a_valid_profile() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "loop", LOOP_C);
    let data = dir.path().join("perf.data");
    let o = kfdo()
        .args(["record", "--method", "emulated", "-c", "101", "-o"])
        .arg(&data)
        .arg("--")
        .arg(&exe)
        .args(["100000", "crash"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(128 + 11));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("signal 11"), "{err}");
    assert!(assert_valid_perf_data(&data) > 100);
}

#[test]
fn ctrl_c_leaves_a_complete_profile() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "loop", LOOP_C);
    let data = dir.path().join("perf.data");
    // As a terminal does: SIGINT to the whole foreground process group.
    use std::os::unix::process::CommandExt;
    let child = kfdo()
        .args(["record", "--method", "emulated", "-c", "10007", "-o"])
        .arg(&data)
        .arg("--")
        .arg(&exe)
        .arg("100000000000")
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(assert_valid_perf_data(&data) > 10);
}

#[test]
fn full_disk_is_an_error_and_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "loop", LOOP_C);
    let data = dir.path().join("perf.data");
    // A 3 MiB file-size limit (EFBIG, as ENOSPC would fail a write): the plugin fits, the
    // capture of a period-1 run does not.
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f 3072; exec {} record --method emulated -c 1 -o {} -- {} 200000",
            env!("CARGO_BIN_EXE_kfdo"),
            data.display(),
            exe.display()
        ))
        .env("TMPDIR", dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("disk full"), "{err}");
    assert!(!data.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .filter(|n| {
            n.to_string_lossy().starts_with(".kfdo-tmp")
                || n.to_string_lossy().starts_with("kfdo-vlbr")
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn capabilities_explain_this_machine() {
    let o = kfdo().args(["capabilities", "--json"]).output().unwrap();
    assert!(o.status.success());
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The document as it has always printed: these keys, sorted at every level
    // (printing the parsed document again gives the same text).
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(
        text.trim_end(),
        serde_json::to_string_pretty(&j).unwrap(),
        "{text}"
    );
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(&j),
        ["auto", "auto_steps", "kvm", "llvm", "machine", "methods"]
    );
    assert_eq!(keys(&j["kvm"]), ["probe", "why_not", "works"]);
    assert_eq!(keys(&j["llvm"]), ["default", "installed", "known"]);
    assert_eq!(keys(&j["methods"][0]), ["available", "method", "why_not"]);
    let methods = j["methods"].as_array().unwrap();
    for m in methods {
        if m["available"] == false {
            assert!(m["why_not"].as_str().is_some_and(|s| !s.is_empty()), "{m}");
        }
    }
    assert!(!j["auto_steps"].as_array().unwrap().is_empty());
    // KVM: probed, and a machine without /dev/kvm (this project's) says so.
    let kvm = &j["kvm"];
    assert_eq!(kvm["works"], kvm["why_not"].is_null(), "{kvm}");
    if !std::path::Path::new("/dev/kvm").exists() {
        assert_eq!(kvm["probe"]["status"], "absent", "{kvm}");
        assert!(
            kvm["why_not"].as_str().unwrap().starts_with("no /dev/kvm"),
            "{kvm}"
        );
    } else if std::path::Path::new("/sys/module/kvm_pvm").exists() {
        // This project's machines: a paravirtual nested KVM, which cannot run a
        // standard kernel.
        assert_eq!(kvm["probe"]["status"], "broken", "{kvm}");
        assert!(
            kvm["why_not"].as_str().unwrap().contains("kvm_pvm"),
            "{kvm}"
        );
    }
    let text = String::from_utf8(kfdo().arg("capabilities").output().unwrap().stdout).unwrap();
    assert!(
        text.contains("kfdo record --method auto would use:"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("kernels under KVM: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        line.starts_with("kernels under KVM: yes"),
        kvm["works"] == true,
        "{line}"
    );
}
