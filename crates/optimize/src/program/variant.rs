//! The builds `kfdo optimize` compares, and the compiler and linker flags
//! each one gets. Every variant shares the baseline's flags, so the only
//! difference between two builds is the profile (and, for +thinlto, LTO).
//!
//! The layout variants optimize a finished build (their *base*: the baseline or
//! autofdo+thinlto) once more from a recording of that build: Propeller relinks it
//! with clang's basic-block sections and lld's symbol ordering, BOLT rewrites the
//! linked program. Their base then carries what they read: the BB address map
//! (`-fbasic-block-address-map`, a non-allocated section: the code is unchanged) or the
//! relocations (`--emit-relocs`).

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
    /// The baseline relinked with kfdo's Propeller profiles of its training run.
    Propeller,
    /// The baseline rewritten by llvm-bolt-19 with kfdo's fdata of its training run.
    Bolt,
    /// autofdo+thinlto relinked with Propeller profiles of its own training run.
    AutofdoThinltoPropeller,
    /// autofdo+thinlto rewritten by llvm-bolt-19 from its own training run.
    AutofdoThinltoBolt,
}

/// Which profile a variant's build reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileKind {
    None,
    Kfdo,
    LlvmProfgen,
    Instrumented,
    /// kfdo's Propeller cc and ld profiles of the base build's recording.
    Propeller,
    /// kfdo's BOLT fdata of the base build's recording.
    Bolt,
}

/// Flags every build gets: line tables good enough for sampling profiles
/// (`-fdebug-info-for-profiling`, unique internal names), DWARF 4 because
/// valgrind 3.19 (cachegrind counters) cannot read DWARF 5, and lld.
pub const DEBUG_CFLAGS: &str =
    "-g -gdwarf-4 -fdebug-info-for-profiling -funique-internal-linkage-names";
pub const BASE_LDFLAGS: &str = "-fuse-ld=lld";

/// The BB address map Propeller's profile is made from (compiler; the ThinLTO backend
/// runs in lld and takes the linker option).
pub const MAP_CFLAGS: &str = "-fbasic-block-address-map";
pub const MAP_LTO_LDFLAGS: &str = "-Wl,--lto-basic-block-address-map";
/// ThinLTO names the local functions it promotes `NAME.llvm.HASH`, HASH of the module's
/// bitcode, which holds the compilation directory of its debug info; each variant builds
/// in its own directory. With the directory out of the bitcode, the relink's modules
/// (`-fbasic-block-sections` leaves the bitcode as it is) get the base's names, the
/// names its Propeller profiles list; otherwise lld finds none of them to order.
pub const SAME_NAMES_LTO_CFLAGS: &str = "-fdebug-compilation-dir=.";
/// The relocations BOLT needs to move functions.
pub const RELOCS_LDFLAGS: &str = "-Wl,--emit-relocs";

/// llvm-bolt-19's options for the BOLT variants: blocks by ext-TSP, functions by
/// hfsort, cold blocks split out, and the dynamic statistics in the log.
pub const BOLT_OPTIONS: [&str; 5] = [
    "-reorder-blocks=ext-tsp",
    "-reorder-functions=hfsort",
    "-split-functions",
    "-split-all-cold",
    "-dyno-stats",
];

