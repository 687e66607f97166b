//! The kernels `kfdo optimize` builds and judges, and how each one differs from the
//! recipe's configuration: the compiler, extra compiler flags (KCFLAGS), Kconfig changes,
//! and the profile it reads.
//!
//! The built-in variants follow the kernel's `Documentation/dev-tools/autofdo.rst`:
//!
//! | variant | Kconfig | make |
//! |---|---|---|
//! | `baseline` | `AUTOFDO_CLANG=y` | |
//! | `autofdo` | `AUTOFDO_CLANG=y` | `CLANG_AUTOFDO_PROFILE=kfdo.afdo` |
//! | `autofdo-llvm-profgen` | `AUTOFDO_CLANG=y` | `CLANG_AUTOFDO_PROFILE=llvm-profgen.afdo` |
//! | `autofdo+thinlto` | `AUTOFDO_CLANG=y`, `LTO_CLANG_THIN=y` | `CLANG_AUTOFDO_PROFILE=kfdo.afdo` |
//! | `autofdo+thinlto+propeller` | as above, `PROPELLER_CLANG=y` | as above, `CLANG_PROPELLER_PROFILE_PREFIX=propeller` |
//! | `autofdo+thinlto+bolt` | as `autofdo+thinlto` | none: its vmlinux rewritten by llvm-bolt |
//!
//! Propeller follows `Documentation/dev-tools/propeller.rst`: the `autofdo+thinlto` kernel
//! is built with `PROPELLER_CLANG=y` and no profile (kbuild then writes the BB address
//! map, which changes no code), booted with the training workload and recorded again;
//! kfdo's Propeller profiles of that recording relink it as `autofdo+thinlto+propeller`.
//!
//! BOLT follows BOLT's `docs/OptimizingLinux.md` (see `bolt` and `bolt_build`): the
//! `autofdo+thinlto` kernel's `vmlinux.unstripped` (kbuild keeps its relocations there)
//! is rewritten by the run's llvm-bolt from perf2bolt's profile of a recording of that
//! kernel, and its boot image remade without relinking.
//!
//! The baseline is the kernel that is profiled, built the way kbuild builds a kernel for
//! AutoFDO (CONFIG_AUTOFDO_CLANG=y without a profile: `-fdebug-info-for-profiling` and
//! flow-sensitive discriminators, which change debug information, not code), so a profile
//! of it is exactly what the AutoFDO builds read.
//!
//! Kernels older than 6.13 have no CONFIG_AUTOFDO_CLANG: a recipe with `fdo = "kcflags"`
//! passes the same compiler flags through KCFLAGS and the ThinLTO linker's profile on the
//! linker's command (`LD="ld.lld-19 --lto-sample-profile=..."`), which is what users of
//! older LTS kernels do by hand.
//!
//! A recipe whose compiler is GCC (`compiler = "gcc-12"`) builds GCC's kernels, through
//! KCFLAGS whatever the kernel's version (kbuild knows no GCC AutoFDO):
//!
//! | variant | Kconfig | KCFLAGS |
//! |---|---|---|
//! | `baseline` | | |
//! | `autofdo` | | `-fauto-profile=kfdo.gcov` (kfdo's GCC profile of the baseline) |
//! | `ifdo` | | `-fbranch-probabilities -fprofile-correction -fprofile-dir=GCDA ...` |
//! | (`ifdo-instrumented`) | `GCOV_KERNEL=y`, `GCOV_PROFILE_ALL=y`, `DEBUG_FS=y` | |
//!
//! `ifdo` is gcov kernel PGO as sites build it: the instrumented kernel (trained, not
//! judged) runs the training workload, its counts are copied out of the guest's
//! `/sys/kernel/debug/gcov`, and the kernel is rebuilt from the same configuration with
//! them (`gcov_pgo`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::bail;

use super::recipe::{KernelRecipe, VariantSpec};
use crate::vocabulary::support::{self, support, Refusal};
use crate::vocabulary::{CompileProfile, Compiler, Variant};

/// The name of the gcov-instrumented kernel an `ifdo` kernel is trained on.
pub const INSTRUMENTED: &str = "ifdo-instrumented";

