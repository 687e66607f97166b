//! The one place that decides what a kfdo test does when something it needs is missing
//! (a reference tool such as clang-19, llvm-profgen-19, qemu or perf; a cached kernel;
//! a network fetch).
//!
//! On a developer's machine such a test says `skipped: ... (fix)` on stderr and returns,
//! so the rest of the suite still runs. Where tests must run, it fails instead, naming
//! what is missing and how to get it: in CI (`CI=true`) and whenever
//! `KFDO_REQUIRE_TOOLS=1` is set (`scripts/test.sh` sets it). A test can then never pass
//! without having run.
//!
//! Cargo hides a passing test's stderr, so each skip is also appended to the file named
//! by `KFDO_SKIP_LOG` (one line: the test binary and name, a tab, the reason), which
//! `scripts/test.sh` prints at the end of the run. A quick run (`KFDO_QUICK=1`, set by
//! `scripts/test.sh --quick`) leaves out the long tests ([`long_test`], the test kernels)
//! the same way, so its summary lists them.
//!
//! ```no_run
//! if !kfdo_testkit::require_tools(&["clang-19", "llvm-profgen-19"]) {
//!     return;
//! }
//! ```
//!
//! [`layering`] is the crate-internal layer check every kfdo crate runs as a test;
//! [`seaweedfs`] starts a real S3 store for a test; [`kernel`] finds, or builds, the
//! kernels the tests boot.

pub mod kernel;
pub mod layering;
pub mod seaweedfs;

pub use kernel::kernel_recipe_out;

use std::borrow::Borrow;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// How to install what the tests use.
pub const INSTALL_HINT: &str = "bash scripts/install-deps.sh installs it";

/// Whether a missing tool or precondition fails the test: `CI=true` (or `1`) or
/// `KFDO_REQUIRE_TOOLS=1`.
pub fn required() -> bool {
    required_by(|k| std::env::var(k).ok())
}

/// [`required`] over an environment given as a lookup (testable without touching the
/// process's environment, which tests share).
pub fn required_by(env: impl Fn(&str) -> Option<String>) -> bool {
    let ci = env("CI").is_some_and(|v| v == "true" || v == "1");
    let asked = env("KFDO_REQUIRE_TOOLS").is_some_and(|v| v == "1");
    ci || asked
}

/// `name` on PATH, if it runs (`name --version` succeeds).
pub fn tool(name: &str) -> Option<PathBuf> {
    let ok = Command::new(name)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| PathBuf::from(name))
}

/// Whether this is a quick run that leaves out the long tests: `KFDO_QUICK=1`.
pub fn quick() -> bool {
    std::env::var("KFDO_QUICK").is_ok_and(|v| v == "1")
}

/// For a test that takes the machine for many minutes (`what`: what it builds or runs):
/// true, except in a quick run ([`quick`]), where the test is left out (reported as a
/// skip) and the caller returns.
pub fn long_test(what: &str) -> bool {
    if !quick() {
        return true;
    }
    skip(&format!(
        "left out of the quick run: {what} (KFDO_QUICK=1; bash scripts/test.sh runs it)"
    ));
    false
}

/// The file each skip is appended to (`KFDO_SKIP_LOG`), if the runner asked for one.
pub fn skip_log() -> Option<PathBuf> {
    std::env::var_os("KFDO_SKIP_LOG")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
}

/// Says on stderr that the current test is skipped and why, and adds it to the skip log.
fn skip(why: &str) {
    skip_to(why, skip_log().as_deref());
}

fn skip_to(why: &str, log: Option<&Path>) {
    eprintln!("skipped: {why}");
    if let Some(log) = log {
        if let Err(e) = append_skip(log, &current_test(), why) {
            // A skip the summary would not show is a silent one: fail instead.
            panic!(
                "cannot add this skip to {} (KFDO_SKIP_LOG): {e}; skipped because: {why}",
                log.display()
            );
        }
    }
}

/// One line per skip, written at once (O_APPEND, see [`append_line`]).
fn append_skip(log: &Path, test: &str, why: &str) -> std::io::Result<()> {
    append_line(
        log,
        &format!("{test}\t{}\n", why.replace(['\n', '\t'], " ")),
    )
}

/// Appends `line` in one write to a file opened with O_APPEND, so tests running at the
/// same time in several processes do not interleave their lines.
fn append_line(log: &Path, line: &str) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?
        .write_all(line.as_bytes())
}

