//! The built-in variants `kfdo optimize` compares, for programs and kernels alike: each
//! one a profile and the optimizations stacked on it. Which build makes which is
//! `support`'s table; a kernel recipe adds its own.
//!
//! The layout variants optimize a finished build (their *base*: the baseline or
//! autofdo+thinlto) once more from a recording of that build: Propeller relinks it with
//! clang's basic-block sections and lld's symbol ordering, BOLT rewrites the linked
//! program.

use anyhow::bail;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    Baseline,
    /// kfdo's AutoFDO profile of the recorded training run.
    Autofdo,
    /// llvm-profgen's profile of the same perf.data: the reference converter.
    AutofdoLlvmProfgen,
    /// Instrumented PGO: the upper bound sampling aims at.
    Ifdo,
    /// kfdo's profile with ThinLTO (the profile also reaches the LTO backend).
    AutofdoThinlto,
    /// The baseline relinked with kfdo's Propeller profiles of its training run.
    Propeller,
    /// The baseline rewritten by llvm-bolt with kfdo's fdata of its training run.
    Bolt,
    /// autofdo+thinlto relinked with Propeller profiles of its own training run.
    AutofdoThinltoPropeller,
    /// autofdo+thinlto rewritten by llvm-bolt from its own training run.
    AutofdoThinltoBolt,
}

/// The profile a build's compiler reads: the first thing stacked on the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompileProfile {
    None,
    /// kfdo's AutoFDO profile of the baseline's training run.
    Kfdo,
    /// llvm-profgen's profile of the same recording (the reference converter).
    LlvmProfgen,
    /// The counts of an instrumented build's training run (clang's `.profdata`, or
    /// GCC's `.gcda` files).
    Instrumented,
}

/// The layout optimization stacked last, on a finished build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Relinked with basic-block sections and a symbol order.
    Propeller,
    /// Rewritten by llvm-bolt.
    Bolt,
}

/// Which profile a variant's own build step reads: its layout's when it has one, else
/// its compiler's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileKind {
    None,
    /// kfdo's AutoFDO profile of the baseline's training run.
    Kfdo,
    /// llvm-profgen's profile of the same recording (the reference converter).
    LlvmProfgen,
    /// The counts of an instrumented build's training run (clang's `.profdata`, or
    /// GCC's `.gcda` files).
    Instrumented,
    /// kfdo's Propeller cc and ld profiles of the base build's recording.
    Propeller,
    /// kfdo's BOLT fdata of the base build's recording.
    Bolt,
}

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

    pub const fn name(self) -> &'static str {
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

    /// The built-in variant called `word`.
    pub fn from_name(word: &str) -> Option<Variant> {
        Variant::ALL.iter().find(|v| v.name() == word).copied()
    }

    /// The profile its compiler reads (a layout variant's: its base's).
    pub fn compile_profile(self) -> CompileProfile {
        match self {
            Variant::Baseline | Variant::Propeller | Variant::Bolt => CompileProfile::None,
            Variant::Autofdo
            | Variant::AutofdoThinlto
            | Variant::AutofdoThinltoPropeller
            | Variant::AutofdoThinltoBolt => CompileProfile::Kfdo,
            Variant::AutofdoLlvmProfgen => CompileProfile::LlvmProfgen,
            Variant::Ifdo => CompileProfile::Instrumented,
        }
    }

    /// Whether it is built with ThinLTO.
    pub fn thinlto(self) -> bool {
        matches!(
            self,
            Variant::AutofdoThinlto
                | Variant::AutofdoThinltoPropeller
                | Variant::AutofdoThinltoBolt
        )
    }

    /// The layout optimization stacked on its base, if it is a layout variant.
    pub fn layout(self) -> Option<Layout> {
        match self {
            Variant::Propeller | Variant::AutofdoThinltoPropeller => Some(Layout::Propeller),
            Variant::Bolt | Variant::AutofdoThinltoBolt => Some(Layout::Bolt),
            _ => None,
        }
    }

    /// The profile this variant's own build step reads: for a layout variant, the
    /// layout profile (its base's build read the compiler's).
    pub fn profile(self) -> ProfileKind {
        match (self.layout(), self.compile_profile()) {
            (Some(Layout::Propeller), _) => ProfileKind::Propeller,
            (Some(Layout::Bolt), _) => ProfileKind::Bolt,
            (None, CompileProfile::None) => ProfileKind::None,
            (None, CompileProfile::Kfdo) => ProfileKind::Kfdo,
            (None, CompileProfile::LlvmProfgen) => ProfileKind::LlvmProfgen,
            (None, CompileProfile::Instrumented) => ProfileKind::Instrumented,
        }
    }

    /// The build a layout variant (Propeller, BOLT) optimizes further; None for the
    /// variants built from source with one profile.
    pub const fn base(self) -> Option<Variant> {
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
        let mut named = Vec::new();
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let Some(v) = Variant::from_name(word) else {
                bail!(
                    "--variants: unknown variant '{word}' (known: {})",
                    Self::known()
                );
            };
            named.push(v);
        }
        Ok(Variant::with_bases(&named))
    }

    /// `variants` with the baseline and each layout variant's base, once each, in order.
    pub fn with_bases(variants: &[Variant]) -> Vec<Variant> {
        let mut out = vec![Variant::Baseline];
        for v in variants {
            for v in [v.base(), Some(*v)].into_iter().flatten() {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
        }
        out.sort();
        out
    }

    fn known() -> String {
        Variant::ALL.map(|v| v.name()).join(", ")
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
            assert_eq!(Variant::from_name(v.name()), Some(v));
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
    fn each_variant_is_its_stack() {
        for v in Variant::ALL {
            // The name says the stack: profile, then +thinlto, then the layout.
            let mut words = Vec::new();
            match v.compile_profile() {
                CompileProfile::None => {}
                CompileProfile::Kfdo => words.push("autofdo"),
                CompileProfile::LlvmProfgen => words.push("autofdo-llvm-profgen"),
                CompileProfile::Instrumented => words.push("ifdo"),
            }
            if v.thinlto() {
                words.push("thinlto");
            }
            match v.layout() {
                Some(Layout::Propeller) => words.push("propeller"),
                Some(Layout::Bolt) => words.push("bolt"),
                None => {}
            }
            let name = if words.is_empty() {
                "baseline".to_string()
            } else {
                words.join("+")
            };
            assert_eq!(name, v.name());
            assert_eq!(v.is_layout(), v.layout().is_some());
            if let Some(base) = v.base() {
                assert_eq!(base.compile_profile(), v.compile_profile());
                assert_eq!(base.thinlto(), v.thinlto());
            }
        }
    }
}
