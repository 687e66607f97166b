//! `kfdo optimize` on the test kernel recipe with the seeds' stack (issue 14):
//! `autofdo+thinlto+propeller` brings the `autofdo+thinlto` kernel built with
//! `CONFIG_PROPELLER_CLANG=y` (the BB address map), boots it with the training workload,
//! records it, writes the Propeller profiles with `kfdo profile --format propeller
//! --kernel`, relinks through `CLANG_PROPELLER_PROFILE_PREFIX`, and judges the three
//! kernels. Then the checks that the profiles were used:
//!
//! - the mapped kernel carries a BB address map kfdo reads, and the cc profile names
//!   hot kernel functions by it;
//! - the relinked vmlinux has the `.cold` parts the cc profile asks for;
//! - its hot functions follow the ld profile's order (lld keeps the order within each
//!   of the linker script's input-section groups, so adjacent pairs are counted), and
//!   90 % of them sit in a far smaller stretch of text than in the mapped kernel.
//!
//! `autofdo+thinlto+bolt` is judged beside it in the same run (BOLT's guide for Linux:
//! perf2bolt's profile of a `nokaslr` recording of the `autofdo+thinlto` kernel, llvm-bolt
//! on its `vmlinux.unstripped`, the boot image remade from the rewrite): llvm-bolt must
//! have rewritten functions, the remade image must differ from the one it rewrote and
//! boot with every workload, and its emulated kernel counters must sit below the
//! baseline's. No kernel build: BOLT rewrites the kernel that is already there.
//!
//! Two more kernel builds than `optimize_kernel.rs` (it shares that test's output
//! directory, so the baseline is reused; times in docs/testing.md). It runs in CI;
//! on a developer's machine when that directory exists or with `KFDO_KERNEL_TESTS=1`.

use crate::common;

use common::*;
use std::path::Path;

use kfdo_elf::{BbAddrMap, Binary};

fn wanted() -> bool {
    kfdo_testkit::require_tools(&["clang-19", "ld.lld-19", "qemu-system-x86_64"])
}

fn symbol(bin: &Binary, name: &str) -> Option<u64> {
    bin.symbol_address(name)
}

