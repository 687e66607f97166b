//! How a program recipe chooses its compiler (`crate::vocabulary::Compiler`), and what
//! changes with it.
//!
//! clang (the default) builds every variant. GCC builds `baseline`, `autofdo`
//! (`-fauto-profile=` with kfdo's gcov-format profile) and `ifdo`
//! (`-fprofile-generate` / `-fprofile-use`); the other variants need LLVM (the
//! reference converter is llvm-profgen, ThinLTO, Propeller and BOLT are lld / LLVM
//! tools) and are refused for a GCC recipe by name.

use std::path::Path;
use std::process::Command;

use anyhow::bail;

use crate::vocabulary::compiler::DEFAULT_LLVM;
use crate::vocabulary::{Compiler, Variant};

/// Flags every GCC build gets: line tables for the sampling profile, DWARF 4 because
/// valgrind 3.19 (cachegrind counters) cannot read DWARF 5 (gcc-11 and later default
/// to 5). GCC has no `-fdebug-info-for-profiling`: its discriminators are always on.
pub const GCC_DEBUG_CFLAGS: &str = "-g -gdwarf-4";

/// `[build] compiler` of a recipe: `clang`, `gcc` (the `gcc` on PATH) or `gcc-N`.
pub fn check_choice(choice: &str) -> anyhow::Result<()> {
    match choice {
        "clang" | "gcc" => Ok(()),
        c if c
            .strip_prefix("gcc-")
            .is_some_and(|n| n.parse::<u32>().is_ok()) =>
        {
            Ok(())
        }
        c => bail!(
            "[build] compiler = {c:?}: use \"clang\" (the default: clang-19), \"gcc\" (the gcc \
             on PATH) or \"gcc-N\" (e.g. \"gcc-12\")"
        ),
    }
}

/// The C and C++ compilers a choice names (`--cc` / `--cxx` override them).
pub fn default_commands(choice: &str) -> (String, String) {
    match choice {
        "gcc" => ("gcc".into(), "g++".into()),
        c if c.starts_with("gcc-") => (c.to_string(), format!("g++-{}", &c[4..])),
        _ => (
            format!("clang-{DEFAULT_LLVM}"),
            format!("clang++-{DEFAULT_LLVM}"),
        ),
    }
}

/// The compiler `choice` names, with GCC's major release asked of `cc` itself
/// (`-dumpversion`), so `--cc` pointing elsewhere is honoured.
pub fn resolve(choice: &str, cc: &str) -> anyhow::Result<Compiler> {
    check_choice(choice)?;
    if choice == "clang" {
        return Ok(Compiler::Clang { llvm: DEFAULT_LLVM });
    }
    let out = Command::new(cc).arg("-dumpversion").output().map_err(|e| {
        anyhow::anyhow!(
            "cannot run {cc}: {e} (the recipe's [build] compiler = {choice:?}; install it, \
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
             [build] compiler = {choice:?}; --cc must name a gcc)",
            text.trim()
        ),
    }
}

/// The variant list a recipe of this compiler builds when `--variants` is not given.
pub fn default_variants(compiler: Compiler) -> &'static str {
    match compiler {
        Compiler::Clang { .. } => "autofdo,autofdo-llvm-profgen,ifdo,autofdo+thinlto",
        Compiler::Gcc { .. } => "autofdo,ifdo",
    }
}

/// Refuses, by name, a variant `compiler` cannot build.
pub fn check_variants(compiler: Compiler, variants: &[Variant]) -> anyhow::Result<()> {
    if let Some(v) = variants.iter().find(|v| !compiler.can_build(**v)) {
        bail!(
            "--variants {}: the recipe builds with {} ([build] compiler), which builds \
             baseline, autofdo and ifdo; {} needs clang (use a recipe without \
             `compiler`, or another variant)",
            v.name(),
            compiler.name(),
            v.name()
        );
    }
    Ok(())
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
    fn choices_and_their_commands() {
        for ok in ["clang", "gcc", "gcc-11", "gcc-12"] {
            check_choice(ok).unwrap();
        }
        for bad in ["icc", "gcc-", "gcc-x", "clang-19"] {
            let e = check_choice(bad).unwrap_err().to_string();
            assert!(e.contains("[build] compiler") && e.contains(bad), "{e}");
        }
        assert_eq!(
            default_commands("gcc-11"),
            ("gcc-11".into(), "g++-11".into())
        );
        assert_eq!(default_commands("clang").0, "clang-19");
    }

    #[test]
    fn gcc_builds_three_variants_and_refuses_the_rest_by_name() {
        let gcc = Compiler::Gcc { major: 12 };
        let gcc_builds = [Variant::Baseline, Variant::Autofdo, Variant::Ifdo];
        check_variants(gcc, &gcc_builds).unwrap();
        let e = check_variants(gcc, &[Variant::Baseline, Variant::AutofdoThinlto])
            .unwrap_err()
            .to_string();
        assert!(e.contains("autofdo+thinlto") && e.contains("gcc 12"), "{e}");
        check_variants(Compiler::Clang { llvm: DEFAULT_LLVM }, &Variant::ALL).unwrap();
        for v in Variant::parse_list(default_variants(gcc)).unwrap() {
            assert!(gcc_builds.contains(&v));
        }
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
        match resolve("gcc", "gcc").unwrap() {
            Compiler::Gcc { major } => assert!(major >= 4, "{major}"),
            c => panic!("{c:?}"),
        }
        let e = resolve("gcc", "/bin/true").unwrap_err().to_string();
        assert!(e.contains("not a GCC release"), "{e}");
    }
}
