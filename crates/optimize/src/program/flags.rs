//! The compiler and linker flags each of a program's variants (`crate::vocabulary`)
//! gets from clang. Every variant shares the baseline's flags, so the only difference
//! between two builds is the profile (and, for +thinlto, LTO).
//!
//! A layout variant's base carries what the layout step reads: the BB address map
//! (`-fbasic-block-address-map`, a non-allocated section: the code is unchanged) or the
//! relocations (`--emit-relocs`).

use std::path::Path;

use crate::vocabulary::{ProfileKind, Variant};

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

/// llvm-bolt's options (19's and 22's alike) for the BOLT variants: blocks by ext-TSP, functions by
/// hfsort, cold blocks split out, and the dynamic statistics in the log.
pub const BOLT_OPTIONS: [&str; 5] = [
    "-reorder-blocks=ext-tsp",
    "-reorder-functions=hfsort",
    "-split-functions",
    "-split-all-cold",
    "-dyno-stats",
];

/// CFLAGS (also CXXFLAGS) and LDFLAGS of this variant. `profile` is the
/// profile file for variants that read one. A layout variant's flags are its
/// base's (see [`clang_build_flags`] and [`propeller_flags`]).
pub fn clang_flags(v: Variant, opt: &str, profile: Option<&Path>) -> (String, String) {
    let base_c = format!("{opt} {DEBUG_CFLAGS}");
    let p = || profile.map(|p| p.display().to_string()).unwrap_or_default();
    match v {
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
/// [`clang_flags`], plus the BB address map when a Propeller variant
/// optimizes it further and `--emit-relocs` when a BOLT variant does.
pub fn clang_build_flags(
    v: Variant,
    opt: &str,
    profile: Option<&Path>,
    requested: &[Variant],
) -> (String, String) {
    let (mut c, mut l) = clang_flags(v, opt, profile);
    let on_top = |kind: ProfileKind| {
        requested
            .iter()
            .any(|r| r.base() == Some(v) && r.profile() == kind)
    };
    if on_top(ProfileKind::Propeller) {
        (c, l) = with_map((c, l), v == Variant::AutofdoThinlto);
    }
    if on_top(ProfileKind::Bolt) {
        l = format!("{l} {RELOCS_LDFLAGS}");
    }
    (c, l)
}

/// Flags of the instrumented build that trains `ifdo`.
pub fn clang_instrumented_flags(opt: &str) -> (String, String) {
    (
        format!("{opt} {DEBUG_CFLAGS} -fprofile-generate"),
        format!("{BASE_LDFLAGS} -fprofile-generate"),
    )
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
/// [`clang_build_flags`]) with the map, clang's basic-block sections from the `cc`
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
    fn profiles_reach_compiler_and_lto_backend() {
        let p = Path::new("/p/kfdo.afdo");
        let (c, l) = clang_flags(Variant::AutofdoThinlto, "-O2", Some(p));
        assert!(c.contains("-flto=thin") && c.contains("-fprofile-sample-use=/p/kfdo.afdo"));
        assert!(l.contains("--lto-sample-profile=/p/kfdo.afdo"));
        let (c, l) = clang_flags(Variant::Baseline, "-O2", None);
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
            clang_build_flags(Variant::Baseline, "-O2", None, &plain),
            clang_flags(Variant::Baseline, "-O2", None)
        );
        assert_eq!(
            clang_build_flags(Variant::AutofdoThinlto, "-O2", Some(p), &plain),
            clang_flags(Variant::AutofdoThinlto, "-O2", Some(p))
        );
        // Propeller on the baseline: the map in the compiler only.
        let prop = Variant::parse_list("propeller").unwrap();
        let (c, l) = clang_build_flags(Variant::Baseline, "-O2", None, &prop);
        assert_eq!(c, format!("-O2 {DEBUG_CFLAGS} -fbasic-block-address-map"));
        assert_eq!(l, BASE_LDFLAGS);
        // ... and autofdo+thinlto is untouched by it.
        assert_eq!(
            clang_build_flags(
                Variant::AutofdoThinlto,
                "-O2",
                Some(p),
                &[Variant::Propeller, Variant::AutofdoThinlto]
            ),
            clang_flags(Variant::AutofdoThinlto, "-O2", Some(p))
        );
        // BOLT on the baseline: relocations in the link.
        let (c, l) = clang_build_flags(Variant::Baseline, "-O2", None, &[Variant::Bolt]);
        assert_eq!(c, format!("-O2 {DEBUG_CFLAGS}"));
        assert_eq!(l, format!("{BASE_LDFLAGS} -Wl,--emit-relocs"));
        // Everything: both, and the ThinLTO backend writes the map.
        let (c, l) = clang_build_flags(Variant::AutofdoThinlto, "-O2", Some(p), &all);
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
        let (c, l) = clang_build_flags(Variant::Baseline, "-O2", None, &all);
        assert!(c.ends_with(" -fbasic-block-address-map") && l.ends_with(" -Wl,--emit-relocs"));
        // The layout variants themselves never get the additions.
        for v in [
            Variant::Propeller,
            Variant::Bolt,
            Variant::AutofdoThinltoBolt,
        ] {
            assert_eq!(
                clang_build_flags(v, "-O2", Some(p), &all),
                clang_flags(v, "-O2", Some(p))
            );
        }
    }

    #[test]
    fn propeller_relinks_with_both_profiles() {
        let (cc, ld) = (
            Path::new("/p/x_cc_profile.txt"),
            Path::new("/p/x_ld_profile.txt"),
        );
        let (c, l) = propeller_flags(clang_flags(Variant::Baseline, "-O2", None), cc, ld, false);
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
            clang_flags(Variant::AutofdoThinlto, "-O2", Some(afdo)),
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