impl Variant {
    pub const ALL: [Variant; 9] = [
        Variant::Baseline,
        Variant::Autofdo,
        Variant::AutofdoLlvmProfgen,
        Variant::Ifdo,
        Variant::AutofdoThinlto,
        Variant::Propeller,
        Variant::Bolt,
        Variant::AutofdoThinltoPropeller,
        Variant::AutofdoThinltoBolt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Baseline => "baseline",
            Variant::Autofdo => "autofdo",
            Variant::AutofdoLlvmProfgen => "autofdo-llvm-profgen",
            Variant::Ifdo => "ifdo",
            Variant::AutofdoThinlto => "autofdo+thinlto",
            Variant::Propeller => "propeller",
            Variant::Bolt => "bolt",
            Variant::AutofdoThinltoPropeller => "autofdo+thinlto+propeller",
            Variant::AutofdoThinltoBolt => "autofdo+thinlto+bolt",
        }
    }

    pub fn profile(self) -> ProfileKind {
        match self {
            Variant::Baseline => ProfileKind::None,
            Variant::Autofdo | Variant::AutofdoThinlto => ProfileKind::Kfdo,
            Variant::AutofdoLlvmProfgen => ProfileKind::LlvmProfgen,
            Variant::Ifdo => ProfileKind::Instrumented,
            Variant::Propeller | Variant::AutofdoThinltoPropeller => ProfileKind::Propeller,
            Variant::Bolt | Variant::AutofdoThinltoBolt => ProfileKind::Bolt,
        }
    }

    /// The build a layout variant (Propeller, BOLT) optimizes further; None for the
    /// variants built from source with one profile.
    pub fn base(self) -> Option<Variant> {
        match self {
            Variant::Propeller | Variant::Bolt => Some(Variant::Baseline),
            Variant::AutofdoThinltoPropeller | Variant::AutofdoThinltoBolt => {
                Some(Variant::AutofdoThinlto)
            }
            _ => None,
        }
    }

    /// Whether this is a layout variant (made from a recording of its base build).
    pub fn is_layout(self) -> bool {
        self.base().is_some()
    }

    /// A comma-separated list; baseline is always built (everything is judged against
    /// it), and a layout variant brings its base build along (built and judged too).
    pub fn parse_list(list: &str) -> anyhow::Result<Vec<Variant>> {
        let mut out = vec![Variant::Baseline];
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let Some(v) = Variant::ALL.iter().find(|v| v.name() == word).copied() else {
                bail!(
                    "--variants: unknown variant '{word}' (known: {})",
                    Self::known()
                );
            };
            for v in [v.base(), Some(v)].into_iter().flatten() {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
        }
        out.sort();
        Ok(out)
    }

    fn known() -> String {
        Variant::ALL.map(|v| v.name()).join(", ")
    }

    /// CFLAGS (also CXXFLAGS) and LDFLAGS of this variant. `profile` is the
    /// profile file for variants that read one. A layout variant's flags are its
    /// base's (see [`Variant::build_flags`] and [`propeller_flags`]).
    pub fn flags(self, opt: &str, profile: Option<&Path>) -> (String, String) {
        let base_c = format!("{opt} {DEBUG_CFLAGS}");
        let p = || profile.map(|p| p.display().to_string()).unwrap_or_default();
        match self {
            Variant::Baseline | Variant::Propeller | Variant::Bolt => {
                (base_c, BASE_LDFLAGS.to_string())
            }
            Variant::Ifdo => (
                format!("{base_c} -fprofile-use={}", p()),
                BASE_LDFLAGS.to_string(),
            ),
            Variant::Autofdo | Variant::AutofdoLlvmProfgen => (
                format!("{base_c} -fprofile-sample-use={}", p()),
                BASE_LDFLAGS.to_string(),
            ),
            Variant::AutofdoThinlto
            | Variant::AutofdoThinltoPropeller
            | Variant::AutofdoThinltoBolt => (
                format!("{base_c} -flto=thin -fprofile-sample-use={}", p()),
                // lld runs the ThinLTO backends; they read the profile too (as kbuild does).
                format!("{BASE_LDFLAGS} -flto=thin -Wl,--lto-sample-profile={}", p()),
            ),
        }
    }

    /// The flags this variant is built with when `requested` are judged: its own
    /// [`flags`](Variant::flags), plus the BB address map when a Propeller variant
    /// optimizes it further and `--emit-relocs` when a BOLT variant does.
    pub fn build_flags(
        self,
        opt: &str,
        profile: Option<&Path>,
        requested: &[Variant],
    ) -> (String, String) {
        let (mut c, mut l) = self.flags(opt, profile);
        let on_top = |kind: ProfileKind| {
            requested
                .iter()
                .any(|v| v.base() == Some(self) && v.profile() == kind)
        };
        if on_top(ProfileKind::Propeller) {
            (c, l) = with_map((c, l), self == Variant::AutofdoThinlto);
        }
        if on_top(ProfileKind::Bolt) {
            l = format!("{l} {RELOCS_LDFLAGS}");
        }
        (c, l)
    }

    /// Flags of the instrumented build that trains `ifdo`.
    pub fn instrumented_flags(opt: &str) -> (String, String) {
        (
            format!("{opt} {DEBUG_CFLAGS} -fprofile-generate"),
            format!("{BASE_LDFLAGS} -fprofile-generate"),
        )
    }
}

