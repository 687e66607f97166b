//! The kernel recipe's workload suite (`recipes/linux/workload`), built with clang-19 and
//! with gcc and run natively on this machine (not as PID 1: the list comes from
//! KFDO_RUN, nothing is mounted, nothing powers off) by its own `test-native.sh`: every
//! workload's result line with the size asked, the final `done`, a FAILED line and exit 1
//! for a bad name or size, and a build free of warnings. The same binary is the guest's
//! /init in `kfdo optimize recipes/linux`.

use std::path::Path;
use std::process::Command;

#[test]
fn the_workload_suite_runs_and_reports_with_both_compilers() {
    if !kfdo_testkit::require_tools(&["clang-19", "gcc", "timeout"]) {
        return;
    }
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../recipes/linux/workload/test-native.sh");
    let out = Command::new("bash")
        .arg(&script)
        .args(["clang-19", "gcc"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{}:\n{stdout}\n{stderr}",
        script.display()
    );
    for cc in ["clang-19", "gcc"] {
        assert!(
            stdout.contains(&format!("test-native: {cc}: ok")),
            "no verdict for {cc}:\n{stdout}"
        );
    }
    assert!(
        stdout.contains("kfdo-workload: tcp_rr ops=2000 "),
        "{stdout}"
    );
}
