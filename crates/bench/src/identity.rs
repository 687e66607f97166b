//! What a command runs, identified, so that runs are pooled only with runs of the same
//! program: a rebuilt binary under an unchanged command line is a new series, not more
//! samples of the old one.
//!
//! The identity of an executable is its GNU build-id (the linker's hash of its
//! contents) or, without one, a sha256 of its bytes. A variant's identity is that of
//! the program its command starts (the first word, through PATH, after `VAR=value`
//! words and `exec`; for `sh -c 'CMD'` the program CMD starts) and of the program of
//! its template (`{bin}`), when it has one. A command whose program cannot be found (a
//! shell loop, a builtin) has no identity: its runs pool as they always did.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::runner::{Arm, Protocol, Shell};

/// The identity of what `v` runs under `protocol`, e.g. `build-id:1a2b...`, or two of them
/// joined by " + " (the command's program, then the template's), or `None`.
pub fn of_arm(v: &Arm, protocol: &Protocol) -> Option<String> {
    let dir = protocol
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let path_var = protocol
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_default();
    let mut exes: Vec<PathBuf> = Vec::new();
    let words: Vec<String> = match &protocol.shell {
        Shell::None => v.command.split_whitespace().map(String::from).collect(),
        Shell::Shell(_) => shell_words::split(&v.command).unwrap_or_default(),
    };
    if let Some(exe) = first_program(&words, &dir, &path_var) {
        exes.push(exe);
    }
    if let Some(slot) = &v.program {
        let p = dir.join(&slot.path);
        if p.is_file() && !exes.contains(&p) {
            exes.push(p);
        }
    }
    let ids: Vec<String> = exes.iter().filter_map(|p| of_file(p)).collect();
    (!ids.is_empty()).then(|| ids.join(" + "))
}

/// Shells whose `-c CMD` runs CMD: the program that matters is CMD's.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh"];

/// The executable `words` start, resolved as `execvp` would.
fn first_program(words: &[String], dir: &Path, path_var: &str) -> Option<PathBuf> {
    let mut rest = words
        .iter()
        .skip_while(|w| is_assignment(w))
        .skip_while(|w| *w == "exec");
    let first = rest.next()?;
    let exe = resolve(first, dir, path_var)?;
    let name = exe.file_name()?.to_string_lossy().to_string();
    if SHELLS.contains(&name.as_str()) {
        let args: Vec<&String> = rest.collect();
        if let Some(i) = args.iter().position(|a| *a == "-c") {
            let inner = shell_words::split(args.get(i + 1)?).ok()?;
            return first_program(&inner, dir, path_var);
        }
    }
    Some(exe)
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// `word` as a file: a path (relative to `dir`) if it has a slash, else the first
/// executable of that name on `path_var`.
fn resolve(word: &str, dir: &Path, path_var: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_exe = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if word.contains('/') {
        let p = dir.join(word);
        return is_exe(&p).then_some(p);
    }
    path_var
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| dir.join(d).join(word))
        .find(|p| is_exe(p))
}

/// `build-id:HEX` of an ELF file that has one, else `sha256:HEX` of its bytes; `None`
/// if it cannot be read.
pub fn of_file(path: &Path) -> Option<String> {
    if let Ok(bin) = kfdo_elf::Binary::open(path) {
        if let Some(id) = bin.build_id().filter(|id| !id.is_empty()) {
            return Some(format!("build-id:{}", hex(id)));
        }
    }
    let bytes = std::fs::read(path).ok()?;
    Some(format!("sha256:{}", hex(&Sha256::digest(&bytes))))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::StopRule;

    fn plan_in(dir: &Path) -> Protocol {
        Protocol {
            cwd: Some(dir.to_path_buf()),
            env: vec![("PATH".into(), dir.join("bin").display().to_string())],
            ..Protocol::new(0, StopRule::Fixed(1))
        }
    }

    fn script(path: &Path, body: &str) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn the_program_a_command_starts_through_path_assignments_exec_and_sh_c() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        script(&d.join("bin/prog"), "#!/bin/sh\necho one\n");
        script(&d.join("bin/sh"), "#!/bin/sh\n");
        let p = plan_in(d);
        let id = |cmd: &str| of_arm(&Arm::new("v", cmd), &p);
        let prog = of_file(&d.join("bin/prog")).unwrap();
        assert!(prog.starts_with("sha256:"), "{prog}");
        assert_eq!(id("prog --size 5").as_ref(), Some(&prog));
        assert_eq!(id("A=1 exec prog").as_ref(), Some(&prog));
        assert_eq!(id("sh -c 'prog 1 | wc -c'").as_ref(), Some(&prog));
        assert_eq!(id("./bin/prog").as_ref(), Some(&prog));
        // Nothing to identify: a shell loop, a missing program.
        assert_eq!(id("i=0; while [ $i -lt 3 ]; do i=$((i+1)); done"), None);
        assert_eq!(id("nonexistent-prog"), None);
        // Rebuilt: another identity.
        script(&d.join("bin/prog"), "#!/bin/sh\necho two\n");
        assert_ne!(id("prog --size 5").as_ref(), Some(&prog));
    }

    #[test]
    fn a_template_adds_its_program_and_an_elf_build_id_is_preferred() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        script(&d.join("bin/runner"), "#!/bin/sh\n");
        // This test binary itself: an ELF file the Rust toolchain gives a build-id to
        // (or, where it does not, one identified by its hash).
        let elf = std::env::current_exe().unwrap();
        let v = Arm::from_template("v", "runner {bin} -x", &elf);
        let id = of_arm(&v, &plan_in(d)).unwrap();
        let (a, b) = id.split_once(" + ").unwrap();
        assert_eq!(Some(a.to_string()), of_file(&d.join("bin/runner")));
        assert_eq!(Some(b.to_string()), of_file(&elf));
        assert!(
            b.starts_with("build-id:") || b.starts_with("sha256:"),
            "{b}"
        );
    }
}
