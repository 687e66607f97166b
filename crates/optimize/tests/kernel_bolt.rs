//! `kernel::bolt` on the kernel the kernel-recipe test built (AutoFDO + ThinLTO): the
//! BOLT workarounds' inputs, and the boot image rebuilt from the original
//! `vmlinux.unstripped` equal, byte for byte, to kbuild's.

use std::path::PathBuf;

use kfdo_optimize::kernel::bolt::{
    boot_image_commands, needs_ksymtab_gpl, rebuild_boot_image, skip_file_text, skip_functions,
    SkipReason,
};

/// The AutoFDO + ThinLTO build tree of the kernel-recipe test, when it is there.
fn build_dir() -> Option<PathBuf> {
    let out = kfdo_testkit::kernel_recipe_out()?;
    let dir = out.join("build/autofdo+thinlto");
    let ok =
        dir.join("vmlinux.unstripped").is_file() && dir.join("arch/x86/boot/bzImage").is_file();
    kfdo_testkit::require(
        ok,
        &format!("no kernel build with vmlinux.unstripped and bzImage in {}", dir.display()),
        "run the kernel-recipe test first (KFDO_KERNEL_TESTS=1 cargo test -p kfdo-optimize --test kernel_recipe)",
    )
    .then_some(dir)
}

#[test]
fn skip_rules_find_the_functions_bolt_must_leave_alone() {
    let Some(dir) = build_dir() else { return };
    check_skip_rules(&dir.join("vmlinux.unstripped"));
}

/// The same checks on another kernel: `KFDO_BOLT_VMLINUX=PATH/vmlinux.unstripped`
/// (`KFDO_BOLT_SKIP_FILE=FILE` also writes its `--skip-funcs-file`).
#[test]
fn skip_rules_on_a_given_kernel() {
    let Some(vmlinux) = std::env::var_os("KFDO_BOLT_VMLINUX") else {
        return;
    };
    let vmlinux = PathBuf::from(vmlinux);
    check_skip_rules(&vmlinux);
    if let Some(file) = std::env::var_os("KFDO_BOLT_SKIP_FILE") {
        std::fs::write(file, skip_file_text(&skip_functions(&vmlinux).unwrap())).unwrap();
    }
}

fn check_skip_rules(vmlinux: &std::path::Path) {
    assert!(
        needs_ksymtab_gpl(vmlinux).unwrap(),
        "Linux 7.x has no __ksymtab_gpl"
    );

    let skipped = skip_functions(vmlinux).unwrap();
    let count = |r: SkipReason| skipped.iter().filter(|s| s.reason == r).count();
    let (rt, jt, guide) = (
        count(SkipReason::RuntimeConst),
        count(SkipReason::JumpTableIntoCold),
        count(SkipReason::GuideDefault),
    );
    eprintln!("skip rules: {rt} runtime-const, {jt} jump-table-into-cold, {guide} guide");
    assert!(rt > 50, "{rt} runtime-const functions");
    assert_eq!(guide, 2);
    // Every user-copy helper has a runtime_ptr_USER_PTR_MAX site.
    assert!(skipped
        .iter()
        .any(|s| s.name == "_copy_to_user" && s.reason == SkipReason::RuntimeConst));
    // x64_sys_call's jump table reaches its split part when MFS split it.
    let has_cold = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "llvm-nm-19 {} 2>/dev/null | grep -q ' x64_sys_call.cold$'",
            vmlinux.display()
        ))
        .status()
        .is_ok_and(|s| s.success());
    let jt_sys_call = skipped
        .iter()
        .any(|s| s.name == "x64_sys_call" && s.reason == SkipReason::JumpTableIntoCold);
    if has_cold {
        assert!(jt_sys_call, "x64_sys_call (split by MFS) must be skipped");
    }
    let text = skip_file_text(&skipped);
    assert!(text.lines().all(|l| l.ends_with("(/[0-9]+)?")));
    assert!(text.contains("__entry_text_start(/[0-9]+)?\n"));
}

#[test]
fn boot_image_rebuilt_from_the_original_kernel_is_kbuilds() {
    let Some(dir) = build_dir() else { return };
    let cmds = boot_image_commands(&dir).unwrap();
    assert_eq!(cmds.first().unwrap().0, "vmlinux");
    assert_eq!(cmds.last().unwrap().0, "arch/x86/boot/bzImage");

    let work = tempfile::tempdir().unwrap();
    let image = rebuild_boot_image(&dir, &dir.join("vmlinux.unstripped"), work.path()).unwrap();
    let want = std::fs::read(dir.join("arch/x86/boot/bzImage")).unwrap();
    let got = std::fs::read(&image).unwrap();
    assert!(
        got == want,
        "rebuilt bzImage differs from kbuild's ({} vs {} bytes)",
        got.len(),
        want.len()
    );
    // The build tree is left alone: its vmlinux is still kbuild's.
    assert!(std::fs::symlink_metadata(work.path().join("vmlinux"))
        .unwrap()
        .is_file());
}

/// [`rebuild_boot_image`] on another build: `KFDO_BOLT_BUILD_DIR=O_TREE` and
/// `KFDO_BOLT_INPUT=FILE`, a copy of its vmlinux.unstripped that differs only in
/// non-loaded sections (e.g. with the empty `__ksymtab_gpl` BOLT needs): the image must
/// still be kbuild's; or, with `KFDO_BOLT_EXPECT=IMAGE`, that image (a BOLTed kernel's
/// bzImage made by hand).
#[test]
fn boot_image_rebuilt_from_a_given_input_is_kbuilds() {
    let (Some(dir), Some(input)) = (
        std::env::var_os("KFDO_BOLT_BUILD_DIR"),
        std::env::var_os("KFDO_BOLT_INPUT"),
    ) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let work = tempfile::tempdir().unwrap();
    let image = rebuild_boot_image(&dir, &PathBuf::from(input), work.path()).unwrap();
    let expect = std::env::var_os("KFDO_BOLT_EXPECT")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.join("arch/x86/boot/bzImage"));
    let want = std::fs::read(&expect).unwrap();
    assert!(
        std::fs::read(image).unwrap() == want,
        "rebuilt bzImage differs from {}",
        expect.display()
    );
}
