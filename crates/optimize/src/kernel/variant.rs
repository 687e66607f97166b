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
//!
//! Propeller follows `Documentation/dev-tools/propeller.rst`: the `autofdo+thinlto` kernel
//! is built with `PROPELLER_CLANG=y` and no profile (kbuild then writes the BB address
//! map, which changes no code), booted with the training workload and recorded again;
//! kfdo's Propeller profiles of that recording relink it as `autofdo+thinlto+propeller`.
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

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::bail;

use super::recipe::{KernelRecipe, VariantSpec};

/// Names of the built-in variants.
pub const BUILT_IN: &[&str] = &[
    "baseline",
    "autofdo",
    "autofdo-llvm-profgen",
    "autofdo+thinlto",
    "autofdo+thinlto+propeller",
];

/// The variant a Propeller kernel is recorded on and relinks.
pub const PROPELLER_BASE: &str = "autofdo+thinlto";

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

/// Which profile a variant's build reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelProfile {
    None,
    /// kfdo's profile of the training run.
    Kfdo,
    /// llvm-profgen-19's profile of the same recording (the reference converter).
    LlvmProfgen,
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
    pub compiler: String,
    pub kcflags: String,
    /// Kconfig changes on top of the recipe's configuration (symbol without CONFIG_).
    pub kconfig: BTreeMap<String, String>,
    pub profile: KernelProfile,
    pub propeller: PropellerRole,
}

impl KernelVariant {
    pub fn is_clang(&self) -> bool {
        self.compiler.starts_with("clang")
    }