/// The variant a Propeller kernel is recorded on and relinks (the base of
/// `autofdo+thinlto+propeller`).
pub const PROPELLER_BASE: &str = Variant::AutofdoThinlto.name();

/// Compiler flags of both Propeller kernels. ThinLTO names a promoted static function
/// `NAME.llvm.HASH`, the hash that of its module's bitcode, and the bitcode holds the
/// compilation directory: kbuild's `O=` directory, one per variant. Without a common
/// one, every such name in the profiles (96 of the 734 hot functions of the bundled
/// recipe's kernel, `update_curr` among them) would name no function of the relink.
pub const PROPELLER_KCFLAGS: &str = "-fdebug-compilation-dir=.";

/// A variant's part in Propeller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropellerRole {
    None,
    /// Built with the BB address map (`PROPELLER_CLANG=y`, no profile): recorded for
    /// the Propeller profiles.
    Mapped,
    /// Relinked with the Propeller profiles of the mapped variant's recording.
    Optimized,
}

/// How the AutoFDO flags reach the build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fdo {
    /// CONFIG_AUTOFDO_CLANG and `CLANG_AUTOFDO_PROFILE` (Linux >= 6.13).
    Kconfig,
    /// The same flags through KCFLAGS and the linker flags (older kernels).
    Kcflags,
}

/// The compiler flags `scripts/Makefile.autofdo` adds for a profiled build, for `fdo =
/// "kcflags"` (kept the same as kbuild's so the two recipes build alike).
const FDO_CFLAGS: &str =
    "-fdebug-info-for-profiling -mllvm -enable-fs-discriminator=true -mllvm -improved-fs-discriminator=true";

#[derive(Debug, Clone, PartialEq)]
pub struct KernelVariant {
    pub name: String,
    pub compiler: Compiler,
    pub kcflags: String,
    /// Kconfig changes on top of the recipe's configuration (symbol without CONFIG_).
    pub kconfig: BTreeMap<String, String>,
    /// The profile the build reads: none, kfdo's or llvm-profgen's AutoFDO profile, or
    /// (`ifdo`) the gcov counts. A Propeller kernel reads kfdo's AutoFDO profile too;
    /// its Propeller profiles come with `propeller`.
    pub profile: CompileProfile,
    pub propeller: PropellerRole,
    /// Not built by kbuild: the `autofdo+thinlto` kernel rewritten by llvm-bolt.
    pub bolt: bool,
}

impl KernelVariant {
    pub fn is_clang(&self) -> bool {
        self.compiler.is_clang()
    }

    /// The built-in variant `name` for `recipe` (checked against `vocabulary::support`'s
    /// table), or the recipe's own `[[variant]]`.
    pub fn named(name: &str, recipe: &KernelRecipe) -> anyhow::Result<KernelVariant> {
        let compiler = recipe.compiler()?;
        let kind = recipe.build_kind();
        let built_in = match Variant::from_name(name).map(|v| (v, support(v, kind, compiler))) {
            Some((v, Ok(()))) => Some(v),
            Some((v, Err(r @ Refusal::Cannot { .. }))) => {
                bail!(
                    "variant '{}': {}",
                    v.name(),
                    support::reason(kind, compiler, &r)
                )
            }
            Some((_, Err(Refusal::NotOffered))) | None => None,
        };
        let v = match built_in {
            Some(b) => built_in_variant(b, recipe, compiler)?,
            None => own_variant(name, recipe)?,
        };
        // The profile is of the recipe's baseline: LLVM's format for a clang baseline,
        // GCC's for a GCC one, and each compiler reads only its own.
        if v.profile != CompileProfile::None && v.is_clang() != compiler.is_clang() {
            bail!(
                "variant '{}': built with {} but the profile is of the recipe's {} baseline; \
                 a profiled variant uses the recipe's compiler (drop its `compiler`, or \
                 profile = \"none\")",
                v.name,
                v.compiler.command(),
                recipe.kernel.compiler
            );
        }
        Ok(v)
    }

