//! The one table of what each kind of build offers: for a built-in variant, a kind of
//! build (a program or a kernel, for this machine or cross-built) and a compiler,
//! whether kfdo builds it, and if not, why; and the variants each kind builds when
//! `--variants` is not given. Both pipelines, their recipes' checks and the command
//! line's help read it, so they cannot disagree.

use super::compiler::Compiler;
use super::variant::Variant;

/// What is built: a program or a kernel, for this machine or for another architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildKind {
    /// A program for this machine.
    Program,
    /// A program for another architecture (`[build] target`: aarch64, the one target), run
    /// under qemu-user.
    CrossProgram,
    /// An x86-64 kernel.
    Kernel,
    /// An arm64 kernel, cross-built with clang.
    CrossKernel,
}

impl BuildKind {
    pub const ALL: [BuildKind; 4] = [
        BuildKind::Program,
        BuildKind::CrossProgram,
        BuildKind::Kernel,
        BuildKind::CrossKernel,
    ];

    pub fn is_kernel(self) -> bool {
        matches!(self, BuildKind::Kernel | BuildKind::CrossKernel)
    }

    pub fn is_cross(self) -> bool {
        matches!(self, BuildKind::CrossProgram | BuildKind::CrossKernel)
    }

    /// In words, for help and errors.
    pub fn describe(self) -> &'static str {
        match self {
            BuildKind::Program => "programs",
            BuildKind::CrossProgram => "aarch64 programs ([build] target, run under qemu-aarch64)",
            BuildKind::Kernel => "x86_64 kernels",
            BuildKind::CrossKernel => "arm64 kernels",
        }
    }
}

/// Why a build does not make a variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The kind has no such built-in variant (a kernel's layout variants stack on
    /// autofdo+thinlto only); for a kernel the name may still be a recipe's own.
    NotOffered,
    /// The variant exists for this kind, but this build cannot make it.
    Cannot {
        why: &'static str,
        /// The way out, naming a recipe or a setting that builds it.
        instead: &'static str,
    },
}

/// Whether a `kind` build with `compiler` makes the built-in variant `v`.
pub fn support(v: Variant, kind: BuildKind, compiler: Compiler) -> Result<(), Refusal> {
    use BuildKind::*;
    use Variant::*;
    let gcc = compiler.is_gcc();
    let refused = |why, instead| Err(Refusal::Cannot { why, instead });
    match (v, kind) {
        (_, CrossProgram | CrossKernel) if gcc => refused(
            "kfdo cross-builds with clang only (clang --target, LLVM=-N)",
            "use compiler = \"clang-19\"",
        ),
        // A kernel stacks layout optimizations on autofdo+thinlto only.
        (Propeller | Bolt, Kernel | CrossKernel) => Err(Refusal::NotOffered),
        (Bolt | AutofdoThinltoBolt, CrossProgram) => refused(
            "kfdo's BOLT profiles are x86-64 only (its control-flow reader decodes x86 \
             with iced-x86)",
            "choose another variant",
        ),
        (AutofdoThinltoBolt, CrossKernel) => refused(
            "BOLT kernels are x86_64 only in kfdo (BOLT's Linux kernel support is for \
             x86-64)",
            "choose another variant",
        ),
        (Propeller | AutofdoThinltoPropeller, CrossProgram) => refused(
            "kfdo's Propeller profiles have not been checked against an aarch64 BB address \
             map, so kfdo does not offer them as a result",
            "choose another variant",
        ),
        (AutofdoThinltoPropeller, CrossKernel) => refused(
            "Propeller is x86_64 only in kfdo (its profile comes from x86-64 basic-block \
             address maps and decoding)",
            "choose another variant",
        ),
        (Ifdo, CrossProgram) => refused(
            "instrumented PGO links clang's profile runtime for the target \
             (libclang_rt.profile-aarch64.a), which no package installable on this \
             x86-64 system provides (Debian ships it in libclang-rt-N-dev:arm64, which needs \
             dpkg's arm64 architecture and arm64 libraries; the cross packages have only \
             GCC's libgcov)",
            "choose another variant",
        ),
        (Ifdo, Kernel | CrossKernel) if !gcc => refused(
            "instrumented kernel PGO is GCC's gcov kernel PGO (clang's kernel PGO, \
             CONFIG_PGO_CLANG, was never merged into Linux)",
            "build it in a recipe with compiler = \"gcc-12\" (recipes/linux-gcc)",
        ),
        (Baseline | Autofdo | Ifdo, _) => Ok(()),
        // llvm-profgen's profile, ThinLTO, Propeller and BOLT are LLVM's (lld, LLVM tools).
        (_, Kernel | CrossKernel) if gcc => refused(
            "it needs clang (LLVM's profiles, ThinLTO, Propeller)",
            "use a recipe with compiler = \"clang-19\" (recipes/linux)",
        ),
        (_, _) if gcc => refused(
            "it needs clang (llvm-profgen's profile, ThinLTO, Propeller and BOLT are LLVM's)",
            "use a recipe without `compiler`, or another variant",
        ),
        (_, _) => Ok(()),
    }
}

