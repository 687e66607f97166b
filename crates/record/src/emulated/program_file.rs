//! What a program file is, before QEMU is asked to run it: an x86-64 or aarch64 ELF
//! program (checked with `kfdo_elf`, whose header says which), or a `#!` script, whose interpreter is run instead (qemu-user does
//! not run scripts itself).

use kfdo_elf::{Arch, Binary, ElfError};
use std::fmt;
use std::path::Path;

pub(crate) enum ProgramFile {
    /// An ELF program of an architecture the plugin knows, from its header.
    Elf(Arch),
    /// A `#!` script: its first bytes (up to 256), which hold the `#!` line.
    Script(Vec<u8>),
}

/// Why a file cannot be run under QEMU user mode.
#[derive(Debug)]
pub(crate) enum Problem {
    /// It cannot be opened or read: why.
    Io(String),
    /// It is not something qemu-x86_64 / qemu-aarch64 runs: what it is instead.
    Not(String),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Io(s) | Problem::Not(s) => f.write_str(s),
        }
    }
}

const NOT_SUPPORTED: &str = "is not an x86-64 or aarch64 program (vLBR runs those under \
                             qemu-x86_64 / qemu-aarch64)";

pub(crate) fn inspect(path: &Path) -> Result<ProgramFile, Problem> {
    match Binary::open(path) {
        Ok(b) if crate::emulated::guest_arch::supported(b.arch()) => Ok(ProgramFile::Elf(b.arch())),
        Ok(b) => Err(Problem::Not(format!(
            "is an {} program; it {NOT_SUPPORTED}",
            b.arch()
        ))),
        // 32-bit (kfdo_elf reads ELF64 only).
        Err(ElfError::Unsupported { .. }) => Err(Problem::Not(NOT_SUPPORTED.into())),
        Err(ElfError::NotElf { .. }) => {
            let head = read_head(path)?;
            if head.starts_with(b"#!") {
                Ok(ProgramFile::Script(head))
            } else {
                Err(Problem::Not("is not an ELF program or a #! script".into()))
            }
        }
        Err(ElfError::Io { source, .. }) => Err(Problem::Io(format!("cannot open: {source}"))),
        Err(ElfError::Malformed { what, .. }) => Err(Problem::Not(format!(
            "is a malformed or truncated ELF file ({what}); rebuild or re-copy it"
        ))),
        Err(e) => Err(Problem::Not(e.to_string())),
    }
}

/// The first bytes of a file, for its `#!` line.
fn read_head(path: &Path) -> Result<Vec<u8>, Problem> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| Problem::Io(format!("cannot open: {e}")))?;
    let mut head = vec![0u8; 256];
    let n = f
        .read(&mut head)
        .map_err(|e| Problem::Io(format!("cannot read: {e}")))?;
    head.truncate(n);
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn file(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    /// A header-only little-endian ELF64 executable for `machine`.
    fn elf64(machine: u16) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
        h[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
        h[18..20].copy_from_slice(&machine.to_le_bytes());
        h[20..24].copy_from_slice(&1u32.to_le_bytes()); // EV_CURRENT
        h[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
        h[54..56].copy_from_slice(&56u16.to_le_bytes()); // e_phentsize
        h[58..60].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
        h
    }

    fn problem(p: &Path) -> String {
        match inspect(p) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{} accepted", p.display()),
        }
    }

    #[test]
    fn programs_and_scripts() {
        let me = std::env::current_exe().unwrap();
        assert!(matches!(inspect(&me), Ok(ProgramFile::Elf(_))));
        let dir = tempfile::tempdir().unwrap();
        let s = file(dir.path(), "s", b"#!/bin/sh -e\necho hi\n");
        match inspect(&s) {
            Ok(ProgramFile::Script(head)) => assert_eq!(head, b"#!/bin/sh -e\necho hi\n"),
            _ => panic!("not a script"),
        }
    }

    #[test]
    fn what_is_not_runnable() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(
            problem(&file(d, "text", b"hello\n")),
            "is not an ELF program or a #! script"
        );
        assert_eq!(
            problem(&file(d, "empty", b"")),
            "is not an ELF program or a #! script"
        );
        // An ELF32 header; an ELF64 one for another machine (RISC-V).
        let mut elf32 = elf64(62);
        elf32[4] = 1;
        assert_eq!(problem(&file(d, "elf32", &elf32)), NOT_SUPPORTED);
        assert_eq!(
            problem(&file(d, "riscv", &elf64(243))),
            format!("is an ELF machine 243 program; it {NOT_SUPPORTED}")
        );
        assert!(matches!(
            inspect(&file(d, "x86_64", &elf64(62))),
            Ok(ProgramFile::Elf(Arch::X86_64))
        ));
        assert!(matches!(
            inspect(&file(d, "aarch64", &elf64(183))),
            Ok(ProgramFile::Elf(Arch::Aarch64))
        ));
        // Program headers past the end of the file: kfdo_elf says what is wrong.
        let mut cut = elf64(62);
        cut[32..40].copy_from_slice(&64u64.to_le_bytes()); // e_phoff
        cut[56..58].copy_from_slice(&1u16.to_le_bytes()); // e_phnum
        let cut = problem(&file(d, "cut", &cut));
        assert!(
            cut.starts_with("is a malformed or truncated ELF file ("),
            "{cut}"
        );
        assert!(matches!(inspect(&d.join("missing")), Err(Problem::Io(_))));
        let locked = file(d, "locked", b"#!/bin/sh\n");
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o111)).unwrap();
        // Root reads it anyway; anyone else cannot open it.
        if std::fs::read(&locked).is_err() {
            assert!(problem(&locked).starts_with("cannot open: "));
        }
    }
}
