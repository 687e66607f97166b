//! The builds `kfdo optimize` compares, and the compiler and linker flags
//! each one gets. Every variant shares the baseline's flags, so the only
//! difference between two builds is the profile (and, for +thinlto, LTO).

use std::path::Path;

use anyhow::bail;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    Baseline,
    /// kfdo's AutoFDO profile of the recorded training run.
    Autofdo,
    /// llvm-profgen-19's profile of the same perf.data: the reference converter.
    AutofdoLlvmProfgen,
    /// Instrumented PGO: the upper bound sampling aims at.
    Ifdo,
    /// kfdo's profile with ThinLTO (the profile also reaches the LTO backend).
    AutofdoThinlto,
}

/// Which profile a variant's build reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileKind {
    None,
    Kfdo,
    LlvmProfgen,
    Instrumented,
}

/// Flags every build gets: line tables good enough for sampling profiles
/// (`-fdebug-info-for-profiling`, unique internal names), DWARF 4 because
/// valgrind 3.19 (cachegrind counters) cannot read DWARF 5, and lld.
pub const DEBUG_CFLAGS: &str =
    "-g -gdwarf-4 -fdebug-info-for-profiling -funique-internal-linkage-names";
pub const BASE_LDFLAGS: &str = "-fuse-ld=lld";

impl Variant {
    pub const ALL: [Variant; 5] = [
        Variant::Baseline,
        Variant::Autofdo,
        Variant::AutofdoLlvmProfgen,
        Variant::Ifdo,
        Variant::AutofdoThinlto,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Baseline => "baseline",
            Variant::Autofdo => "autofdo",
            Variant::AutofdoLlvmProfgen => "autofdo-llvm-profgen",
            Variant::Ifdo => "ifdo",
            Variant::AutofdoThinlto => "autofdo+thinlto",
        }
    }

    pub fn profile(self) -> ProfileKind {
        match self {
            Variant::Baseline => ProfileKind::None,
            Variant::Autofdo | Variant::AutofdoThinlto => ProfileKind::Kfdo,
            Variant::AutofdoLlvmProfgen => ProfileKind::LlvmProfgen,
            Variant::Ifdo => ProfileKind::Instrumented,
        }
    }

    /// A comma-separated list; baseline is always built (everything is judged against it).
    pub fn parse_list(list: &str) -> anyhow::Result<Vec<Variant>> {
        let mut out = vec![Variant::Baseline];
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let v = match Variant::ALL.iter().find(|v| v.name() == word) {
                Some(v) => *v,
                None if word.contains("propeller") || word.contains("bolt") => bail!(
                    "--variants {word}: Propeller and BOLT variants are not built by kfdo optimize yet \
                     (known: {})",
                    Self::known()
                ),
                None => bail!("--variants: unknown variant '{word}' (known: {})", Self::known()),
            };
            if !out.contains(&v) {
                out.push(v);
            }
        }
        out.sort();
        Ok(out)
    }

    fn known() -> String {
        Variant::ALL.map(|v| v.name()).join(", ")
    }

    /// CFLAGS (also CXXFLAGS) and LDFLAGS of this variant. `profile` is the
    /// profile file for variants that read one.
    pub fn flags(self, opt: &str, profile: Option<&Path>) -> (String, String) {
        let base_c = format!("{opt} {DEBUG_CFLAGS}");
        let p = || profile.map(|p| p.display().to_string()).unwrap_or_default();
        match self.profile() {
            ProfileKind::None => (base_c, BASE_LDFLAGS.to_string()),
            ProfileKind::Instrumented => (
                format!("{base_c} -fprofile-use={}", p()),
                BASE_LDFLAGS.to_string(),
            ),
            ProfileKind::Kfdo | ProfileKind::LlvmProfgen if self == Variant::AutofdoThinlto => (
                format!("{base_c} -flto=thin -fprofile-sample-use={}", p()),
                // lld runs the ThinLTO backends; they read the profile too (as kbuild does).
                format!("{BASE_LDFLAGS} -flto=thin -Wl,--lto-sample-profile={}", p()),
            ),
            ProfileKind::Kfdo | ProfileKind::LlvmProfgen => (
                format!("{base_c} -fprofile-sample-use={}", p()),
                BASE_LDFLAGS.to_string(),
            ),
        }
    }

    /// Flags of the instrumented build that trains `ifdo`.
    pub fn instrumented_flags(opt: &str) -> (String, String) {
        (
            format!("{opt} {DEBUG_CFLAGS} -fprofile-generate"),
            format!("{BASE_LDFLAGS} -fprofile-generate"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_always_hold_the_baseline_once_in_order() {
        let v = Variant::parse_list("ifdo, autofdo,autofdo").unwrap();
        assert_eq!(v, [Variant::Baseline, Variant::Autofdo, Variant::Ifdo]);
        assert!(Variant::parse_list("autofdo+bolt")
            .unwrap_err()
            .to_string()
            .contains("not built"));
        assert!(Variant::parse_list("fast")
            .unwrap_err()
            .to_string()
            .contains("known: baseline"));
    }

    #[test]
    fn profiles_reach_compiler_and_lto_backend() {
        let p = Path::new("/p/kfdo.afdo");
        let (c, l) = Variant::AutofdoThinlto.flags("-O2", Some(p));
        assert!(c.contains("-flto=thin") && c.contains("-fprofile-sample-use=/p/kfdo.afdo"));
        assert!(l.contains("--lto-sample-profile=/p/kfdo.afdo"));
        let (c, l) = Variant::Baseline.flags("-O2", None);
        assert_eq!(c, format!("-O2 {DEBUG_CFLAGS}"));
        assert_eq!(l, BASE_LDFLAGS);
    }
}
