//! A program recipe's compiler (`crate::vocabulary::CompilerName`) resolved against the
//! `--cc` that runs, and GCC's flags.
//!
//! clang (the default) builds every variant. GCC builds `baseline`, `autofdo`
//! (`-fauto-profile=` with kfdo's gcov-format profile) and `ifdo`
//! (`-fprofile-generate` / `-fprofile-use`); what it cannot build is refused from
//! `vocabulary::support`'s table.

use std::path::Path;
use std::process::Command;

use anyhow::bail;

use crate::vocabulary::{Compiler, CompilerName, Variant};

/// Flags every GCC build gets: line tables for the sampling profile, DWARF 4 because
/// valgrind 3.19 (cachegrind counters) cannot read DWARF 5 (gcc-11 and later default
/// to 5). GCC has no `-fdebug-info-for-profiling`: its discriminators are always on.
pub const GCC_DEBUG_CFLAGS: &str = "-g -gdwarf-4";

/// The compiler `choice` names. GCC's major release is asked of `cc` itself
/// (`-dumpversion`), so `--cc` pointing elsewhere is honoured; a clang release must be
/// installed (its other tools are run by name).
pub fn resolve(choice: CompilerName, cc: &str) -> anyhow::Result<Compiler> {
    if let Some(Compiler::Clang { llvm }) = choice.compiler() {
        let runs = Command::new(cc)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !runs {
            bail!(
                "cannot run {cc} (the recipe builds with {}; install {}: apt-get install {}, \
                 or pick another release with --llvm)",
                llvm.clang(),
                llvm,
                llvm.packages().join(" ")
            );
        }
        return Ok(Compiler::Clang { llvm });
    }
    let out = Command::new(cc).arg("-dumpversion").output().map_err(|e| {
        anyhow::anyhow!(
            "cannot run {cc}: {e} (the recipe's [build] compiler = \"{choice}\"; install it, \
             e.g. apt-get install {cc}, or name another with --cc)"
        )
    })?;
    let text = String::from_utf8_lossy(&out.stdout);
    let major = text
        .trim()
        .split('.')
        .next()
        .and_then(|m| m.parse::<u32>().ok());
    match major {
        Some(major) if out.status.success() => Ok(Compiler::Gcc { major }),
        _ => bail!(
            "{cc} -dumpversion printed {:?}: not a GCC release number (the recipe's \
             [build] compiler = \"{choice}\"; --cc must name a gcc)",
            text.trim()
        ),
    }
}

/// CFLAGS and LDFLAGS of a GCC build of `v`: `profile` is the gcov AutoFDO file
/// (autofdo); ifdo reads the `.gcda` files placed beside its objects before the build
/// (`compile`), so its flag names no path.
pub fn gcc_flags(v: Variant, opt: &str, profile: Option<&Path>) -> (String, String) {
    let base = format!("{opt} {GCC_DEBUG_CFLAGS}");
    match (v, profile) {
        (Variant::Autofdo, Some(p)) => (
            format!("{base} -fauto-profile={}", p.display()),
            String::new(),
        ),
        // -fprofile-correction: counters of a program's threads may disagree a little.
        (Variant::Ifdo, _) => (
            format!("{base} -fprofile-use -fprofile-correction"),
            "-fprofile-use".into(),
        ),
        _ => (base, String::new()),
    }
}

/// Flags of the GCC build that trains `ifdo`.
pub fn gcc_instrumented_flags(opt: &str) -> (String, String) {
    (
        format!("{opt} {GCC_DEBUG_CFLAGS} -fprofile-generate"),
        "-fprofile-generate".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clang_release_that_is_not_installed_is_named_with_its_packages() {
        let e = resolve(CompilerName::parse("clang-7").unwrap(), "clang-7")
            .unwrap_err()
            .to_string();
        assert!(e.contains("apt-get install clang-7 lld-7"), "{e}");
    }

    #[test]
    fn gcc_flags_name_the_profile() {
        let p = Path::new("/p/kfdo.gcov");
        let (c, l) = gcc_flags(Variant::Autofdo, "-O2", Some(p));
        assert_eq!(c, "-O2 -g -gdwarf-4 -fauto-profile=/p/kfdo.gcov");
        assert_eq!(l, "");
        let (c, l) = gcc_flags(Variant::Ifdo, "-O2", None);
        assert!(c.ends_with("-fprofile-use -fprofile-correction") && l == "-fprofile-use");
        assert_eq!(
            gcc_flags(Variant::Baseline, "-O3", None).0,
            "-O3 -g -gdwarf-4"
        );
        assert!(gcc_instrumented_flags("-O2")
            .0
            .ends_with("-fprofile-generate"));
    }

    #[test]
    fn the_gcc_on_path_reports_its_release() {
        if !kfdo_testkit::require_tools(&["gcc"]) {
            return;
        }
        match resolve(CompilerName::GccOnPath, "gcc").unwrap() {
            Compiler::Gcc { major } => assert!(major >= 4, "{major}"),
            c => panic!("{c:?}"),
        }
        let e = resolve(CompilerName::GccOnPath, "/bin/true")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a GCC release"), "{e}");
    }
}
