//! Kernel recording end to end (issue 3, "Kernel"; the kernel conformance check of issue 2):
//! the kernel-recipe test's x86-64 baseline (`kfdo_testkit::kernel::recipe_baseline`:
//! Linux 7.2 from testdata/kernel/autofdo-recipe, built with clang-19, KASLR on, a vmlinux
//! with DWARF 5 line tables and inline records) boots under `qemu-system-x86_64` (TCG) with
//! the recipe's workload initramfs, whose `/init` runs pipes, file I/O on tmpfs, system
//! calls and fork / exec (`kfdo.run=`, recipes/linux/workload/README.md), then ends the
//! run. `kfdo record --emulated-kernel` records kernel-only emulated-LBR samples of the
//! whole boot; then
//!
//! - `perf script -F ip,brstack --show-mmap-events` reads the perf.data and shows the
//!   `[kernel.kallsyms]_text` MMAP for pid -1 at the runtime (KASLR-shifted) `_text`;
//! - `kfdo profile --kernel --binary vmlinux --perf-data F --format text` and
//!   `llvm-profgen-19 --kernel --binary vmlinux --perfscript <perf script> --format=text`
//!   give equal profiles.
//!
//! The kernel is the one optimize_kernel.rs builds and caches
//! (`kfdo_testkit::kernel_recipe_out`): whichever of the two runs first builds it (that
//! test's own first run), so a cold run builds it once. On a developer's machine the test
//! is skipped (with a message on stderr) unless that directory exists or
//! `KFDO_KERNEL_TESTS=1` is set; in CI (`CI=true`, `KFDO_REQUIRE_TOOLS=1`) it always runs.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

use kfdo_testkit::kernel::RecipeBaseline as Kernel;

/// The kernel-recipe test's baseline (built first when missing), or None to skip.
fn kernel() -> Option<Kernel> {
    kfdo_testkit::kernel::recipe_baseline(Some(Path::new(env!("CARGO_BIN_EXE_kfdo"))))
}

/// The workloads of a recording: pipes (the hot kernel paths the profile must hold),
/// file I/O, system calls and fork / exec.
const RUN: &str = "kfdo.run=pipe:1600,file:100,syscall:3200,fork_exec:25";

struct Recorded {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    data: PathBuf,
    script: PathBuf,
    json: serde_json::Value,
}