    /// The gcov-instrumented twin of an `ifdo` variant: its configuration with kernel gcov
    /// on every object (debugfs holds the counts), no profile. Trained, not judged.
    pub fn instrumented(&self) -> KernelVariant {
        let mut v = self.clone();
        v.name = INSTRUMENTED.to_string();
        v.profile = CompileProfile::None;
        for sym in ["DEBUG_FS", "GCOV_KERNEL", "GCOV_PROFILE_ALL"] {
            v.kconfig.insert(sym.into(), "y".into());
        }
        v
    }

    /// A comma-separated list; the baseline is always first (everything is judged
    /// against it).
    pub fn parse_list(list: &str, recipe: &KernelRecipe) -> anyhow::Result<Vec<KernelVariant>> {
        let mut out = vec![KernelVariant::named("baseline", recipe)?];
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            if !out.iter().any(|v| v.name == word) {
                out.push(KernelVariant::named(word, recipe)?);
            }
        }
        // The Propeller kernel is recorded on, and relinks, the AutoFDO+ThinLTO kernel:
        // that one is judged too, built with the map, and built before it.
        if out.iter().any(|v| v.propeller == PropellerRole::Optimized) {
            if !out.iter().any(|v| v.name == PROPELLER_BASE) {
                out.push(KernelVariant::named(PROPELLER_BASE, recipe)?);
            }
            for v in out.iter_mut().filter(|v| v.name == PROPELLER_BASE) {
                v.kconfig.insert("PROPELLER_CLANG".into(), "y".into());
                v.kcflags = PROPELLER_KCFLAGS.into();
                v.propeller = PropellerRole::Mapped;
            }
            out.sort_by_key(|v| v.propeller == PropellerRole::Optimized);
        }
        // The BOLT kernel rewrites the AutoFDO+ThinLTO kernel: that one is judged too,
        // and built before it.
        if out.iter().any(|v| v.bolt) {
            if !out.iter().any(|v| v.name == PROPELLER_BASE) {
                out.push(KernelVariant::named(PROPELLER_BASE, recipe)?);
            }
            // Its configuration is the one of the kernel it rewrites (with the map, when
            // a Propeller kernel is built from it too).
            let base = out
                .iter()
                .find(|v| v.name == PROPELLER_BASE)
                .cloned()
                .expect("pushed above");
            for v in out.iter_mut().filter(|v| v.bolt) {
                v.kconfig = base.kconfig.clone();
                v.kcflags = base.kcflags.clone();
            }
            out.sort_by_key(|v| v.bolt);
        }
        Ok(out)
    }

    /// The `make` variables of this variant's build in `build_dir`: the toolchain,
    /// KCFLAGS, the profile (`profile`, when the variant reads one: an AutoFDO profile,
    /// or for `ifdo` the directory of `.gcda` counts) and the Propeller profiles' prefix
    /// (`propeller`).
    pub fn make_vars(
        &self,
        fdo: Fdo,
        profile: Option<&Path>,
        propeller: Option<&Path>,
        build_dir: &Path,
    ) -> Vec<(String, String)> {
        let mut vars = Vec::new();
        match self.compiler.llvm_suffix() {
            // LLVM=-19: clang-19, ld.lld-19, llvm-ar-19 ... (kbuild's version suffix form).
            Some(suffix) => vars.push(("LLVM".to_string(), suffix)),
            None => vars.push(("CC".to_string(), self.compiler.command())),
        }
        let mut kcflags = self.kcflags.clone();
        let lto = self.kconfig.get("LTO_CLANG_THIN").is_some_and(|v| v == "y");
        match (fdo, profile) {
            (_, p) if !self.is_clang() => {
                if let Some(p) = p {
                    push_flags(&mut kcflags, &gcc_profile_flags(self.profile, p, build_dir));
                }
            }
            (Fdo::Kconfig, Some(p)) => {
                vars.push(("CLANG_AUTOFDO_PROFILE".into(), p.display().to_string()))
            }
            (Fdo::Kconfig, None) => {}
            (Fdo::Kcflags, p) if self.is_clang() => {
                // What scripts/Makefile.autofdo of 6.13+ adds, by hand, except
                // -ffunction-sections and -fsplit-machine-functions: before 6.13 the linker
                // script places no `.text.FUNCTION` or `.text.split.*` section, so lld puts
                // them, as orphans, after the init sections, outside the kernel text, and
                // the kernel dies before its first console line (seen with 6.1).
                push_flags(&mut kcflags, FDO_CFLAGS);
                if let Some(p) = p {
                    push_flags(
                        &mut kcflags,
                        &format!("-fprofile-sample-use={}", p.display()),
                    );
                    if lto {
                        // Before 6.13 kbuild has no hook for linker flags of our own
                        // (KBUILD_LDFLAGS and LDFLAGS_vmlinux given on the command line
                        // would replace kbuild's own), so the flags ride on the linker's
                        // name: the ThinLTO link (`ld -r` of vmlinux.o) reads the profile.
                        let suffix = self.compiler.llvm_suffix().unwrap_or_default();
                        vars.push((
                            "LD".into(),
                            format!(
                                "ld.lld{suffix} --lto-sample-profile={} \
                                 --mllvm=-enable-fs-discriminator=true \
                                 --mllvm=-improved-fs-discriminator=true",
                                p.display()
                            ),
                        ));
                    }
                }
            }
            (Fdo::Kcflags, _) => {}
        }
        if let Some(prefix) = propeller {
            vars.push((
                "CLANG_PROPELLER_PROFILE_PREFIX".into(),
                prefix.display().to_string(),
            ));
        }
        if !kcflags.is_empty() {
            vars.push(("KCFLAGS".into(), kcflags));
        }
        vars
    }
}