/// Refuses the first of `variants` that a `kind` build with `compiler` does not make:
/// the variant, why, what the build makes instead, and the way out.
pub fn check(variants: &[Variant], kind: BuildKind, compiler: Compiler) -> anyhow::Result<()> {
    for v in variants {
        if let Err(r) = support(*v, kind, compiler) {
            anyhow::bail!("{}", said(*v, kind, compiler, &r));
        }
    }
    Ok(())
}

/// A refusal in words: `V: KIND built with COMPILER do not make it: WHY; ...`.
pub fn said(v: Variant, kind: BuildKind, compiler: Compiler, r: &Refusal) -> String {
    format!("{}: {}", v.name(), reason(kind, compiler, r))
}

/// Why, what the build makes instead, and the way out.
pub fn reason(kind: BuildKind, compiler: Compiler, r: &Refusal) -> String {
    let (why, instead) = match r {
        Refusal::NotOffered => ("it is not one of their variants", "choose another variant"),
        Refusal::Cannot { why, instead } => (*why, *instead),
    };
    format!(
        "{} built with {} do not make it: {why}; they make {}; {instead}",
        kind.describe(),
        compiler.command(),
        names(&offered(kind, compiler)),
    )
}

/// The built-in variants a `kind` build with `compiler` makes, in [`Variant::ALL`]'s order.
pub fn offered(kind: BuildKind, compiler: Compiler) -> Vec<Variant> {
    Variant::ALL
        .into_iter()
        .filter(|v| support(*v, kind, compiler).is_ok())
        .collect()
}

/// The built-in variants of a kind for some compiler (a recipe's own name may not be one).
pub fn built_in(kind: BuildKind) -> Vec<Variant> {
    Variant::ALL
        .into_iter()
        .filter(|v| {
            support(*v, kind, Compiler::CLANG).is_ok() || support(*v, kind, Compiler::GCC).is_ok()
        })
        .collect()
}

/// The variants built besides the baseline when `--variants` is not given (a kernel
/// recipe may name its own with `default_variants`).
pub fn defaults(kind: BuildKind, compiler: Compiler) -> &'static [Variant] {
    use Variant::*;
    match (kind, compiler.is_gcc()) {
        (BuildKind::CrossProgram | BuildKind::CrossKernel, true) => &[],
        (_, true) => &[Autofdo, Ifdo],
        (BuildKind::Program, false) => &[Autofdo, AutofdoLlvmProfgen, Ifdo, AutofdoThinlto],
        (BuildKind::CrossProgram, false) => &[Autofdo, AutofdoLlvmProfgen, AutofdoThinlto],
        (BuildKind::Kernel | BuildKind::CrossKernel, false) => &[Autofdo, AutofdoThinlto],
    }
}