/// `BINARY::TEST` of the test running on this thread: libtest names each test's thread
/// after the test; the binary's name loses cargo's `-HASH` suffix.
fn current_test() -> String {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| match s.rsplit_once('-') {
            Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
            _ => s,
        })
        .unwrap_or_default();
    let thread = std::thread::current();
    format!("{binary}::{}", thread.name().unwrap_or("?"))
}

/// Times a long test: made at its start, it appends a line (`BINARY::TEST`, a tab, the
/// seconds) to the file named by `KFDO_TEST_TIMES` when dropped at the test's end, passed
/// or failed. Long tests share one test binary with many short ones, so the time of the
/// binary alone would not say which took the time; `scripts/test.sh` prints these.
pub struct TestTimer {
    start: std::time::Instant,
    test: String,
    log: Option<PathBuf>,
}

/// A [`TestTimer`] for the test running on this thread.
pub fn time_this_test() -> TestTimer {
    timer_to(
        std::env::var_os("KFDO_TEST_TIMES")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from),
    )
}

fn timer_to(log: Option<PathBuf>) -> TestTimer {
    TestTimer {
        start: std::time::Instant::now(),
        test: current_test(),
        log,
    }
}

impl Drop for TestTimer {
    fn drop(&mut self) {
        let Some(log) = &self.log else {
            return;
        };
        let line = format!("{}\t{:.1}\n", self.test, self.start.elapsed().as_secs_f64());
        if let Err(e) = append_line(log, &line) {
            // No panic here: this may run while the test is already unwinding.
            eprintln!("cannot add {}'s time to {}: {e}", self.test, log.display());
        }
    }
}

/// The decision for one unmet need: `Ok(())` to skip (the skip was reported), or the
/// failure message when tests must run.
fn unmet(what: &str, fix: &str, must_run: bool) -> Result<(), String> {
    unmet_to(what, fix, must_run, skip_log().as_deref())
}

fn unmet_to(what: &str, fix: &str, must_run: bool, log: Option<&Path>) -> Result<(), String> {
    let msg = format!("{what} ({fix})");
    if must_run {
        Err(format!(
            "{msg}; this test must run here (CI=true or KFDO_REQUIRE_TOOLS=1), so it fails \
             instead of skipping"
        ))
    } else {
        skip_to(&msg, log);
        Ok(())
    }
}

/// True when `ok`. Otherwise: fails the test (tests must run here) or prints why it is
/// skipped and returns false, so the caller returns.
pub fn require(ok: bool, what: &str, fix: &str) -> bool {
    if ok {
        return true;
    }
    if let Err(e) = unmet(what, fix, required()) {
        panic!("{e}");
    }
    false
}

/// True when every tool runs; see [`require`].
pub fn require_tools(names: &[&str]) -> bool {
    names.iter().all(|n| {
        require(
            tool(n).is_some(),
            &format!("{n} is not installed"),
            INSTALL_HINT,
        )
    })
}

/// The LLVM releases a test that compares kfdo with LLVM's own tools runs against:
/// every release kfdo is tested with ([`kfdo_toolchain::Llvm::KNOWN`]) whose `tools`
/// (names without the version: `"clang"`, `"llvm-profgen"`) are installed. A release
/// without them is a skip, or a failure where tests must run ([`require_tools`]).
/// `KFDO_TEST_LLVM=22` narrows a run to one release.
pub fn llvm_releases(tools: &[&str]) -> Vec<kfdo_toolchain::Llvm> {
    let only = std::env::var("KFDO_TEST_LLVM")
        .ok()
        .and_then(|v| kfdo_toolchain::Llvm::parse(&v).ok());
    kfdo_toolchain::Llvm::KNOWN
        .into_iter()
        .filter(|l| only.is_none_or(|o| o == *l))
        .filter(|l| {
            let names: Vec<String> = tools.iter().map(|t| l.tool(t)).collect();
            require_tools(&names.iter().map(String::as_str).collect::<Vec<_>>())
        })
        .collect()
}

/// `out` (a finished command's output, or a reference to one), if the command succeeded;
/// otherwise the test fails, naming `what` and showing the exit status, stdout and
/// stderr. The one "run, then assert success" check of the kfdo tests.
pub fn ok<O: Borrow<Output>>(out: O, what: &str) -> O {
    if let Err(e) = success(out.borrow(), what) {
        panic!("{e}");
    }
    out
}