/// GCC's flags for reading `profile`: kfdo's AutoFDO profile, or (`ifdo`) the directory
/// of `.gcda` files named as `-fprofile-dir` mangles them: the object's path relative to
/// `-fprofile-prefix-path`, the build directory, with `/` as `#` (`kernel#fork.gcda`).
/// The counts came from another build directory (the instrumented kernel's), hence the
/// prefix. A function whose code differs from the instrumented build's (the gcov and
/// debugfs hooks) is a coverage mismatch, an error by default: here a warning, counted
/// in the summary, and that function is built without its counts.
fn gcc_profile_flags(kind: CompileProfile, profile: &Path, build_dir: &Path) -> String {
    match kind {
        CompileProfile::Instrumented => format!(
            "-fbranch-probabilities -fprofile-correction -fprofile-dir={} \
             -fprofile-prefix-path={} -Wmissing-profile -Wno-error=coverage-mismatch",
            profile.display(),
            build_dir.display()
        ),
        _ => format!("-fauto-profile={}", profile.display()),
    }
}

fn push_flags(into: &mut String, flags: &str) {
    if !into.is_empty() {
        into.push(' ');
    }
    into.push_str(flags);
}

pub fn fdo_of(recipe: &KernelRecipe) -> Fdo {
    if recipe.kernel.fdo == "kcflags" {
        Fdo::Kcflags
    } else {
        Fdo::Kconfig
    }
}

