//! Helpers of the tests that run `kfdo collect`: a workload to sample and a build-id
//! of its own, the status file read as JSON, and whether perf may record the whole machine here.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Runs `bin ARG` over and over until dropped: one host's workload.
pub struct Workload {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl Workload {
    pub fn start(bin: &Path, arg: &str) -> Workload {
        let stop = Arc::new(AtomicBool::new(false));
        let (flag, bin, arg) = (stop.clone(), bin.to_path_buf(), arg.to_string());
        let thread = std::thread::spawn(move || {
            let mut runs = 0;
            while !flag.load(Ordering::Relaxed) {
                let out = Command::new(&bin).arg(&arg).output().unwrap();
                assert!(out.status.success(), "{} {arg} failed", bin.display());
                runs += 1;
            }
            runs
        });
        Workload {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Flags that give a test's build of a program a build-id of its own, with `define`
/// (`-DNAME=VALUE`, used by no code): recorded in the debug info, it changes the bytes.
/// Without it every test's lz is the same binary, and a collector, which records the
/// whole machine, takes another test's lz running at the same time for its own.
pub fn own_build_id(define: &'static str) -> [&'static str; 2] {
    ["-grecord-command-line", define]
}

pub fn status(spool: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(spool.join("status.json")).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
}

pub fn num(v: &serde_json::Value, path: &str) -> u64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_u64()
        .unwrap_or_else(|| panic!("no number at {path} in {v}"))
}

pub fn events(v: &serde_json::Value) -> String {
    v["events"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| e["what"].as_str().unwrap_or("").to_string())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Are `tools` and a perf that may record the whole machine here? (Says why not, as
/// [`kfdo_testkit::require`] does, when not.)
pub fn can_sample_the_machine(tools: &[&str]) -> bool {
    kfdo_testkit::require_tools(tools)
        && kfdo_testkit::require(
            perf_can_record_the_machine(),
            "perf cannot record the whole machine (perf record -a)",
            "run the tests as root, or sysctl kernel.perf_event_paranoid=0",
        )
}

fn perf_can_record_the_machine() -> bool {
    let dir = tempfile::tempdir().unwrap();
    Command::new("perf")
        .args(["record", "-e", "cpu-clock", "-a", "-N", "-o"])
        .arg(dir.path().join("p.data"))
        .args(["--", "true"])
        .output()
        .is_ok_and(|o| o.status.success())
}