    /// The built-in variant `name` for `recipe`, or the recipe's own `[[variant]]`.
    pub fn named(name: &str, recipe: &KernelRecipe) -> anyhow::Result<KernelVariant> {
        let fdo = fdo_of(recipe);
        let base = |profile| {
            let mut kconfig = BTreeMap::new();
            if fdo == Fdo::Kconfig {
                kconfig.insert("AUTOFDO_CLANG".to_string(), "y".to_string());
            }
            KernelVariant {
                name: name.to_string(),
                compiler: recipe.kernel.compiler.clone(),
                kcflags: String::new(),
                kconfig,
                profile,
                propeller: PropellerRole::None,
            }
        };
        let v = match name {
            "baseline" => base(KernelProfile::None),
            "autofdo" => base(KernelProfile::Kfdo),
            "autofdo-llvm-profgen" => base(KernelProfile::LlvmProfgen),
            "autofdo+thinlto" => {
                let mut v = base(KernelProfile::Kfdo);
                v.kconfig.insert("LTO_CLANG_THIN".into(), "y".into());
                v.kconfig.insert("LTO_NONE".into(), "n".into());
                v
            }
            "autofdo+thinlto+propeller" => {
                if fdo == Fdo::Kcflags {
                    bail!(
                        "variant '{name}': Propeller kernels need CONFIG_PROPELLER_CLANG, which \
                         came with Linux 6.13 (this recipe builds an older kernel, fdo = \"kcflags\")"
                    );
                }
                let mut v = KernelVariant::named(PROPELLER_BASE, recipe)?;
                v.name = name.to_string();
                v.kconfig.insert("PROPELLER_CLANG".into(), "y".into());
                v.kcflags = PROPELLER_KCFLAGS.into();
                v.propeller = PropellerRole::Optimized;
                v
            }
            _ => match recipe.variants.iter().find(|s| s.name == name) {
                Some(s) => from_spec(s, recipe),
                None => bail!(
                    "--variants: unknown variant '{name}' (built in: {}; the recipe's own: {})",
                    BUILT_IN.join(", "),
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
            },
        };
        if v.profile != KernelProfile::None && !v.is_clang() {
            bail!(
                "variant '{}': an AutoFDO profile needs clang (CONFIG_AUTOFDO_CLANG depends on \
                 CC_IS_CLANG); build it with compiler = \"clang-19\"",
                v.name
            );
        }
        Ok(v)
    }

    /// A comma-separated list; the baseline is always first (everything is judged
    /// against it).
    pub fn parse_list(list: &str, recipe: &KernelRecipe) -> anyhow::Result<Vec<KernelVariant>> {
        let mut out = vec![KernelVariant::named("baseline", recipe)?];
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            if word.contains("bolt") {
                bail!(
                    "--variants {word}: BOLT kernels are not built by kfdo optimize (llvm-bolt on \
                     a vmlinux is experimental in LLVM 19; see the README's Propeller and BOLT section)"
                );
            }
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
        Ok(out)
    }

    /// The `make` variables of this variant's build: the toolchain, KCFLAGS, the
    /// profile (`profile`, when the variant reads one) and the Propeller profiles'
    /// prefix (`propeller`).
    pub fn make_vars(
        &self,
        fdo: Fdo,
        profile: Option<&Path>,
        propeller: Option<&Path>,
    ) -> Vec<(String, String)> {
        let mut vars = Vec::new();
        if self.is_clang() {
            // LLVM=-19: clang-19, ld.lld-19, llvm-ar-19 ... (kbuild's version suffix form).
            let suffix = self.compiler.trim_start_matches("clang");
            vars.push(("LLVM".to_string(), suffix.to_string()));
        } else {
            vars.push(("CC".to_string(), self.compiler.clone()));
        }
        let mut kcflags = self.kcflags.clone();
        let lto = self.kconfig.get("LTO_CLANG_THIN").is_some_and(|v| v == "y");
        match (fdo, profile) {
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
                        let suffix = self.compiler.trim_start_matches("clang");
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

fn from_spec(s: &VariantSpec, recipe: &KernelRecipe) -> KernelVariant {
    let compiler = s
        .compiler
        .clone()
        .unwrap_or_else(|| recipe.kernel.compiler.clone());
    let mut kconfig = BTreeMap::new();
    let profile = if s.profile == "autofdo" {
        KernelProfile::Kfdo
    } else {
        KernelProfile::None
    };
    // A clang build with the kbuild AutoFDO flags is the baseline's build; a variant of
    // the recipe's own starts from it, so it differs from the baseline only in what it says.
    if compiler.starts_with("clang") && fdo_of(recipe) == Fdo::Kconfig {
        kconfig.insert("AUTOFDO_CLANG".to_string(), "y".to_string());
    }
    kconfig.extend(s.kconfig.clone());
    KernelVariant {
        name: s.name.clone(),
        compiler,
        kcflags: s.kcflags.clone(),
        kconfig,
        profile,
        propeller: PropellerRole::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let vars = list[1].make_vars(Fdo::Kconfig, Some(p), None);
        assert_eq!(var(&vars, "LLVM"), Some("-19"));
        assert_eq!(var(&vars, "CLANG_AUTOFDO_PROFILE"), Some("/p/kfdo.afdo"));
        assert_eq!(var(&vars, "KCFLAGS"), None, "kbuild adds the flags itself");
        // A gcc variant of the recipe's own: its compiler and flags, no AutoFDO.
        let gcc = list[2].make_vars(Fdo::Kconfig, None, None);
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
        let base = list[0].make_vars(Fdo::Kcflags, None, None);
        assert_eq!(var(&base, "KCFLAGS"), Some(FDO_CFLAGS));
        let vars = list[1].make_vars(Fdo::Kcflags, Some(Path::new("/p/k.afdo")), None);
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
        assert!(e.contains("experimental"), "{e}");
        let e = KernelVariant::parse_list("autofdo+thinlto+propeller", &recipe("kcflags"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("6.13"), "{e}");
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
        );
        assert_eq!(
            var(&vars, "CLANG_PROPELLER_PROFILE_PREFIX"),
            Some("/p/propeller")
        );
        assert_eq!(var(&vars, "CLANG_AUTOFDO_PROFILE"), Some("/p/kfdo.afdo"));
        // Both Propeller kernels compile in one directory as far as the bitcode knows.
        assert_eq!(var(&vars, "KCFLAGS"), Some(PROPELLER_KCFLAGS));
        let mapped = list[2].make_vars(Fdo::Kconfig, Some(Path::new("/p/kfdo.afdo")), None);
        assert_eq!(var(&mapped, "KCFLAGS"), Some(PROPELLER_KCFLAGS));
    }
}