/// `flags` with the BB address map: in the compiler, and with `lto` in lld's ThinLTO
/// backend (where an LTO build's code is generated), where the build also keeps its
/// directory out of the bitcode ([`SAME_NAMES_LTO_CFLAGS`]).
pub fn with_map((c, l): (String, String), lto: bool) -> (String, String) {
    if lto {
        (
            format!("{c} {MAP_CFLAGS} {SAME_NAMES_LTO_CFLAGS}"),
            format!("{l} {MAP_LTO_LDFLAGS}"),
        )
    } else {
        (format!("{c} {MAP_CFLAGS}"), l)
    }
}

/// The relink of a Propeller variant: its base's flags (`base`, without the additions of
/// [`Variant::build_flags`]) with the map, clang's basic-block sections from the `cc`
/// profile, and lld's symbol order from the `ld` profile. With `lto` the cluster list
/// also goes to lld's ThinLTO backend; `-fbasic-block-sections` stays in CFLAGS for
/// the objects compiled without LTO. No `--no-warn-symbol-ordering`: kfdo lists only
/// symbols that exist, so lld's warnings must stay visible.
pub fn propeller_flags(
    base: (String, String),
    cc: &Path,
    ld: &Path,
    lto: bool,
) -> (String, String) {
    let (c, l) = with_map(base, lto);
    let c = format!("{c} -fbasic-block-sections=list={}", cc.display());
    let l = if lto {
        format!("{l} -Wl,--lto-basic-block-sections={}", cc.display())
    } else {
        l
    };
    (
        c,
        format!("{l} -Wl,--symbol-ordering-file={}", ld.display()),
    )
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
            .contains("known: baseline"));
        assert!(Variant::parse_list("fast")
            .unwrap_err()
            .to_string()
            .contains("autofdo+thinlto+bolt"));
    }

    #[test]
    fn layout_variants_bring_their_base() {
        let v = Variant::parse_list("autofdo+thinlto+bolt,propeller").unwrap();
        assert_eq!(
            v,
            [
                Variant::Baseline,
                Variant::AutofdoThinlto,
                Variant::Propeller,
                Variant::AutofdoThinltoBolt
            ]
        );
        for v in Variant::ALL {
            assert!(Variant::parse_list(v.name()).unwrap().contains(&v));
            assert_eq!(
                v.is_layout(),
                v.name().contains("propeller") || v.name().contains("bolt")
            );
        }
        assert_eq!(Variant::Bolt.base(), Some(Variant::Baseline));
        assert_eq!(
            Variant::AutofdoThinltoPropeller.base(),
            Some(Variant::AutofdoThinlto)
        );
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

    #[test]
    fn bases_carry_the_map_and_relocations_only_when_asked() {
        let all = Variant::ALL;
        let plain = Variant::parse_list("autofdo,autofdo+thinlto,ifdo").unwrap();
        let p = Path::new("/p/kfdo.afdo");
        // Nothing on top: the flags are the variant's own.
        assert_eq!(
            Variant::Baseline.build_flags("-O2", None, &plain),
            Variant::Baseline.flags("-O2", None)
        );
        assert_eq!(
            Variant::AutofdoThinlto.build_flags("-O2", Some(p), &plain),
            Variant::AutofdoThinlto.flags("-O2", Some(p))
        );
        // Propeller on the baseline: the map in the compiler only.
        let prop = Variant::parse_list("propeller").unwrap();
        let (c, l) = Variant::Baseline.build_flags("-O2", None, &prop);
        assert_eq!(c, format!("-O2 {DEBUG_CFLAGS} -fbasic-block-address-map"));
        assert_eq!(l, BASE_LDFLAGS);
        // ... and autofdo+thinlto is untouched by it.
        assert_eq!(
            Variant::AutofdoThinlto.build_flags(
                "-O2",
                Some(p),
                &[Variant::Propeller, Variant::AutofdoThinlto]
            ),
            Variant::AutofdoThinlto.flags("-O2", Some(p))
        );
        // BOLT on the baseline: relocations in the link.
        let (c, l) = Variant::Baseline.build_flags("-O2", None, &[Variant::Bolt]);
        assert_eq!(c, format!("-O2 {DEBUG_CFLAGS}"));
        assert_eq!(l, format!("{BASE_LDFLAGS} -Wl,--emit-relocs"));
        // Everything: both, and the ThinLTO backend writes the map.
        let (c, l) = Variant::AutofdoThinlto.build_flags("-O2", Some(p), &all);
        assert!(
            c.ends_with(
                "-fprofile-sample-use=/p/kfdo.afdo -fbasic-block-address-map \
                 -fdebug-compilation-dir=."
            ),
            "{c}"
        );
        assert!(
            l.ends_with(
                "--lto-sample-profile=/p/kfdo.afdo -Wl,--lto-basic-block-address-map -Wl,--emit-relocs"
            ),
            "{l}"
        );
        let (c, l) = Variant::Baseline.build_flags("-O2", None, &all);
        assert!(c.ends_with(" -fbasic-block-address-map") && l.ends_with(" -Wl,--emit-relocs"));
        // The layout variants themselves never get the additions.
        for v in [
            Variant::Propeller,
            Variant::Bolt,
            Variant::AutofdoThinltoBolt,
        ] {
            assert_eq!(v.build_flags("-O2", Some(p), &all), v.flags("-O2", Some(p)));
        }
    }

    #[test]
    fn propeller_relinks_with_both_profiles() {
        let (cc, ld) = (
            Path::new("/p/x_cc_profile.txt"),
            Path::new("/p/x_ld_profile.txt"),
        );
        let (c, l) = propeller_flags(Variant::Baseline.flags("-O2", None), cc, ld, false);
        assert_eq!(
            c,
            format!(
                "-O2 {DEBUG_CFLAGS} -fbasic-block-address-map \
                 -fbasic-block-sections=list=/p/x_cc_profile.txt"
            )
        );
        assert_eq!(
            l,
            "-fuse-ld=lld -Wl,--symbol-ordering-file=/p/x_ld_profile.txt"
        );
        assert!(!l.contains("no-warn-symbol-ordering"));

        let afdo = Path::new("/p/kfdo.afdo");
        let (c, l) = propeller_flags(
            Variant::AutofdoThinlto.flags("-O2", Some(afdo)),
            cc,
            ld,
            true,
        );
        assert!(
            c.contains("-flto=thin -fprofile-sample-use=/p/kfdo.afdo"),
            "{c}"
        );
        assert!(
            c.ends_with(
                "-fbasic-block-address-map -fdebug-compilation-dir=. \
                 -fbasic-block-sections=list=/p/x_cc_profile.txt"
            ),
            "{c}"
        );
        assert_eq!(
            l,
            "-fuse-ld=lld -flto=thin -Wl,--lto-sample-profile=/p/kfdo.afdo \
             -Wl,--lto-basic-block-address-map \
             -Wl,--lto-basic-block-sections=/p/x_cc_profile.txt \
             -Wl,--symbol-ordering-file=/p/x_ld_profile.txt"
        );
    }
}
