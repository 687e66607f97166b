//! How much of the profile a UML twin can use, so a reader can weigh its native time:
//! the share of the profile's samples in architecture code (functions the x86 baseline
//! defines in objects under `arch/`: system call entry, interrupts, the x86 memory and
//! timer code, none of which UML runs), and the share in functions the UML baseline
//! twin also has (the profile's samples the twin's compiler can apply), with the hottest
//! functions it lacks.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use kfdo_elf::{canonical_fn_name, Binary};

/// The profile's samples, split.
#[derive(Debug, Clone, PartialEq)]
pub struct Coverage {
    pub functions: usize,
    pub samples: u64,
    /// In functions defined under the x86 kernel's `arch/`.
    pub arch_samples: u64,
    /// Functions (and their samples) the UML twin defines too.
    pub in_twin_functions: usize,
    pub in_twin_samples: u64,
    /// The hottest functions the twin lacks, with their samples.
    pub missing: Vec<(String, u64)>,
}

const STT_FUNC: u8 = 2;

fn canonical(name: &str) -> String {
    String::from_utf8_lossy(canonical_fn_name(name.as_bytes())).into_owned()
}

/// The functions an ELF file defines, by canonical name.
fn defined_functions(path: &Path, into: &mut BTreeSet<String>) -> anyhow::Result<()> {
    let bin = Binary::open(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let data = bin.data();
    for s in bin.symbols().symtab() {
        if s.st_type == STT_FUNC && s.section.is_some() {
            into.insert(canonical(&String::from_utf8_lossy(s.name(data))));
        }
    }
    Ok(())
}

/// Every object file under `dir`.
fn objects_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            objects_under(&p, out);
        } else if p.extension().is_some_and(|x| x == "o") {
            out.push(p);
        }
    }
}

/// The functions of the kernel build in `build_dir` whose objects are under `arch/`.
pub fn arch_functions(build_dir: &Path) -> BTreeSet<String> {
    let mut objects = Vec::new();
    objects_under(&build_dir.join("arch"), &mut objects);
    let mut names = BTreeSet::new();
    for o in objects {
        // kbuild's own objects that are not ELF (none in a non-LTO build) count for nothing.
        let _ = defined_functions(&o, &mut names);
    }
    names
}

/// Splits `profile`'s samples (top-level function totals) by `arch` and by the functions
/// the twin defines.
pub fn split(
    profile: &BTreeMap<String, u64>,
    arch: &BTreeSet<String>,
    twin: &BTreeSet<String>,
) -> Coverage {
    let mut c = Coverage {
        functions: profile.len(),
        samples: 0,
        arch_samples: 0,
        in_twin_functions: 0,
        in_twin_samples: 0,
        missing: Vec::new(),
    };
    for (name, &n) in profile {
        let name = canonical(name);
        c.samples += n;
        if arch.contains(&name) {
            c.arch_samples += n;
        }
        if twin.contains(&name) {
            c.in_twin_functions += 1;
            c.in_twin_samples += n;
        } else {
            c.missing.push((name, n));
        }
    }
    c.missing.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    c.missing.truncate(8);
    c
}

/// The coverage of `profile` (kfdo's AutoFDO profile of the x86 baseline in
/// `baseline_dir`) by the UML twin `twin_exe`.
pub fn coverage(profile: &Path, baseline_dir: &Path, twin_exe: &Path) -> anyhow::Result<Coverage> {
    let p = kfdo_afdo::read_profile(profile)
        .map_err(|e| anyhow::anyhow!("{}: {e}", profile.display()))?;
    let totals: BTreeMap<String, u64> = p
        .functions
        .iter()
        .map(|(name, f)| (name.clone(), f.total_samples))
        .collect();
    let mut twin = BTreeSet::new();
    defined_functions(twin_exe, &mut twin)?;
    Ok(split(&totals, &arch_functions(baseline_dir), &twin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_split_by_arch_and_by_what_the_twin_defines() {
        let profile: BTreeMap<String, u64> = [
            ("tcp_sendmsg", 50),
            ("do_syscall_64", 30),
            ("memcpy_orig", 15),
            ("finish_task_switch.llvm.42", 5),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect();
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        let c = split(
            &profile,
            &set(&["do_syscall_64", "memcpy_orig"]),
            &set(&["tcp_sendmsg", "finish_task_switch"]),
        );
        assert_eq!(c.samples, 100);
        assert_eq!(c.arch_samples, 45);
        assert_eq!((c.in_twin_functions, c.in_twin_samples), (2, 55));
        assert_eq!(
            c.missing,
            vec![
                ("do_syscall_64".to_string(), 30),
                ("memcpy_orig".into(), 15)
            ]
        );
    }
}
