//! `record_system` through the library: filters (kernel / user / all), `nokaslr`, and a
//! wrong vmlinux. Boots the kernel-recipe test's x86-64 baseline with its workload
//! initramfs (`kfdo_testkit::kernel::recipe_baseline`: on a developer's machine skipped,
//! with a message, unless the kernel-recipe test's directory is there; in CI built with
//! the `kfdo` binary of this target directory when missing).

use kfdo_record::{record_system, Filter, KernelElf, SystemConfig};
use kfdo_testkit::kernel::RecipeBaseline;

/// The kernel-recipe test's baseline (built in CI, skipped elsewhere without it).
fn cache() -> Option<RecipeBaseline> {
    kfdo_testkit::kernel::recipe_baseline(None)
}

/// The workloads of a boot: pipes, file I/O, system calls and fork / exec, in user space
/// and in the kernel.
const RUN: &str = "kfdo.run=pipe:320,file:20,syscall:640,fork_exec:5";

fn config(k: &RecipeBaseline, out: &std::path::Path, filter: Filter) -> SystemConfig {
    let mut c = SystemConfig::new(k.bzimage.clone(), out);
    c.initrd = Some(k.initrd.clone());
    c.vmlinux = Some(k.vmlinux.clone());
    c.append = Some(RUN.into());
    c.period = 1009;
    c.filter = filter;
    c.timeout_s = 120;
    c
}

/// Kernel and user addresses in the samples' IPs and branch stacks.
fn addresses(data: &std::path::Path) -> (usize, usize, String) {
    let out = std::process::Command::new("perf")
        .args(["script", "-F", "ip,brstack", "--show-mmap-events", "-i"])
        .arg(data)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (mut k, mut u) = (0, 0);
    for l in text.lines().filter(|l| !l.contains("PERF_RECORD")) {
        for tok in l.split_whitespace() {
            for a in tok.split('/').take(2) {
                let a = a.trim_start_matches("0x");
                if let Ok(v) = u64::from_str_radix(a, 16) {
                    if v >= 0xffff_8000_0000_0000 {
                        k += 1
                    } else if v != 0 {
                        u += 1
                    }
                }
            }
        }
    }
    (k, u, text)
}

#[test]
fn filters_and_kaslr() {
    let Some(kernel) = cache() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let link = KernelElf::read(&kernel.vmlinux).unwrap();

    // Kernel only, KASLR off: _text is the link-time one.
    let out = tmp.path().join("k.data");
    let mut c = config(&kernel, &out, Filter::Kernel);
    c.append = Some(format!("{RUN} nokaslr"));
    let r = record_system(&c).unwrap();
    assert!(r.samples > 100, "{r:?}");
    assert_eq!(r.kernel_text, Some(link.text));
    assert_eq!(r.kaslr_offset, Some(0));
    let (k, u, text) = addresses(&out);
    assert!(
        k > 0 && u == 0,
        "kernel-only: {k} kernel, {u} user addresses"
    );
    assert!(text.contains("[kernel.kallsyms]_text"));

    // User only: no kernel addresses and no kernel mapping.
    let out = tmp.path().join("u.data");
    let r = record_system(&config(&kernel, &out, Filter::User)).unwrap();
    assert!(r.samples > 10, "{r:?}");
    assert_eq!(r.kernel_text, None);
    let (k, u, _) = addresses(&out);
    assert!(k == 0 && u > 0, "user-only: {k} kernel, {u} user addresses");

    // Both.
    let out = tmp.path().join("a.data");
    let r = record_system(&config(&kernel, &out, Filter::All)).unwrap();
    let (k, u, _) = addresses(&out);
    assert!(k > 0 && u > 0, "all: {k} kernel, {u} user addresses");
    assert_eq!(r.kaslr_offset.unwrap() % (2 << 20), 0);
}

#[test]
fn wrong_vmlinux_is_refused() {
    let Some(k) = cache() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("w.data");
    let mut c = config(&k, &out, Filter::Kernel);
    // This test program is an ELF with no _text: refused before booting. (Through
    // /proc/self/exe: the running program, also when its file was rebuilt meanwhile.)
    c.vmlinux = Some("/proc/self/exe".into());
    let e = record_system(&c).unwrap_err().to_string();
    assert!(e.contains("_text"), "{e}");
    assert!(!out.exists());
}

/// A boot that wants no samples (its console or counters alone, as kfdo optimize's
/// counting and gcov boots) may end with none; one that wants them may not.
#[test]
fn a_boot_without_samples_is_an_error_only_when_samples_were_wanted() {
    let Some(k) = cache() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("none.data");
    let mut c = config(&k, &out, Filter::Kernel);
    c.period = 1 << 62;
    c.depth = 1;
    let e = record_system(&c).unwrap_err().to_string();
    assert!(
        e.contains("holds no samples") && e.contains("--period"),
        "{e}"
    );
    assert!(!out.exists(), "an empty recording was written");

    c.samples_wanted = false;
    let o = record_system(&c).unwrap();
    assert_eq!(o.samples, 0);
}