/// Comma-separated names.
pub fn names(variants: &[Variant]) -> String {
    variants
        .iter()
        .map(|v| v.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `--variants`' help: what each kind builds and its defaults, from the table.
pub fn help() -> String {
    let mut s = String::from(
        "Variants to build besides the baseline, comma-separated (a layout variant brings \
         its base).",
    );
    for kind in BuildKind::ALL {
        s.push_str(&format!(" For {}:", kind.describe()));
        let mut compilers = Vec::new();
        for (family, compiler) in [("clang", Compiler::CLANG), ("GCC", Compiler::GCC)] {
            let made: Vec<Variant> = offered(kind, compiler)
                .into_iter()
                .filter(|v| *v != Variant::Baseline)
                .collect();
            if !made.is_empty() {
                compilers.push(format!(
                    " with {family}, {} (default {})",
                    names(&made),
                    names(defaults(kind, compiler))
                ));
            }
        }
        s.push_str(&compilers.join(";"));
        if kind.is_kernel() {
            s.push_str(
                "; and the recipe's own [[variant]]s (its default_variants replace the default)",
            );
        }
        s.push('.');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const GCC: Compiler = Compiler::GCC;
    const CLANG: Compiler = Compiler::CLANG;

    #[test]
    fn clang_programs_build_every_variant_and_gcc_three() {
        assert_eq!(offered(BuildKind::Program, CLANG), Variant::ALL);
        assert_eq!(
            offered(BuildKind::Program, GCC),
            [Variant::Baseline, Variant::Autofdo, Variant::Ifdo]
        );
        assert_eq!(
            offered(BuildKind::CrossProgram, CLANG),
            [
                Variant::Baseline,
                Variant::Autofdo,
                Variant::AutofdoLlvmProfgen,
                Variant::AutofdoThinlto
            ]
        );
    }

    #[test]
    fn kernels_stack_layouts_on_autofdo_thinlto_and_train_ifdo_with_gcc() {
        assert_eq!(
            built_in(BuildKind::Kernel),
            [
                Variant::Baseline,
                Variant::Autofdo,
                Variant::AutofdoLlvmProfgen,
                Variant::Ifdo,
                Variant::AutofdoThinlto,
                Variant::AutofdoThinltoPropeller,
                Variant::AutofdoThinltoBolt
            ]
        );
        assert!(matches!(
            support(Variant::Ifdo, BuildKind::Kernel, CLANG),
            Err(Refusal::Cannot { why, .. }) if why.contains("gcov kernel PGO")
        ));
        assert_eq!(
            support(Variant::Bolt, BuildKind::Kernel, CLANG),
            Err(Refusal::NotOffered)
        );
        assert_eq!(
            offered(BuildKind::CrossKernel, CLANG),
            [
                Variant::Baseline,
                Variant::Autofdo,
                Variant::AutofdoLlvmProfgen,
                Variant::AutofdoThinlto
            ]
        );
    }

    #[test]
    fn cross_builds_refuse_by_name_with_the_reason() {
        for (v, why) in [
            (Variant::Bolt, "x86-64 only"),
            (Variant::AutofdoThinltoBolt, "x86-64 only"),
            (Variant::Ifdo, "libclang_rt.profile-aarch64.a"),
            (Variant::Propeller, "Propeller"),
        ] {
            let e = check(&[Variant::Autofdo, v], BuildKind::CrossProgram, CLANG)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(&format!("{}: ", v.name())) && e.contains(why),
                "{e}"
            );
            assert!(
                e.contains("they make baseline, autofdo, autofdo-llvm-profgen, autofdo+thinlto"),
                "{e}"
            );
        }
        let e = check(&[Variant::Baseline], BuildKind::CrossKernel, GCC)
            .unwrap_err()
            .to_string();
        assert!(e.contains("clang only"), "{e}");
    }

    #[test]
    fn every_default_is_offered_and_the_help_names_every_offered_variant() {
        let help = help();
        for kind in BuildKind::ALL {
            for compiler in [CLANG, GCC] {
                for v in defaults(kind, compiler) {
                    assert_eq!(support(*v, kind, compiler), Ok(()), "{kind:?} {v:?}");
                }
            }
        }
        for v in Variant::ALL {
            assert!(help.contains(v.name()), "{v:?} missing from: {help}");
        }
        assert!(
            help.contains("with GCC, autofdo, ifdo (default autofdo, ifdo)"),
            "{help}"
        );
    }
}
