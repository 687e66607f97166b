//! `kfdo optimize` on an arm64 kernel recipe (issue 17), on this x86-64 machine: Linux 7.2
//! cross-compiled with clang-19 (`ARCH=arm64 LLVM=-19`), the workload's /init
//! cross-compiled for aarch64, the baseline booted under qemu-system-aarch64 (`virt`
//! board) with the training workload and recorded with emulated branch stacks, the
//! profile converted from the aarch64 vmlinux, the AutoFDO kernel rebuilt from it, both
//! booted with the evaluation workload and judged on emulated counters. Then the checks
//! that it is an arm64 kernel throughout and that the profile was used:
//!
//! - both vmlinux files are aarch64 ELF, and the recording's perf.data says aarch64;
//! - the profile's hottest functions include arm64 code (a function from `arch/arm64`);
//! - clang's `-Rpass=sample-profile` remarks on the hottest function's file with the
//!   autofdo build's command line, none with the baseline's; the hot code changed.
//!
//! The test configuration has no networking and no modules (testdata/kernel/no-net.config),
//! to keep its two kernel builds short; a few boots under TCG. Its output sits beside the x86-64 kernel
//! tests' (`kfdo_testkit::kernel_recipe_out`), so a rerun reuses what is unchanged. It
//! runs in CI; on a developer's machine when that directory exists or with
//! `KFDO_KERNEL_TESTS=1`.

use crate::common;

use common::kernel::{
    hottest_functions, mnemonics, recipe_out_beside, sample_profile_remarks, source_of,
};
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn wanted() -> bool {
    kfdo_testkit::require_tools(&[
        "clang-19",
        "ld.lld-19",
        "llvm-objdump-19",
        "llvm-nm-19",
        "llvm-symbolizer-19",
        "qemu-system-aarch64",
    ])
}

/// The ELF machine `readelf -h` names for a file.
fn elf_machine(file: &Path) -> String {
    let out = run_ok(Command::new("readelf").arg("-h").arg(file));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Machine:")
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_default()
}

/// A source file relative to the kernel tree the build directory links to.
fn relative_source(build: &Path, file: &str) -> PathBuf {
    let src_root = std::fs::read_link(build.join("source")).unwrap_or_default();
    Path::new(file)
        .strip_prefix(&src_root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| PathBuf::from(file))
}

#[test]
fn an_arm64_autofdo_kernel_is_cross_built_booted_and_judged() {
    let Some(_one_at_a_time) = common::heavy_test("an arm64 kernel cross-built, booted and judged")
    else {
        return;
    };
    if !wanted() {
        return;
    }
    let Some(out) = recipe_out_beside("-arm64") else {
        return;
    };
    let recipe = repo_root().join("testdata/kernel/arm64-recipe");
    let run = run_ok(
        kfdo()
            .arg("optimize")
            .arg(&recipe)
            .arg("-o")
            .arg(&out)
            .args(["--no-heatmaps", "--no-packages"]),
    );
    let stdout = String::from_utf8_lossy(&run.stdout).to_string();
    assert!(stdout.contains("report:"), "{stdout}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    for want in ["autofdo", "kernel taken branches", "pipe"] {
        assert!(
            summary.contains(want),
            "no {want} in the summary:\n{summary}"
        );
    }

    let base = out.join("build/baseline");
    let fdo = out.join("build/autofdo");
    for b in [&base, &fdo] {
        assert_eq!(
            elf_machine(&b.join("vmlinux")),
            "AArch64",
            "{}",
            b.display()
        );
        assert!(b.join("arch/arm64/boot/Image").is_file());
    }
    // The recording is an aarch64 one (perf's ARCH header feature).
    let perf_data = out.join("record/training-run/perf.data");
    let header = run_ok(
        Command::new("perf")
            .args(["report", "--header-only", "-i"])
            .arg(&perf_data),
    );
    let header = String::from_utf8_lossy(&header.stdout);
    assert!(header.contains("arch : aarch64"), "{header}");

    // The profile: arm64 code among its hottest functions.
    let profile = out.join("profiles/kfdo.afdo");
    let hot = hottest_functions(&profile, 40);
    assert!(hot.len() >= 10, "the profile has few functions: {hot:?}");
    let vmlinux = base.join("vmlinux");
    let sources: Vec<(String, String)> = hot
        .iter()
        .filter_map(|f| source_of(&vmlinux, f).map(|s| (f.clone(), s)))
        .collect();
    assert!(
        sources.iter().any(|(_, s)| s.contains("arch/arm64/")),
        "no arm64 code among the hottest functions: {sources:?}"
    );

    // The profile reached the compiler, and the hot code changed.
    let (func, file) = sources
        .iter()
        .find(|(_, s)| s.ends_with(".c"))
        .expect("no hot function with a C source file");
    let object = relative_source(&base, file)
        .with_extension("o")
        .to_string_lossy()
        .to_string();
    assert!(
        sample_profile_remarks(&fdo, &object) > 0,
        "no -Rpass=sample-profile remark compiling {object} ({func}) with the profile"
    );
    assert_eq!(sample_profile_remarks(&base, &object), 0);
    let changed = hot
        .iter()
        .take(10)
        .filter(|f| {
            let a = mnemonics(&vmlinux, f);
            !a.is_empty() && a != mnemonics(&fdo.join("vmlinux"), f)
        })
        .count();
    assert!(
        changed >= 3,
        "the hottest functions' code is the same: {changed} of 10 changed"
    );
}