#[test]
fn a_propeller_kernel_is_relinked_from_its_profiles_and_judged() {
    let Some(_one_at_a_time) = common::heavy_test("a Propeller kernel built and judged") else {
        return;
    };
    if !wanted() {
        return;
    }
    let Some(out) = kfdo_testkit::kernel_recipe_out() else {
        return;
    };
    // The recording tests boot this directory's baseline: not while it is rewritten.
    let _writing = kfdo_testkit::kernel::lock_recipe_out(&out);
    let recipe = kfdo_testkit::kernel::kernel_test_recipe();
    run_ok(
        kfdo()
            .arg("optimize")
            .arg(&recipe)
            .arg("-o")
            .arg(&out)
            .args([
                "--variants",
                "autofdo+thinlto+propeller,autofdo+thinlto+bolt",
                "--no-heatmaps",
                "--no-packages",
                // The twins are optimize_kernel's part (the same recipe and output): a
                // ThinLTO twin here would be one more kernel build for CI.
                "--no-uml",
            ]),
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    for v in [
        "autofdo+thinlto",
        "autofdo+thinlto+propeller",
        "autofdo+thinlto+bolt",
    ] {
        assert!(summary.contains(v), "{v} is not in the summary:\n{summary}");
    }
    bolt_kernel_was_rewritten_and_judged(&out, &summary);
    bolt_workarounds_hold_on_the_built_kernel(&out.join("build/autofdo+thinlto"));
    // The twins' store left by optimize_kernel's run judged other kernels: neither the
    // summary nor `kfdo counters-vs-time` pairs these kernels' counters with it.
    assert!(
        !summary.contains("## Counters against native time"),
        "{summary}"
    );
    let dir = tempfile::tempdir().unwrap();
    let stale = kfdo()
        .args(["counters-vs-time", "-o"])
        .arg(dir.path().join("cvt"))
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(stale.status.code(), Some(1));
    let err = String::from_utf8_lossy(&stale.stderr);
    assert!(
        err.contains("no variant has both counters and a time change"),
        "{err}"
    );

    let mapped_path = out.join("build/autofdo+thinlto/vmlinux");
    let relinked_path = out.join("build/autofdo+thinlto+propeller/vmlinux");
    let mapped = Binary::open(&mapped_path).unwrap();
    let map = BbAddrMap::read(&mapped).expect("the autofdo+thinlto kernel has the map");
    assert!(
        map.functions.len() > 1000,
        "only {} functions mapped",
        map.functions.len()
    );

    let (cc, ld) = kfdo_convert::propeller_paths(&out.join("profiles/propeller"));
    let cc = std::fs::read_to_string(cc).unwrap();
    let ld = std::fs::read_to_string(ld).unwrap();
    assert!(cc.starts_with("v1\n"), "{}", &cc[..cc.len().min(200)]);
    let hot_functions: Vec<&str> = cc
        .lines()
        .filter_map(|l| l.strip_prefix("f "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(
        hot_functions.len() >= 50,
        "only {} hot functions in the cc profile",
        hot_functions.len()
    );
    for f in &hot_functions {
        assert!(
            symbol(&mapped, f).is_some(),
            "{f} is not in the mapped kernel"
        );
    }

    let relinked = Binary::open(&relinked_path).unwrap();
    let cold: Vec<&str> = ld.lines().filter(|l| l.ends_with(".cold")).collect();
    assert!(cold.len() >= 10, "few split functions: {}", cold.len());
    let missing: Vec<&&str> = cold
        .iter()
        .filter(|c| symbol(&relinked, c).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "cold parts missing from the relinked kernel: {missing:?}"
    );

    // The hot functions' order and span.
    let hot: Vec<&str> = ld.lines().filter(|l| !l.ends_with(".cold")).collect();
    let at = |bin: &Binary| -> Vec<u64> { hot.iter().filter_map(|s| symbol(bin, s)).collect() };
    let (before, after) = (at(&mapped), at(&relinked));
    assert_eq!(
        after.len(),
        hot.len(),
        "hot functions missing after the relink"
    );
    let ascending = after.windows(2).filter(|w| w[0] < w[1]).count();
    assert!(
        ascending * 10 >= (after.len() - 1) * 9,
        "only {ascending} of {} adjacent hot functions in the ld profile's order",
        after.len() - 1
    );
    // The smallest stretch of text holding 90 % of them: the linker script keeps some
    // (`.sched.text`, `.noinstr.text`, ...) in places of their own whatever the order
    // file says, so the whole span says little.
    let window = |a: &[u64]| {
        let mut a = a.to_vec();
        a.sort_unstable();
        let k = (a.len() * 9 / 10).max(1);
        a.windows(k).map(|w| w[k - 1] - w[0]).min().unwrap()
    };
    assert!(
        window(&after) * 4 < window(&before),
        "90 % of the hot functions lie within {} bytes relinked, {} before",
        window(&after),
        window(&before)
    );
    eprintln!(
        "{} hot functions: 90 % within {} -> {} bytes; {ascending} of {} adjacent pairs in order; {} split",
        hot.len(),
        window(&before),
        window(&after),
        after.len() - 1,
        cold.len()
    );
    assert!(Path::new(&out.join("report/index.html")).is_file());
}

/// The BOLT kernel: llvm-bolt's own report, the remade image, the skip list and the
/// judged counters (deterministic: emulated, kernel mode).
fn bolt_kernel_was_rewritten_and_judged(out: &Path, summary: &str) {
    let dir = out.join("bolt/autofdo+thinlto+bolt");
    let log = std::fs::read_to_string(out.join("logs/bolt-autofdo+thinlto+bolt.log")).unwrap();
    let overwritten = log
        .lines()
        .find_map(|l| l.strip_prefix("BOLT: "))
        .and_then(|l| l.split(" out of ").next())
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or_else(|| panic!("no 'BOLT: N out of M functions were overwritten':\n{log}"));
    assert!(
        overwritten >= 50,
        "llvm-bolt rewrote only {overwritten} functions"
    );
    assert!(log.contains("perf2bolt"), "{log}");
    let skipped = std::fs::read_to_string(dir.join("skip-funcs.txt")).unwrap();
    assert!(skipped.lines().count() > 50, "{skipped}");
    let bolted = std::fs::read(dir.join("boot/arch/x86/boot/bzImage")).unwrap();
    let base = std::fs::read(out.join("build/autofdo+thinlto/arch/x86/boot/bzImage")).unwrap();
    assert_ne!(bolted, base, "the remade boot image is the one BOLT read");
    let record =
        std::fs::read_to_string(out.join("logs/record-autofdo+thinlto-training-run-for-BOLT.log"))
            .unwrap();
    assert!(record.contains("kernel samples"), "{record}");
    assert!(
        summary.contains("llvm-bolt-19 rewrote the autofdo+thinlto kernel"),
        "{summary}"
    );
    // Its counters, from the report's data: fewer kernel taken branches than the
    // baseline, as every profiled kernel here.
    let row = summary
        .lines()
        .find(|l| l.starts_with("| kernel taken branches |"))
        .unwrap_or_else(|| panic!("no taken branches row:\n{summary}"));
    let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
    let bolt = cells.last().unwrap();
    assert!(bolt.starts_with('−'), "BOLT kernel's taken branches: {row}");
}

/// `kernel::bolt` on the kernel BOLT rewrote: the workaround's inputs, and the boot image
/// remade from the original `vmlinux.unstripped` by replaying kbuild's commands is
/// kbuild's, byte for byte (so the BOLT kernel's image differs only by BOLT's rewrite).
fn bolt_workarounds_hold_on_the_built_kernel(dir: &Path) {
    use kfdo_optimize::kernel::bolt::{
        boot_image_commands, needs_ksymtab_gpl, rebuild_boot_image, skip_file_text, skip_functions,
        SkipReason,
    };
    let vmlinux = dir.join("vmlinux.unstripped");
    assert!(
        needs_ksymtab_gpl(&vmlinux).unwrap(),
        "Linux 7.x has no __ksymtab_gpl"
    );
    let skipped = skip_functions(&vmlinux).unwrap();
    let count = |r: SkipReason| skipped.iter().filter(|s| s.reason == r).count();
    assert!(count(SkipReason::RuntimeConst) > 50, "{skipped:?}");
    assert_eq!(count(SkipReason::GuideDefault), 2);
    // Every user-copy helper has a runtime_ptr_USER_PTR_MAX site.
    assert!(skipped
        .iter()
        .any(|s| s.name == "_copy_to_user" && s.reason == SkipReason::RuntimeConst));
    let text = skip_file_text(&skipped);
    assert!(text.lines().all(|l| l.ends_with("(/[0-9]+)?")));
    assert!(text.contains("__entry_text_start(/[0-9]+)?\n"));

    let cmds = boot_image_commands(dir).unwrap();
    assert_eq!(cmds.first().unwrap().0, "vmlinux");
    assert_eq!(cmds.last().unwrap().0, "arch/x86/boot/bzImage");
    let work = tempfile::tempdir().unwrap();
    let image = rebuild_boot_image(dir, &vmlinux, work.path()).unwrap();
    let want = std::fs::read(dir.join("arch/x86/boot/bzImage")).unwrap();
    let got = std::fs::read(&image).unwrap();
    assert!(
        got == want,
        "the bzImage remade from kbuild's own vmlinux differs from kbuild's ({} vs {} bytes)",
        got.len(),
        want.len()
    );
}
