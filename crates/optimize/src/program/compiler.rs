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

use kfdo_toolchain::Llvm;

use crate::vocabulary::{Compiler, Variant};

/// Flags every GCC build gets: line tables for the sampling profile, DWARF 4 because
/// valgrind 3.19 (cachegrind counters) cannot read DWARF 5 (gcc-11 and later default
/// to 5). GCC has no `-fdebug-info-for-profiling`: its discriminators are always on.
pub const GCC_DEBUG_CFLAGS: &str = "-g -gdwarf-4";

/// `[build] compiler` of a recipe: `clang` (LLVM's default release), `clang-N`, `gcc`
/// (the `gcc` on PATH) or `gcc-N`.
pub fn check_choice(choice: &str) -> anyhow::Result<()> {
    match choice {
        "clang" | "gcc" => Ok(()),
        c if c.starts_with("clang-") && Llvm::parse(c).is_ok() => Ok(()),
        c if c
            .strip_prefix("gcc-")
            .is_some_and(|n| n.parse::<u32>().is_ok()) =>
        {
            Ok(())
        }
        c => bail!(
            "[build] compiler = {c:?}: use \"clang\" (the default: {}), \"clang-N\" (e.g. \
             \"clang-22\"), \"gcc\" (the gcc on PATH) or \"gcc-N\" (e.g. \"gcc-12\")",
            Llvm::DEFAULT.clang()
        ),
    }
}

/// The recipe's choice with `--llvm` applied: a clang recipe builds with that release;
/// a GCC recipe has no LLVM release to change, so `--llvm` is refused for it.
pub fn with_llvm(choice: &str, llvm: Option<Llvm>) -> anyhow::Result<String> {
    check_choice(choice)?;
    match llvm {
        None => Ok(choice.to_string()),
        Some(l) if choice == "clang" || choice.starts_with("clang-") => Ok(l.clang()),
        Some(l) => bail!(
            "--llvm {}: the recipe builds with {choice:?} ([build] compiler); --llvm picks the \
             release of a clang recipe's tools",
            l.major
        ),
    }
}

/// The LLVM release of a clang choice (`clang`: the default).
fn llvm_of(choice: &str) -> Option<Llvm> {
    match choice {
        "clang" => Some(Llvm::DEFAULT),
        c if c.starts_with("clang-") => Llvm::parse(c).ok(),
        _ => None,
    }
}

/// The C and C++ compilers a choice names (`--cc` / `--cxx` override them).
pub fn default_commands(choice: &str) -> (String, String) {
    match llvm_of(choice) {
        Some(l) => (l.clang(), l.clangxx()),
        None if choice == "gcc" => ("gcc".into(), "g++".into()),
        None => (choice.to_string(), format!("g++-{}", &choice[4..])),
    }
}

/// The compiler `choice` names. GCC's major release is asked of `cc` itself
/// (`-dumpversion`), so `--cc` pointing elsewhere is honoured; a clang release must be
/// installed (its other tools are run by name).
pub fn resolve(choice: &str, cc: &str) -> anyhow::Result<Compiler> {
    check_choice(choice)?;
    if let Some(llvm) = llvm_of(choice) {
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
        for ok in ["clang", "clang-19", "clang-22", "gcc", "gcc-11", "gcc-12"] {
            check_choice(ok).unwrap();
        }
        for bad in ["icc", "gcc-", "gcc-x", "clang-", "clang-x", "llvm-22"] {
            let e = check_choice(bad).unwrap_err().to_string();
            assert!(e.contains("[build] compiler") && e.contains(bad), "{e}");
        }
        assert_eq!(
            default_commands("gcc-11"),
            ("gcc-11".into(), "g++-11".into())
        );
        assert_eq!(default_commands("clang").0, "clang-19");
        assert_eq!(
            default_commands("clang-22"),
            ("clang-22".into(), "clang++-22".into())
        );
    }

    #[test]
    fn llvm_picks_a_clang_recipes_release_and_is_refused_for_gcc() {
        let l22 = Some(Llvm::new(22));
        assert_eq!(with_llvm("clang", l22).unwrap(), "clang-22");
        assert_eq!(with_llvm("clang-19", l22).unwrap(), "clang-22");
        assert_eq!(with_llvm("clang-22", None).unwrap(), "clang-22");
        assert_eq!(with_llvm("gcc-12", None).unwrap(), "gcc-12");
        let e = with_llvm("gcc-12", l22).unwrap_err().to_string();
        assert!(e.contains("--llvm 22") && e.contains("gcc-12"), "{e}");
    }

    #[test]
    fn a_clang_release_that_is_not_installed_is_named_with_its_packages() {
        let e = resolve("clang-7", "clang-7").unwrap_err().to_string();
        assert!(e.contains("apt-get install clang-7 lld-7"), "{e}");
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
        check_variants(
            Compiler::Clang {
                llvm: Llvm::DEFAULT,
            },
            &Variant::ALL,
        )
        .unwrap();
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
