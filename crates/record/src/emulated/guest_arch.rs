//! What the guest's architecture decides about emulation, in one place: which QEMU runs
//! it, where a foreign program's shared libraries are, and what perf.data says. The
//! architecture itself always comes from the program's (or kernel's) ELF header
//! (`kfdo_elf::Binary::arch`); nothing here takes it from a flag.

use kfdo_elf::Arch;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The architectures the plugin classifies branches for (`crates/qemu-plugin/src/classify*.rs`).
pub(crate) fn supported(arch: Arch) -> bool {
    matches!(arch, Arch::X86_64 | Arch::Aarch64)
}

/// QEMU's user-mode emulator for `arch` (found on PATH), e.g. `qemu-aarch64`.
pub(crate) fn qemu_user(arch: Arch) -> PathBuf {
    PathBuf::from(format!("qemu-{}", arch.uname().unwrap_or("x86_64")))
}

/// Debian's cross sysroot for `arch` (`libc6-dev-arm64-cross` installs
/// `/usr/aarch64-linux-gnu`): where QEMU finds a dynamically linked foreign program's ELF
/// interpreter and libraries (`-L`). None for the host's own architecture, whose programs
/// use the host's libraries.
pub(crate) fn sysroot(arch: Arch) -> Option<PathBuf> {
    if host_arch() == Some(arch) {
        return None;
    }
    let dir = Path::new("/usr").join(format!("{}-linux-gnu", arch.uname()?));
    dir.is_dir().then_some(dir)
}

/// The QEMU `-L` arguments for a program of `arch`: the cross sysroot, unless the caller's
/// environment names one already (QEMU reads `QEMU_LD_PREFIX` itself), or none.
pub(crate) fn sysroot_args(arch: Arch, env: &[(OsString, OsString)]) -> Vec<PathBuf> {
    let set = env.iter().any(|(k, _)| k == "QEMU_LD_PREFIX")
        || std::env::var_os("QEMU_LD_PREFIX").is_some();
    match sysroot(arch) {
        Some(dir) if !set => vec![PathBuf::from("-L"), dir],
        _ => Vec::new(),
    }
}

/// The host's architecture, as this build of kfdo was compiled for it.
pub(crate) fn host_arch() -> Option<Arch> {
    Arch::from_uname(std::env::consts::ARCH)
}

/// Whether `name` is an executable file in a PATH directory.
pub(crate) fn on_path(name: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|d| {
        std::fs::metadata(d.join(name))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// QEMU's system emulator for `arch`, e.g. `qemu-system-aarch64`.
pub(crate) fn qemu_system(arch: Arch) -> PathBuf {
    PathBuf::from(format!("qemu-system-{}", arch.uname().unwrap_or("x86_64")))
}

/// The board and CPU a kernel of `arch` boots on. x86-64: QEMU's default PC. arm64: the
/// `virt` board (a device tree, PL011 serial, GIC, PSCI for the final reboot) with a
/// Cortex-A72, a plain ARMv8.0 core: `-cpu max` would add pointer authentication, which
/// TCG emulates slowly, to every function's prologue and epilogue.
pub(crate) fn system_machine_args(arch: Arch) -> &'static [&'static str] {
    match arch {
        Arch::Aarch64 => &["-machine", "virt", "-cpu", "cortex-a72"],
        _ => &[],
    }
}

/// The kernel command line's console and the settings the recorder relies on: the
/// board's serial port, and for arm64 no KASLR (QEMU's `virt` board hands the kernel a
/// seed, and arm64 KASLR moves the image anywhere in the vmalloc area, outside the range
/// the recorder places it in; x86-64 KASLR stays on, its shift is found from the samples).
pub(crate) fn system_console_args(arch: Arch) -> &'static str {
    match arch {
        Arch::Aarch64 => "console=ttyAMA0 nokaslr",
        _ => "console=ttyS0",
    }
}

/// The architecture of a kernel image by its boot header: an x86 bzImage carries "HdrS"
/// at 0x202, an arm64 `Image` "ARM\x64" at 0x38 (Documentation/arch/arm64/booting.rst),
/// an ELF vmlinux its machine. None when the file is none of these.
pub fn kernel_image_arch(head: &[u8]) -> Option<Arch> {
    if head.get(0x202..0x206) == Some(b"HdrS") {
        return Some(Arch::X86_64);
    }
    if head.get(0x38..0x3c) == Some(b"ARM\x64") {
        return Some(Arch::Aarch64);
    }
    if head.starts_with(b"\x7fELF") && head.len() >= 20 {
        return Some(Arch::from_e_machine(u16::from_le_bytes([
            head[18], head[19],
        ])));
    }
    None
}

/// perf's ARCH header feature (`uname -m` of the recorded machine): the guest's.
pub(crate) fn perf_arch(arch: Arch) -> &'static str {
    arch.uname().unwrap_or("x86_64")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emulators_follow_the_architecture() {
        assert_eq!(qemu_user(Arch::X86_64), Path::new("qemu-x86_64"));
        assert_eq!(qemu_user(Arch::Aarch64), Path::new("qemu-aarch64"));
        assert_eq!(perf_arch(Arch::Aarch64), "aarch64");
        assert!(supported(Arch::Aarch64) && !supported(Arch::Other(243)));
    }

    #[test]
    fn kernel_images_say_their_architecture() {
        let mut bz = vec![0u8; 0x400];
        bz[0x202..0x206].copy_from_slice(b"HdrS");
        assert_eq!(kernel_image_arch(&bz), Some(Arch::X86_64));
        let mut image = vec![0u8; 0x40];
        image[0x38..0x3c].copy_from_slice(b"ARM\x64");
        assert_eq!(kernel_image_arch(&image), Some(Arch::Aarch64));
        assert_eq!(kernel_image_arch(b"not a kernel"), None);
        assert_eq!(qemu_system(Arch::Aarch64), Path::new("qemu-system-aarch64"));
        assert!(system_console_args(Arch::Aarch64).contains("ttyAMA0"));
    }

    #[test]
    fn a_foreign_program_gets_the_cross_sysroot_unless_one_is_named() {
        if host_arch() != Some(Arch::X86_64) {
            return;
        }
        assert_eq!(sysroot(Arch::X86_64), None, "the host's own libraries");
        let have = Path::new("/usr/aarch64-linux-gnu").is_dir();
        assert_eq!(sysroot(Arch::Aarch64).is_some(), have);
        let named = vec![(OsString::from("QEMU_LD_PREFIX"), OsString::from("/x"))];
        assert!(sysroot_args(Arch::Aarch64, &named).is_empty());
    }
}
