//! The kernels the tests boot. One x86-64 kernel build serves them all: the kernel-recipe
//! test (`kfdo optimize` on `testdata/kernel/autofdo-recipe`) keeps its output in
//! [`kernel_recipe_out`], and the recording tests boot that output's baseline
//! ([`recipe_baseline`]) rather than a kernel of their own, so a cold CI run builds it once
//! whichever test comes first.
//!
//! The baseline is what the recording tests need: a bzImage with KASLR on, a vmlinux whose
//! DWARF 5 line tables and inline records (`-gmlt`, which `CONFIG_AUTOFDO_CLANG` brings)
//! kfdo and llvm-profgen symbolize with, and the recipe's workload initramfs, whose `/init`
//! runs what `kfdo.run=` names and says `kfdo-workload: done`
//! (recipes/linux/workload/README.md).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{long_test, require, require_tools, required, skip, success};

/// Where the kernel-recipe test (`kfdo optimize` on a real kernel) keeps its output:
/// `${KFDO_KERNEL_RECIPE_CACHE:-~/.cache/kfdo/kernel-recipe-test}`, outside the checkout,
/// so that its kernel builds (tens of minutes on 2 cores) are reused by later runs whose
/// inputs (source, config, compiler, profile) are unchanged; every other step (boots,
/// recordings, profiles, judging, packages) is redone whenever kfdo changed.
///
/// On a developer's machine the test is skipped unless the directory exists or
/// `KFDO_KERNEL_TESTS=1`; where tests must run ([`required`]) it runs.
pub fn kernel_recipe_out() -> Option<PathBuf> {
    let dir = match std::env::var_os("KFDO_KERNEL_RECIPE_CACHE") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/kfdo/kernel-recipe-test"),
    };
    if !long_test("builds kernels with kfdo optimize") {
        return None;
    }
    let asked = std::env::var("KFDO_KERNEL_TESTS").is_ok_and(|v| v == "1");
    if !dir.is_dir() && !asked && !required() {
        skip(&format!(
            "no kernel-recipe test directory {} (set KFDO_KERNEL_TESTS=1 to run the \
             test, which builds two kernels: 40 minutes or more on 2 cores)",
            dir.display()
        ));
        return None;
    }
    Some(dir)
}

/// The kernel-recipe test's recipe, in the checkout (an absolute path without `..`).
pub fn kernel_test_recipe() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize()
        .unwrap_or_else(|e| panic!("the checkout {}: {e}", root.display()))
        .join("testdata/kernel/autofdo-recipe")
}

/// The lock on a kernel-recipe output directory (a sibling file, `DIR.lock`), held while a
/// test writes to the directory (exclusive) or boots what it holds (shared). The tests in
/// one binary take turns anyway (`heavy_test`); this also orders test binaries run side by
/// side, and the recording tests' threads.
pub struct RecipeOutLock {
    _file: File,
}

fn open_lock(out: &Path) -> File {
    let name = format!(
        "{}.lock",
        out.file_name().unwrap_or_default().to_string_lossy()
    );
    let path = out.with_file_name(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
    }
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open the lock file {}: {e}", path.display()))
}

/// Waits for, and holds, the right to write to the output directory `out`.
pub fn lock_recipe_out(out: &Path) -> RecipeOutLock {
    let file = open_lock(out);
    file.lock()
        .unwrap_or_else(|e| panic!("cannot lock {}.lock: {e}", out.display()));
    RecipeOutLock { _file: file }
}

fn share_recipe_out(out: &Path) -> RecipeOutLock {
    let file = open_lock(out);
    file.lock_shared()
        .unwrap_or_else(|e| panic!("cannot lock {}.lock: {e}", out.display()));
    RecipeOutLock { _file: file }
}

/// The kernel-recipe test's x86-64 baseline, for a test to boot: the files, and a shared
/// hold on the output directory (no test rewrites them while this one boots them).
pub struct RecipeBaseline {
    /// `build/baseline/arch/x86/boot/bzImage`.
    pub bzimage: PathBuf,
    /// `build/baseline/vmlinux`.
    pub vmlinux: PathBuf,
    /// `initramfs/workload.cpio.gz`: the workload alone (no modules).
    pub initrd: PathBuf,
    _shared: RecipeOutLock,
}

/// The baseline's files in the output directory `out`: bzImage, vmlinux, initramfs.
fn baseline_files(out: &Path) -> [PathBuf; 3] {
    let build = out.join("build/baseline");
    [
        build.join("arch/x86/boot/bzImage"),
        build.join("vmlinux"),
        out.join("initramfs/workload.cpio.gz"),
    ]
}

fn baseline_complete(out: &Path) -> bool {
    baseline_files(out).iter().all(|f| f.is_file())
}

