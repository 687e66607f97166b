//! What the guest's architecture decides about emulation, in one place: which QEMU runs
//! it, where a foreign program's shared libraries are, and what perf.data says. The
//! architecture itself always comes from the program's (or kernel's) ELF header
//! (`kfdo_elf::Binary::arch`); nothing here takes it from a flag.

use kfdo_elf::Arch;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The architectures the plugin classifies branches for (`plugin/classify*.rs`).
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

/// The architecture of the program `argv0` names (a `#!` script: its interpreter's) when
/// it is not the host's: a program only an emulator can run. None when it is the host's,
/// or cannot be resolved (recording reports that itself).
pub(crate) fn foreign_program(argv0: &std::ffi::OsStr) -> Option<Arch> {
    let launch = super::user::resolve_program(argv0, &[]).ok()?;
    (Some(launch.arch) != host_arch()).then_some(launch.arch)
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