fn record(k: &Kernel, period: u64, extra: &[&str]) -> Recorded {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let data = dir.join("perf.data");
    let start = std::time::Instant::now();
    let out = run_ok(
        kfdo()
            .args(["record", "--emulated-kernel", "--json", "-c"])
            .arg(period.to_string())
            .arg("--kernel")
            .arg(&k.bzimage)
            .arg("--initrd")
            .arg(&k.initrd)
            .arg("--vmlinux")
            .arg(&k.vmlinux)
            .args(["--append", RUN])
            .args(extra)
            .arg("-o")
            .arg(&data),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!(
        "record_kernel: boot + record took {:.1} s",
        start.elapsed().as_secs_f64()
    );
    // With --json the guest's serial console passes through on stderr (the workload's
    // last line among it), and stdout is the JSON alone.
    assert!(
        stderr.contains("kfdo-workload: done"),
        "the workload did not finish:\n{stderr}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("--json output: {e}:\n{stdout}"));
    let script = dir.join("perf.script");
    let out = run_ok(
        Command::new("perf")
            .args(["script", "-F", "ip,brstack", "--show-mmap-events", "-i"])
            .arg(&data),
    );
    std::fs::write(&script, &out.stdout).unwrap();
    Recorded {
        _tmp: tmp,
        dir,
        data,
        script,
        json,
    }
}

fn elf_symbol(vmlinux: &Path, name: &str) -> u64 {
    let out = run_ok(Command::new("llvm-nm-19").arg(vmlinux));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some(name))
        .unwrap_or_else(|| panic!("{name} not in {}", vmlinux.display()));
    u64::from_str_radix(line.split_whitespace().next().unwrap(), 16).unwrap()
}

#[test]
fn kernel_samples_equal_llvm_profgen() {
    let Some(_one_at_a_time) = common::heavy_test("the test kernel booted and recorded") else {
        return;
    };
    let Some(k) = kernel() else { return };
    let r = record(&k, 1009, &[]);
    let samples = r.json["samples"].as_u64().unwrap();
    eprintln!("record_kernel: {samples} kernel samples at period 1009");
    assert!(samples > 1000, "only {samples} samples");

    // perf script: the kernel mapping as perf writes it, and kernel branch stacks.
    let script = std::fs::read_to_string(&r.script).unwrap();
    let mmap = script
        .lines()
        .find(|l| l.contains("PERF_RECORD_MMAP") && l.contains("[kernel.kallsyms]_text"))
        .unwrap_or_else(|| {
            panic!(
                "no [kernel.kallsyms]_text mmap in perf script:\n{}",
                &script[..script.len().min(2000)]
            )
        });
    assert!(mmap.contains("PERF_RECORD_MMAP -1/0:"), "{mmap}");
    // [START(LEN) @ PGOFF]: start == pgoff == runtime _text, 2 MiB aligned, and the KASLR
    // shift is what it takes to land the link-time _text there.
    let inner = &mmap[mmap.find('[').unwrap() + 1..mmap.find(']').unwrap()];
    let start = u64::from_str_radix(
        inner[2..inner.find('(').unwrap()].trim_start_matches("0x"),
        16,
    )
    .unwrap();
    let pgoff = inner
        .rsplit("@ ")
        .next()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let pgoff = u64::from_str_radix(pgoff.trim_start_matches("0x"), 16).unwrap();
    assert_eq!(start, pgoff, "{mmap}");
    assert_eq!(start % (2 << 20), 0, "{mmap}");
    let link_text = elf_symbol(&k.vmlinux, "_text");
    eprintln!(
        "record_kernel: _text at {start:#x} (link time {link_text:#x}, KASLR shift {:#x})",
        start - link_text
    );
    let stacks = script
        .lines()
        .filter(|l| l.trim_start().starts_with("ffffffff") && l.contains(" 0xffffffff"))
        .count();
    assert!(
        stacks as u64 >= samples * 9 / 10,
        "{stacks} kernel branch-stack lines of {samples} samples"
    );
    assert!(
        !script.lines().any(|l| l.contains("/0x")
            && l.split_whitespace()
                .skip(1)
                .any(|b| !b.starts_with("0xffff"))),
        "a user-space address in a kernel-only recording"
    );

    // The two converters agree, with llvm-profgen of each LLVM release kfdo is tested with.
    let ours_txt = r.dir.join("kfdo.txt");
    run_ok(
        kfdo()
            .args(["-q", "profile", "--kernel", "--binary"])
            .arg(&k.vmlinux)
            .arg("--perf-data")
            .arg(&r.data)
            .args(["--format", "text", "-o"])
            .arg(&ours_txt),
    );
    let ours = read_text(&ours_txt);
    for llvm in kfdo_testkit::llvm_releases(&["llvm-profgen"]) {
        let ref_txt = r.dir.join(format!("ref{}.txt", llvm.major));
        run_ok(
            Command::new(llvm.profgen())
                .arg("--kernel")
                .arg(format!("--binary={}", k.vmlinux.display()))
                .arg(format!("--perfscript={}", r.script.display()))
                .arg(format!("--output={}", ref_txt.display()))
                .arg("--format=text"),
        );
        let reference = read_text(&ref_txt);
        assert!(
            reference.functions.len() > 50,
            "{} found only {} kernel functions",
            llvm.profgen(),
            reference.functions.len()
        );
        assert!(
            ours == reference,
            "kfdo vs {} --kernel:\n{}",
            llvm.profgen(),
            diff(&ours, &reference)
        );
    }
    // Hot kernel paths of the workload are there: a pipe's write and read (named
    // anon_pipe_write and anon_pipe_read since Linux 6.15).
    for f in ["anon_pipe_write", "anon_pipe_read"] {
        assert!(ours.functions.contains_key(f), "{f} not in the profile");
    }
}