/// How the built-in variant `b` (one the table lets this recipe build) is built.
fn built_in_variant(
    b: Variant,
    recipe: &KernelRecipe,
    compiler: Compiler,
) -> anyhow::Result<KernelVariant> {
    let fdo = fdo_of(recipe);
    let base = |profile| {
        let mut kconfig = BTreeMap::new();
        if fdo == Fdo::Kconfig && compiler.is_clang() {
            kconfig.insert("AUTOFDO_CLANG".to_string(), "y".to_string());
        }
        KernelVariant {
            name: b.name().to_string(),
            compiler,
            kcflags: String::new(),
            kconfig,
            profile,
            propeller: PropellerRole::None,
            bolt: false,
        }
    };
    // Each built-in variant's profile is its stack's (vocabulary::Variant).
    Ok(match b {
        Variant::AutofdoThinlto => {
            let mut v = base(b.compile_profile());
            v.kconfig.insert("LTO_CLANG_THIN".into(), "y".into());
            v.kconfig.insert("LTO_NONE".into(), "n".into());
            v
        }
        Variant::AutofdoThinltoPropeller => {
            if fdo == Fdo::Kcflags {
                bail!(
                    "variant '{}': Propeller kernels need CONFIG_PROPELLER_CLANG, which \
                     came with Linux 6.13 (this recipe builds an older kernel, fdo = \"kcflags\")",
                    b.name()
                );
            }
            let mut v = built_in_variant(Variant::AutofdoThinlto, recipe, compiler)?;
            v.name = b.name().to_string();
            v.kconfig.insert("PROPELLER_CLANG".into(), "y".into());
            v.kcflags = PROPELLER_KCFLAGS.into();
            v.propeller = PropellerRole::Optimized;
            v
        }
        Variant::AutofdoThinltoBolt => {
            let mut v = built_in_variant(Variant::AutofdoThinlto, recipe, compiler)?;
            v.name = b.name().to_string();
            v.bolt = true;
            v
        }
        _ => base(b.compile_profile()),
    })
}