/// The baseline's files, held shared.
fn hold_baseline(out: &Path) -> RecipeBaseline {
    let shared = share_recipe_out(out);
    let [bzimage, vmlinux, initrd] = baseline_files(out);
    RecipeBaseline {
        bzimage,
        vmlinux,
        initrd,
        _shared: shared,
    }
}

/// The kernel-recipe test's baseline ([`RecipeBaseline`]), built first when the output
/// directory lacks it, or None to skip (as [`kernel_recipe_out`]; also when a tool the
/// build needs is missing on a developer's machine).
///
/// The build is the kernel-recipe test's own first run (`kfdo optimize` with the same
/// recipe, output and variants, less the User-Mode Linux twins), so the test that comes
/// second finds its kernels built. `kfdo` is the binary to run it with: a kfdo test's
/// `CARGO_BIN_EXE_kfdo`, or None for the one beside this test binary (`target/release/kfdo`,
/// which `cargo test --workspace` builds; `cargo test -p` of another crate does not
/// rebuild it). A baseline already there is used as it is: what the recording tests check
/// holds for any kernel the recipe builds.
pub fn recipe_baseline(kfdo: Option<&Path>) -> Option<RecipeBaseline> {
    let out = kernel_recipe_out()?;
    let held = hold_baseline(&out);
    if baseline_complete(&out) {
        return Some(held);
    }
    drop(held);
    {
        let _writing = lock_recipe_out(&out);
        // Another test may have built it while this one waited.
        if !baseline_complete(&out) {
            build_baseline(&out, kfdo)?;
        }
    }
    let held = hold_baseline(&out);
    assert!(
        baseline_complete(&out),
        "kfdo optimize {} -o {} left no baseline (build/baseline/arch/x86/boot/bzImage, \
         build/baseline/vmlinux, initramfs/workload.cpio.gz)",
        kernel_test_recipe().display(),
        out.display()
    );
    Some(held)
}

/// Runs the kernel-recipe test's first run into `out`; None when a tool it needs is
/// missing on a developer's machine (the skip is reported).
fn build_baseline(out: &Path, kfdo: Option<&Path>) -> Option<()> {
    if !require_tools(&[
        "clang-19",
        "ld.lld-19",
        "llvm-profgen-19",
        "qemu-system-x86_64",
    ]) {
        return None;
    }
    let kfdo = match kfdo {
        Some(k) => k.to_path_buf(),
        None => kfdo_beside_this_test()?,
    };
    let recipe = kernel_test_recipe();
    let mut cmd = Command::new(&kfdo);
    cmd.arg("optimize")
        .arg(&recipe)
        .arg("-o")
        .arg(out)
        // optimize_kernel's first run (crates/kfdo/tests/cli/optimize_kernel.rs): its
        // variants, so that it finds every kernel built; the twins stay its own part.
        .args([
            "--variants",
            "autofdo",
            "--no-heatmaps",
            "--no-packages",
            "--no-uml",
        ])
        .stdin(Stdio::null());
    eprintln!(
        "building the kernel-recipe test's kernels: {} optimize {} -o {} (tens of minutes \
         on 2 cores)",
        kfdo.display(),
        recipe.display(),
        out.display()
    );
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", kfdo.display()));
    if let Err(e) = success(&o, &format!("kfdo optimize {}", recipe.display())) {
        panic!("{e}");
    }
    Some(())
}

/// `kfdo` in the cargo target directory of this test binary (`target/release/deps/T` ->
/// `target/release/kfdo`); None to skip (reported) when it was not built.
fn kfdo_beside_this_test() -> Option<PathBuf> {
    let exe = std::env::current_exe().expect("the test binary's path");
    let kfdo = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("kfdo"))
        .unwrap_or_default();
    require(
        kfdo.is_file(),
        &format!("no kfdo binary at {}", kfdo.display()),
        "cargo build --release -p kfdo, or cargo test --release --workspace",
    )
    .then_some(kfdo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writer_excludes_everyone_and_readers_share() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("kernel-recipe-test");
        let writing = lock_recipe_out(&out);
        assert!(tmp.path().join("kernel-recipe-test.lock").is_file());
        assert!(open_lock(&out).try_lock_shared().is_err());
        drop(writing);

        let _reading = share_recipe_out(&out);
        assert!(open_lock(&out).try_lock_shared().is_ok());
        assert!(open_lock(&out).try_lock().is_err());
    }

    #[test]
    fn the_baseline_is_there_only_with_its_three_files() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path();
        let files = baseline_files(out);
        for (i, f) in files.iter().enumerate() {
            assert!(!baseline_complete(out), "complete with {i} of the files");
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, "x").unwrap();
        }
        assert!(baseline_complete(out));
        let held = hold_baseline(out);
        assert_eq!(
            [held.bzimage, held.vmlinux, held.initrd],
            baseline_files(out)
        );
    }
}
