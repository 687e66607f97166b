//! `kfdo optimize` on a kernel recipe, end to end (issue 13): Debian's linux-source-7.2
//! fetched and unpacked, a tinyconfig kernel with the workload's options built with
//! clang-19 as kbuild builds it for AutoFDO, booted under QEMU with the training workload
//! and recorded in the workload's windows, the profile converted, the AutoFDO kernel
//! rebuilt from it, both kernels judged, packaged. Then the checks that the profile was
//! really used:
//!
//! - clang's `-Rpass=sample-profile` remarks: the hottest function's source file,
//!   compiled again with the autofdo build's own command line (kbuild's `.o.cmd`) plus the
//!   remark flag, applies samples; the baseline's command line (no profile) applies none;
//! - the hottest functions' code differs between the baseline and the AutoFDO kernel;
//! - the packages: `dpkg-deb --info` and `rpm -qpi` read them, named with the variant and
//!   the profile's hash.
//!
//! Two kernel builds and a few boots under TCG: 20 to 60 minutes on 2 cores, more than CI's
//! budget holds beside the other tests today, so it is `#[ignore]`d (cargo lists it as
//! ignored, it never passes without running): run it with
//! `cargo test --release -p kfdo --test optimize_kernel -- --ignored`.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn wanted() -> bool {
    kfdo_testkit::require_tools(&[
        "clang-19",
        "ld.lld-19",
        "llvm-profgen-19",
        "llvm-objdump-19",
        "llvm-nm-19",
        "qemu-system-x86_64",
        "dpkg-deb",
        "rpm",
        "rpmbuild",
    ])
}

/// Functions of a profile by total samples, hottest first (`kfdo show`).
fn hottest_functions(profile: &Path, n: usize) -> Vec<String> {
    let out = run_ok(kfdo().arg("show").arg(profile));
    let mut f: Vec<(u64, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| {
            let mut parts = l.split(':');
            let name = parts.next()?.to_string();
            let total = parts.next()?.parse().ok()?;
            Some((total, name))
        })
        .collect();
    f.sort_by(|a, b| b.cmp(a));
    f.into_iter().take(n).map(|(_, name)| name).collect()
}

/// The mnemonics of a function's instructions (addresses and operands left out, so that
/// identical code at another address compares equal).
fn mnemonics(vmlinux: &Path, func: &str) -> Vec<String> {
    let out = run_ok(
        Command::new("llvm-objdump-19")
            .args(["-d", "--no-show-raw-insn", "--no-addresses"])
            .arg(format!("--disassemble-symbols={func}"))
            .arg(vmlinux),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('\t') || l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// The source file of a function, from the vmlinux's DWARF (llvm-symbolizer at its
/// address), relative to the kernel tree.
fn source_of(vmlinux: &Path, func: &str) -> Option<String> {
    let nm = run_ok(Command::new("llvm-nm-19").arg(vmlinux));
    let addr = String::from_utf8_lossy(&nm.stdout).lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() == 3 && f[2] == func && "tT".contains(f[1])).then(|| f[0].to_string())
    })?;
    let out = run_ok(
        Command::new("llvm-symbolizer-19")
            .args(["--obj"])
            .arg(vmlinux)
            .arg(format!("0x{addr}")),
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let file = text.lines().nth(1)?.split(':').next()?.to_string();
    Some(file)
}

/// Compiles `object` again with the command line kbuild used for it in `build` (from its
/// `.o.cmd`), plus `-Rpass=sample-profile`; returns the number of remarks.
fn sample_profile_remarks(build: &Path, object: &str) -> usize {
    let (dir, name) = object.rsplit_once('/').unwrap_or((".", object));
    let cmd_file = build.join(dir).join(format!(".{name}.cmd"));
    let text = std::fs::read_to_string(&cmd_file)
        .unwrap_or_else(|e| panic!("{}: {e}", cmd_file.display()));
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("savedcmd_{object} := ")))
        .unwrap_or_else(|| panic!("{}: no savedcmd line", cmd_file.display()));
    // Write the object elsewhere: the build tree stays as kbuild left it.
    let out = std::env::temp_dir().join(format!("kfdo-remarks-{}.o", std::process::id()));
    let line = line.replace(
        &format!(" -o {object} "),
        &format!(" -o {} ", out.display()),
    );
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!("{line} -Rpass=sample-profile"))
        .current_dir(build)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&out);
    assert!(
        o.status.success(),
        "recompiling {object} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.contains("remark:") && l.contains("[-Rpass=sample-profile]"))
        .count()
}

