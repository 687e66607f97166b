//! The one place that decides what a kfdo test does when something it needs is missing
//! (a reference tool such as clang-19, llvm-profgen-19, qemu or perf; a cached kernel;
//! a network fetch).
//!
//! On a developer's machine such a test says `skipped: ... (fix)` on stderr and returns,
//! so the rest of the suite still runs. Where tests must run, it fails instead, naming
//! what is missing and how to get it: in CI (`CI=true`) and whenever
//! `KFDO_REQUIRE_TOOLS=1` is set (`.ci/run` sets it). A test can then never pass
//! without having run.
//!
//! ```no_run
//! if !kfdo_testkit::require_tools(&["clang-19", "llvm-profgen-19"]) {
//!     return;
//! }
//! ```
//!
//! [`layering`] is the crate-internal layer check every kfdo crate runs as a test.

pub mod layering;

use std::path::PathBuf;
use std::process::{Command, Stdio};

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

/// The decision for one unmet need: `Ok(())` to skip (the message was printed), or the
/// failure message when tests must run.
fn unmet(what: &str, fix: &str, must_run: bool) -> Result<(), String> {
    let msg = format!("{what} ({fix})");
    if must_run {
        Err(format!(
            "{msg}; this test must run here (CI=true or KFDO_REQUIRE_TOOLS=1), so it fails \
             instead of skipping"
        ))
    } else {
        eprintln!("skipped: {msg}");
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

/// The small test kernel that `scripts/kernel-build.sh` caches in
/// `${KFDO_KERNEL_CACHE:-~/.cache/kfdo/kernel}` (bzImage, vmlinux, initramfs.cpio.gz).
///
/// Building it takes minutes, so on a developer's machine a test without a cached kernel
/// is skipped unless `KFDO_KERNEL_TESTS=1`; where tests must run ([`required`]) it is
/// built. When there is a cache, the script runs first anyway: it rebuilds only what
/// changed (under a second when nothing did).
pub fn test_kernel() -> Option<PathBuf> {
    let dir = match std::env::var_os("KFDO_KERNEL_CACHE") {
        Some(d) => PathBuf::from(d),
        None => {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/kfdo/kernel")
        }
    };
    let cached = ["bzImage", "vmlinux", "initramfs.cpio.gz"]
        .iter()
        .all(|f| dir.join(f).is_file());
    let asked = std::env::var("KFDO_KERNEL_TESTS").is_ok_and(|v| v == "1");
    if !cached && !asked && !required() {
        eprintln!(
            "skipped: no cached test kernel in {} (build it with scripts/kernel-build.sh, or \
             set KFDO_KERNEL_TESTS=1 to build it from the test: minutes on 2 cores)",
            dir.display()
        );
        return None;
    }
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/kernel-build.sh");
    let out = Command::new("bash")
        .arg(&script)
        .env("KFDO_KERNEL_CACHE", &dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "{} failed ({}):\n{}",
        script.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(
        std::path::Path::new(&printed),
        dir,
        "kernel-build.sh printed another cache directory"
    );
    Some(dir)
}

/// Where the kernel-recipe test (`kfdo optimize` on a real kernel) keeps its output:
/// `${KFDO_KERNEL_RECIPE_CACHE:-~/.cache/kfdo/kernel-recipe-test}`, outside the checkout,
/// so that its kernel builds (tens of minutes on 2 cores) are reused by later runs whose
/// inputs (source, config, compiler, profile) are unchanged; every other step (boots,
/// recordings, profiles, judging, packages) is redone whenever kfdo changed.
///
/// Like [`test_kernel`]: on a developer's machine the test is skipped unless the directory
/// exists or `KFDO_KERNEL_TESTS=1`; where tests must run ([`required`]) it runs.
pub fn kernel_recipe_out() -> Option<PathBuf> {
    let dir = match std::env::var_os("KFDO_KERNEL_RECIPE_CACHE") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/kfdo/kernel-recipe-test"),
    };
    let asked = std::env::var("KFDO_KERNEL_TESTS").is_ok_and(|v| v == "1");
    if !dir.is_dir() && !asked && !required() {
        eprintln!(
            "skipped: no kernel-recipe test directory {} (set KFDO_KERNEL_TESTS=1 to run the \
             test, which builds two kernels: 40 minutes or more on 2 cores)",
            dir.display()
        );
        return None;
    }
    Some(dir)
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
        assert!(unmet("x", "y", false).is_ok());
    }

    #[test]
    fn tools_are_found_by_running_them() {
        assert!(tool("cargo").is_some(), "cargo runs these tests");
        assert!(tool("kfdo-no-such-tool").is_none());
    }
}