/// Runs `cmd` and returns its output; the test fails (see [`ok`]) if it cannot start or
/// does not succeed.
pub fn run_ok(cmd: &mut Command) -> Output {
    let what = format!("{cmd:?}");
    run_named(cmd, &what)
}

/// The stdout, as text, of `cmd` run as [`run_ok`] does, naming it `what` if it fails.
pub fn run_stdout(cmd: &mut Command, what: &str) -> String {
    String::from_utf8_lossy(&run_named(cmd, what).stdout).into_owned()
}

fn run_named(cmd: &mut Command, what: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    ok(out, what)
}

fn success(out: &Output, what: &str) -> Result<(), String> {
    if out.status.success() {
        return Ok(());
    }
    // stderr first: the error is there, and a reader of a cut log sees the start.
    Err(format!(
        "{what} failed ({}):\n--- stderr:\n{}\n--- stdout:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_or_the_variable_makes_tests_required() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(required_by(env(&[("CI", "true")])));
        assert!(required_by(env(&[("CI", "1")])));
        assert!(required_by(env(&[("KFDO_REQUIRE_TOOLS", "1")])));
        assert!(!required_by(env(&[("CI", "false")])));
        assert!(!required_by(env(&[("KFDO_REQUIRE_TOOLS", "0")])));
        assert!(!required_by(env(&[])));
    }

    #[test]
    fn an_unmet_need_fails_when_required_and_is_skipped_otherwise() {
        let e = unmet("qemu-x86_64 is not installed", INSTALL_HINT, true).unwrap_err();
        assert!(
            e.contains("qemu-x86_64 is not installed") && e.contains("fails instead of skipping"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("skips");
        assert!(unmet_to("x", "y", true, Some(&log)).is_err());
        assert!(!log.exists(), "a failure is not a skip");
        assert!(unmet_to("x", "y", false, Some(&log)).is_ok());
        assert!(unmet_to("no qemu\nat all", "install it", false, Some(&log)).is_ok());
        let text = std::fs::read_to_string(&log).unwrap();
        let this =
            "kfdo_testkit::tests::an_unmet_need_fails_when_required_and_is_skipped_otherwise";
        assert_eq!(
            text,
            format!("{this}\tx (y)\n{this}\tno qemu at all (install it)\n"),
            "one line per skip: the test, a tab, the reason"
        );
    }

    #[test]
    fn a_timed_test_adds_its_name_and_seconds_when_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("times");
        let timer = timer_to(Some(log.clone()));
        assert!(!log.exists(), "written at the end, not the start");
        drop(timer);
        let text = std::fs::read_to_string(&log).unwrap();
        let (test, secs) = text.trim_end().split_once('\t').unwrap();
        assert_eq!(
            test,
            "kfdo_testkit::tests::a_timed_test_adds_its_name_and_seconds_when_it_ends"
        );
        assert!(secs.parse::<f64>().is_ok_and(|s| s >= 0.0), "{text}");
    }

    #[test]
    fn a_skip_that_cannot_be_logged_fails_the_test() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("no-such-dir/skips");
        let r = std::panic::catch_unwind(|| skip_to("why", Some(&log)));
        assert!(r.is_err(), "the skip would be missing from the summary");
    }

    #[test]
    fn a_failed_command_is_reported_with_its_status_and_output() {
        let out = Command::new("sh")
            .args(["-c", "echo to-stdout; echo to-stderr >&2; exit 3"])
            .output()
            .unwrap();
        let e = success(&out, "the failing step").unwrap_err();
        for part in [
            "the failing step failed",
            "exit status: 3",
            "to-stdout",
            "to-stderr",
        ] {
            assert!(e.contains(part), "{part:?} missing from {e}");
        }
        let passed = Command::new("true").output().unwrap();
        assert_eq!(ok(&passed, "true").status.code(), Some(0));
        assert!(std::panic::catch_unwind(|| ok(out, "the failing step")).is_err());
    }

    #[test]
    fn tools_are_found_by_running_them() {
        assert!(tool("cargo").is_some(), "cargo runs these tests");
        assert!(tool("kfdo-no-such-tool").is_none());
    }
}