#[test]
#[ignore = "builds two kernels (20-60 min on 2 cores): run with -- --ignored"]
fn an_autofdo_kernel_is_built_from_the_profile_judged_and_packaged() {
    if !wanted() {
        return;
    }
    let recipe = repo_root().join("tests/kernel/autofdo-recipe");
    // Kept between runs (target/), so that a rerun only redoes what changed.
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("optimize-kernel");
    let optimize = || {
        run_ok(
            kfdo()
                .arg("optimize")
                .arg(&recipe)
                .arg("-o")
                .arg(&out)
                .args(["--variants", "autofdo", "--no-heatmaps"]),
        )
    };
    let run = optimize();
    let stdout = String::from_utf8_lossy(&run.stdout).to_string();
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("autofdo"), "{summary}");
    assert!(summary.contains("kernel taken branches"), "{summary}");
    assert!(stdout.contains("report:"), "{stdout}");

    let base = out.join("build/baseline");
    let fdo = out.join("build/autofdo");
    let profile = out.join("profiles/kfdo.afdo");
    let hot = hottest_functions(&profile, 20);
    assert!(hot.len() >= 10, "the profile has few functions: {hot:?}");

    // The profile reached the compiler: remarks on the hottest function's file with the
    // autofdo build's command line, none with the baseline's.
    let file = hot
        .iter()
        .find_map(|f| source_of(&base.join("vmlinux"), f).filter(|s| s.ends_with(".c")))
        .expect("no hot function with a C source file");
    let src_root = std::fs::read_link(base.join("source")).unwrap_or_default();
    let rel = Path::new(&file)
        .strip_prefix(&src_root)
        .map(|p| p.to_path_buf())
        .unwrap_or_else(|_| PathBuf::from(&file));
    let object = rel.with_extension("o").to_string_lossy().to_string();
    let with = sample_profile_remarks(&fdo, &object);
    let without = sample_profile_remarks(&base, &object);
    assert!(
        with > 0,
        "no -Rpass=sample-profile remark compiling {object} with the profile"
    );
    assert_eq!(without, 0, "remarks without a profile compiling {object}");

    // The hot code changed.
    let changed: BTreeMap<&str, bool> = hot
        .iter()
        .take(10)
        .map(|f| {
            let a = mnemonics(&base.join("vmlinux"), f);
            let b = mnemonics(&fdo.join("vmlinux"), f);
            (f.as_str(), !a.is_empty() && a != b)
        })
        .collect();
    assert!(
        changed.values().filter(|&&c| c).count() >= 3,
        "the hottest functions' code is the same in both kernels: {changed:?}"
    );

    // Packages of the winner, if one was significantly better; else none (said in the
    // summary). Either way, any package written must be readable and named with its tag.
    let packages: Vec<PathBuf> = std::fs::read_dir(out.join("packages"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    if packages.is_empty() {
        assert!(summary.contains("no packages"), "{summary}");
    }
    for p in &packages {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        // The tag, with '_' for '-' in rpm names.
        assert!(
            name.contains("kfdo-autofdo-") || name.contains("kfdo_autofdo_"),
            "{name}: not named with the variant's tag"
        );
        let info = match p.extension().and_then(|e| e.to_str()) {
            Some("deb") => run_ok(Command::new("dpkg-deb").arg("--info").arg(p)),
            Some("rpm") => run_ok(Command::new("rpm").arg("-qpi").arg(p)),
            _ => continue,
        };
        let text = String::from_utf8_lossy(&info.stdout);
        assert!(text.contains("kfdo"), "{name}: {text}");
    }

    // A rerun redoes nothing: every step is a cache hit.
    let rerun = optimize();
    let progress = String::from_utf8_lossy(&rerun.stderr);
    let ran: Vec<&str> = progress
        .lines()
        .filter(|l| l.contains(": done in "))
        .collect();
    assert!(ran.is_empty(), "steps ran again on a rerun: {ran:?}");
    assert!(progress.contains("cached (inputs unchanged)"), "{progress}");
}
