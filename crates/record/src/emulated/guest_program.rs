//! The program QEMU is handed: a name found on PATH or a path, checked to be an ELF
//! program of a supported architecture, with a `#!` script resolved to its interpreter.

use crate::emulated::guest_arch;
use crate::emulated::program_file::{self, Problem, ProgramFile};
use crate::error::Error;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The program to hand QEMU: an x86-64 or aarch64 ELF file, with scripts (`#!`) resolved
/// to their interpreter (qemu-user does not run scripts itself).
pub(crate) struct Launch {
    pub exe: PathBuf,
    /// The architecture of `exe`, from its ELF header: which QEMU runs it.
    pub arch: kfdo_elf::Arch,
    pub argv0: OsString,
    pub args: Vec<OsString>,
    pub display: String,
}

pub(crate) fn resolve_program(program: &OsStr, args: &[OsString]) -> Result<Launch, Error> {
    let display = program.to_string_lossy().to_string();
    if program.is_empty() {
        return Err(Error::Config("no program given".into()));
    }
    let path = find_in_path(program).ok_or_else(|| Error::ProgramNotFound {
        program: display.clone(),
        how: if program.as_bytes().contains(&b'/') {
            "that path".into()
        } else {
            "the directories in PATH".into()
        },
    })?;
    let kind = program_file::inspect(&path).map_err(|e| Error::Program {
        program: display.clone(),
        what: e.to_string(),
    })?;
    let head = match kind {
        ProgramFile::Elf(arch) => {
            let exe = std::fs::canonicalize(&path).map_err(|e| Error::Program {
                program: display.clone(),
                what: e.to_string(),
            })?;
            return Ok(Launch {
                exe,
                arch,
                argv0: program.to_os_string(),
                args: args.to_vec(),
                display,
            });
        }
        ProgramFile::Script(head) => head,
    };
    let line = head[2..].split(|&c| c == b'\n').next().unwrap_or(&[]);
    let line = String::from_utf8_lossy(line).trim().to_string();
    let mut parts = line.splitn(2, [' ', '\t']);
    let interp = parts.next().unwrap_or("").to_string();
    let opt = parts
        .next()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    if interp.is_empty() {
        return Err(Error::Program {
            program: display,
            what: "empty #! line".into(),
        });
    }
    let ipath = PathBuf::from(&interp);
    let bad = |what: String| Error::Program {
        program: display.clone(),
        what,
    };
    let arch = match program_file::inspect(&ipath) {
        Ok(ProgramFile::Elf(arch)) => arch,
        Ok(ProgramFile::Script(_)) => {
            return Err(bad(format!(
                "its interpreter {interp} is a #! script itself (QEMU needs an ELF program there)"
            )))
        }
        Err(e @ Problem::Io(_)) => return Err(bad(format!("its interpreter {interp}: {e}"))),
        Err(e @ Problem::Not(_)) => return Err(bad(format!("its interpreter {interp} {e}"))),
    };
    let mut a: Vec<OsString> = Vec::new();
    if let Some(o) = opt {
        a.push(o.into());
    }
    a.push(path.clone().into_os_string());
    a.extend(args.iter().cloned());
    let exe = std::fs::canonicalize(&ipath).unwrap_or(ipath);
    Ok(Launch {
        exe,
        arch,
        argv0: interp.into(),
        args: a,
        display,
    })
}

fn find_in_path(program: &OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.as_bytes().contains(&b'/') {
        let p = PathBuf::from(program);
        return runnable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| runnable(p))
}

/// The architecture of the program `argv0` names (a `#!` script: its interpreter's) when
/// it is not the host's: a program only an emulator can run. None when it is the host's,
/// or cannot be resolved (recording reports that itself).
pub(crate) fn foreign_program(argv0: &OsStr) -> Option<kfdo_elf::Arch> {
    let launch = resolve_program(argv0, &[]).ok()?;
    (Some(launch.arch) != guest_arch::host_arch()).then_some(launch.arch)
}