/// The recipe's own `[[variant]]` called `name`.
fn own_variant(name: &str, recipe: &KernelRecipe) -> anyhow::Result<KernelVariant> {
    match recipe.variants.iter().find(|s| s.name == name) {
        Some(s) => from_spec(s, recipe),
        None => bail!(
            "--variants: unknown variant '{name}' (built in: {}; the recipe's own: {})",
            support::names(&support::built_in(recipe.build_kind())),
            if recipe.variants.is_empty() {
                "none".to_string()
            } else {
                recipe
                    .variants
                    .iter()
                    .map(|v| v.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ),
    }
}

fn from_spec(s: &VariantSpec, recipe: &KernelRecipe) -> anyhow::Result<KernelVariant> {
    let compiler = match &s.compiler {
        Some(c) => super::recipe::kernel_compiler(*c)?,
        None => recipe.compiler()?,
    };
    let mut kconfig = BTreeMap::new();
    let profile = if s.profile == "autofdo" {
        CompileProfile::Kfdo
    } else {
        CompileProfile::None
    };
    // A clang build with the kbuild AutoFDO flags is the baseline's build; a variant of
    // the recipe's own starts from it, so it differs from the baseline only in what it says.
    if compiler.is_clang() && fdo_of(recipe) == Fdo::Kconfig {
        kconfig.insert("AUTOFDO_CLANG".to_string(), "y".to_string());
    }
    kconfig.extend(s.kconfig.clone());
    Ok(KernelVariant {
        name: s.name.clone(),
        compiler,
        kcflags: s.kcflags.clone(),
        kconfig,
        profile,
        propeller: PropellerRole::None,
        bolt: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b() -> &'static Path {
        Path::new("/b")
    }

    fn recipe(fdo: &str) -> KernelRecipe {
        toml::from_str(&format!(
            r#"
            name = "t"
            [kernel]
            source = "linux-source-7.2"
            fdo = "{fdo}"
            [workload]
            dir = "w"
            train = "tcp_rr:1"
            [[bench]]
            name = "b"
            run = "tcp_rr:2"
            [[variant]]
            name = "gcc-O3"
            compiler = "gcc-12"
            kcflags = "-O3"
            "#
        ))
        .unwrap()
    }

    fn var<'a>(vars: &'a [(String, String)], k: &str) -> Option<&'a str> {
        vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }

    #[test]
    fn kconfig_recipes_set_the_kbuild_variables_only() {
        let r = recipe("kconfig");
        let list = KernelVariant::parse_list("autofdo+thinlto,gcc-O3", &r).unwrap();
        let names: Vec<&str> = list.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["baseline", "autofdo+thinlto", "gcc-O3"]);
        assert_eq!(
            list[0].kconfig.get("AUTOFDO_CLANG").map(String::as_str),
            Some("y")
        );
        assert_eq!(
            list[1].kconfig.get("LTO_CLANG_THIN").map(String::as_str),
            Some("y")
        );
        let p = Path::new("/p/kfdo.afdo");
        let vars = list[1].make_vars(Fdo::Kconfig, Some(p), None, b());
        assert_eq!(var(&vars, "LLVM"), Some("-19"));
        assert_eq!(var(&vars, "CLANG_AUTOFDO_PROFILE"), Some("/p/kfdo.afdo"));
        assert_eq!(var(&vars, "KCFLAGS"), None, "kbuild adds the flags itself");
        // A gcc variant of the recipe's own: its compiler and flags, no AutoFDO.
        let gcc = list[2].make_vars(Fdo::Kconfig, None, None, b());
        assert_eq!(
            (var(&gcc, "CC"), var(&gcc, "KCFLAGS")),
            (Some("gcc-12"), Some("-O3"))
        );
        assert!(!list[2].kconfig.contains_key("AUTOFDO_CLANG"));
    }

    #[test]
    fn kcflags_recipes_pass_the_same_flags_by_hand() {
        let r = recipe("kcflags");
        let list = KernelVariant::parse_list("autofdo+thinlto", &r).unwrap();
        assert!(!list[0].kconfig.contains_key("AUTOFDO_CLANG"));
        let base = list[0].make_vars(Fdo::Kcflags, None, None, b());
        assert_eq!(var(&base, "KCFLAGS"), Some(FDO_CFLAGS));
        let vars = list[1].make_vars(Fdo::Kcflags, Some(Path::new("/p/k.afdo")), None, b());
        let kcflags = var(&vars, "KCFLAGS").unwrap();
        assert!(kcflags.starts_with(FDO_CFLAGS), "{kcflags}");
        assert!(
            kcflags.contains("-fprofile-sample-use=/p/k.afdo"),
            "{kcflags}"
        );
        // No function sections: a pre-6.13 linker script would strand them outside the
        // kernel text (a 6.1 kernel built so did not boot).
        assert!(
            !kcflags.contains("-ffunction-sections") && !kcflags.contains("split-machine"),
            "{kcflags}"
        );
        let ld = var(&vars, "LD").unwrap();
        assert!(!ld.contains("split-machine"), "{ld}");
        assert!(
            ld.starts_with("ld.lld-19 --lto-sample-profile=/p/k.afdo"),
            "{ld}"
        );
    }

    #[test]
    fn unknown_and_unsupported_variants_are_refused() {
        let r = recipe("kconfig");
        let e = KernelVariant::parse_list("autofd", &r)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown variant 'autofd'") && e.contains("gcc-O3"),
            "{e}"
        );
        let e = KernelVariant::parse_list("bolt", &r)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown variant 'bolt'"), "{e}");
        let mut arm = recipe("kconfig");
        arm.kernel.arch = "arm64".into();
        let e = KernelVariant::parse_list("autofdo+thinlto+bolt", &arm)
            .unwrap_err()
            .to_string();
        assert!(e.contains("x86_64 only"), "{e}");
        let e = KernelVariant::parse_list("autofdo+thinlto+propeller", &recipe("kcflags"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("6.13"), "{e}");
    }

    #[test]
    fn gcc_recipes_build_autofdo_and_gcov_pgo_through_kcflags() {
        let mut r = recipe("kcflags");
        r.kernel.compiler = crate::vocabulary::CompilerName::parse("gcc-12").unwrap();
        let list = KernelVariant::parse_list("autofdo,ifdo", &r).unwrap();
        assert!(list.iter().all(|v| v.kconfig.is_empty()), "{list:?}");
        let afdo = list[1].make_vars(Fdo::Kcflags, Some(Path::new("/p/k.gcov")), None, b());
        assert_eq!(var(&afdo, "CC"), Some("gcc-12"));
        assert_eq!(var(&afdo, "KCFLAGS"), Some("-fauto-profile=/p/k.gcov"));
        assert_eq!(var(&afdo, "LD"), None);
        let ifdo = list[2].make_vars(Fdo::Kcflags, Some(Path::new("/p/gcda")), None, b());
        let flags = var(&ifdo, "KCFLAGS").unwrap();
        for f in [
            "-fbranch-probabilities",
            "-fprofile-correction",
            "-fprofile-dir=/p/gcda",
            "-fprofile-prefix-path=/b",
        ] {
            assert!(flags.split(' ').any(|w| w == f), "{f} not in {flags}");
        }
        // The baseline has no profile flags at all.
        assert_eq!(
            var(&list[0].make_vars(Fdo::Kcflags, None, None, b()), "KCFLAGS"),
            None
        );
        let inst = list[2].instrumented();
        assert_eq!(inst.name, INSTRUMENTED);
        assert_eq!(inst.profile, CompileProfile::None);
        for sym in ["GCOV_KERNEL", "GCOV_PROFILE_ALL", "DEBUG_FS"] {
            assert_eq!(
                inst.kconfig.get(sym).map(String::as_str),
                Some("y"),
                "{sym}"
            );
        }
        for llvm in [
            "autofdo+thinlto",
            "autofdo-llvm-profgen",
            "autofdo+thinlto+propeller",
        ] {
            let e = KernelVariant::parse_list(llvm, &r).unwrap_err().to_string();
            assert!(e.contains("needs clang") && e.contains("gcc-12"), "{e}");
        }
        let e = KernelVariant::parse_list("ifdo", &recipe("kconfig"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("gcov kernel PGO"), "{e}");
    }

    #[test]
    fn bolt_brings_the_autofdo_thinlto_kernel_it_rewrites_with_its_configuration() {
        let r = recipe("kconfig");
        for list in [
            "autofdo+thinlto+bolt",
            "autofdo+thinlto+bolt,autofdo+thinlto+propeller",
        ] {
            let vs = KernelVariant::parse_list(list, &r).unwrap();
            let base = vs.iter().position(|v| v.name == PROPELLER_BASE).unwrap();
            let bolt = vs.iter().position(|v| v.bolt).unwrap();
            assert!(base < bolt && bolt == vs.len() - 1, "{list}: {vs:?}");
            assert_eq!(vs[bolt].name, "autofdo+thinlto+bolt");
            assert_eq!(vs[bolt].kconfig, vs[base].kconfig, "{list}");
            assert_eq!(vs[bolt].kcflags, vs[base].kcflags, "{list}");
            assert_eq!(vs[bolt].profile, CompileProfile::Kfdo);
        }
    }

    #[test]
    fn propeller_brings_its_mapped_autofdo_thinlto_kernel() {
        let r = recipe("kconfig");
        let list = KernelVariant::parse_list("autofdo+thinlto+propeller,autofdo", &r).unwrap();
        let names: Vec<&str> = list.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "baseline",
                "autofdo",
                "autofdo+thinlto",
                "autofdo+thinlto+propeller"
            ]
        );
        for v in &list[2..] {
            assert_eq!(
                v.kconfig.get("PROPELLER_CLANG").map(String::as_str),
                Some("y")
            );
            assert_eq!(
                v.kconfig.get("LTO_CLANG_THIN").map(String::as_str),
                Some("y")
            );
        }
        assert_eq!(list[2].propeller, PropellerRole::Mapped);
        assert_eq!(list[3].propeller, PropellerRole::Optimized);
        assert!(!list[1].kconfig.contains_key("PROPELLER_CLANG"));
        let vars = list[3].make_vars(
            Fdo::Kconfig,
            Some(Path::new("/p/kfdo.afdo")),
            Some(Path::new("/p/propeller")),
            b(),
        );
        assert_eq!(
            var(&vars, "CLANG_PROPELLER_PROFILE_PREFIX"),
            Some("/p/propeller")
        );
        assert_eq!(var(&vars, "CLANG_AUTOFDO_PROFILE"), Some("/p/kfdo.afdo"));
        // Both Propeller kernels compile in one directory as far as the bitcode knows.
        assert_eq!(var(&vars, "KCFLAGS"), Some(PROPELLER_KCFLAGS));
        let mapped = list[2].make_vars(Fdo::Kconfig, Some(Path::new("/p/kfdo.afdo")), None, b());
        assert_eq!(var(&mapped, "KCFLAGS"), Some(PROPELLER_KCFLAGS));
    }
}
