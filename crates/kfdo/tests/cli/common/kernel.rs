//! Helpers of the kernel recipe tests: a profile's hottest functions, a kernel
//! function's source file and instructions, and one kernel object compiled again with
//! the command line kbuild used for it (with clang's sample-profile remarks).

use super::{kfdo, run_ok};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Functions of a profile by total samples, hottest first (`kfdo show`).
pub fn hottest_functions(profile: &Path, n: usize) -> Vec<String> {
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

/// The source file of a text symbol, from the vmlinux's DWARF (llvm-symbolizer at its
/// address), as the debug information names it.
pub fn source_of(vmlinux: &Path, func: &str) -> Option<String> {
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

/// Compiles `object` again in the kbuild tree `build` with the command line kbuild used
/// for it (its `.o.cmd`) and `extra` appended, writing the object elsewhere (the tree
/// stays as kbuild left it). Panics, with the compiler's words, if it fails.
pub fn recompile(build: &Path, object: &str, extra: &str) -> Output {
    let (dir, name) = object.rsplit_once('/').unwrap_or((".", object));
    let cmd_file = build.join(dir).join(format!(".{name}.cmd"));
    let text = std::fs::read_to_string(&cmd_file)
        .unwrap_or_else(|e| panic!("{}: {e}", cmd_file.display()));
    // `savedcmd_` since Linux 6.2, `cmd_` before.
    let line = text
        .lines()
        .find_map(|l| {
            l.strip_prefix(&format!("savedcmd_{object} := "))
                .or_else(|| l.strip_prefix(&format!("cmd_{object} := ")))
        })
        .unwrap_or_else(|| panic!("{}: no savedcmd line", cmd_file.display()));
    // The compile alone: kbuild chains objtool (and more) after it with `;`.
    let line = line.split(" ; ").next().unwrap_or(line);
    // A directory of its own: tests share this process (and its id).
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join(name);
    let line = line.replace(
        &format!(" -o {object} "),
        &format!(" -o {} ", out.display()),
    );
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!("{line} {extra}"))
        .current_dir(build)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "recompiling {object} in {} failed:\n{}",
        build.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The mnemonics of a function's instructions (addresses and operands left out, so that
/// identical code at another address compares equal).
pub fn mnemonics(vmlinux: &Path, func: &str) -> Vec<String> {
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

/// Compiles `object` again with the command line kbuild used for it in `build`, plus
/// `-Rpass=sample-profile`; returns the number of remarks.
pub fn sample_profile_remarks(build: &Path, object: &str) -> usize {
    let o = recompile(build, object, "-Rpass=sample-profile");
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.contains("remark:") && l.contains("[-Rpass=sample-profile]"))
        .count()
}

/// A kernel recipe test's output directory: beside the x86-64 recipe test's
/// (`kfdo_testkit::kernel_recipe_out`) with `suffix` appended (`-gcc`, `-arm64`), so that
/// a rerun reuses what is unchanged; None when the kernel tests are skipped here.
pub fn recipe_out_beside(suffix: &str) -> Option<PathBuf> {
    let shared = kfdo_testkit::kernel_recipe_out()?;
    let name = shared.file_name()?.to_string_lossy().to_string();
    Some(shared.with_file_name(format!("{name}{suffix}")))
}
