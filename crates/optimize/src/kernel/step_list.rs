//! The steps of a kernel's run, in the order `pipeline` takes them (see its diagram),
//! each with the options it reads: what progress counts, what the run may do, and what
//! `kfdo optimize` refuses to be told when no step reads it.

use crate::steps::{Opt, StepList};
use crate::vocabulary::CompileProfile;

use super::ctx::KernelOptions;
use super::recipe::KernelRecipe;
use super::uml::twin::twin_of;
use super::variant::{KernelVariant, PropellerRole, INSTRUMENTED, PROPELLER_BASE};

/// What decides a kernel run's steps.
pub struct Shape<'a> {
    pub recipe: &'a KernelRecipe,
    /// Baseline first, each kernel after the one it is made from.
    pub variants: &'a [KernelVariant],
    pub heatmaps: bool,
    pub packages: bool,
    pub uml: bool,
    /// Whether the kernels are booted under KVM too (asked for, and KVM works here).
    pub kvm: bool,
}

impl<'a> Shape<'a> {
    /// The run `o` asks for; `kvm`: whether KVM boots the kernels too.
    pub fn of(o: &'a KernelOptions, kvm: bool) -> Shape<'a> {
        Shape {
            recipe: &o.recipe,
            variants: &o.variants,
            heatmaps: o.heatmaps,
            packages: o.packages,
            uml: o.uml,
            kvm,
        }
    }
}

/// Whether the recipe's kernels could boot under KVM here: an x86_64 kernel on an
/// x86_64 host (`--no-kvm` means something only then).
pub fn kvm_possible(recipe: &KernelRecipe) -> bool {
    recipe.kernel.arch == "x86_64" && std::env::consts::ARCH == "x86_64"
}

pub fn step_list(s: &Shape<'_>) -> StepList {
    let modules = !s.recipe.workload.modules.is_empty();
    let mut l = StepList::default();
    // Each kernel's own initramfs, when the workload loads modules built with it.
    let initramfs = |l: &mut StepList, variant: &str| {
        if modules {
            l.push(format!("initramfs {variant}"), &[]);
        }
    };
    l.push("kernel source", &[]);
    l.push("configure base", &[]);
    for v in s.variants {
        l.push(format!("configure {}", v.name), &[]);
    }
    l.push("build initramfs", &[]);
    let baseline = &s.variants[0];
    l.push(format!("build {}", baseline.name), &[]);
    initramfs(&mut l, &baseline.name);
    l.push("record training run", &[Opt::Period]);
    l.push("profile kfdo", &[]);
    if baseline.is_clang() {
        l.push("profile llvm-profgen", &[Opt::LlvmProfgen]);
    }
    for v in &s.variants[1..] {
        if v.bolt {
            // The kernel it rewrites, recorded again (booted with BOLT's boot arguments).
            initramfs(&mut l, PROPELLER_BASE);
            l.push(
                format!("record {PROPELLER_BASE} training run for BOLT"),
                &[Opt::Period],
            );
            l.push(format!("bolt {}", v.name), &[]);
            continue;
        }
        if v.profile == CompileProfile::Instrumented {
            l.push(format!("configure {INSTRUMENTED}"), &[]);
            l.push(format!("build {INSTRUMENTED}"), &[]);
            initramfs(&mut l, INSTRUMENTED);
            l.push(format!("train {INSTRUMENTED}"), &[]);
        }
        if v.propeller == PropellerRole::Optimized {
            initramfs(&mut l, PROPELLER_BASE);
            l.push(
                format!("record {PROPELLER_BASE} training run"),
                &[Opt::Period],
            );
            l.push("profile propeller", &[]);
        }
        l.push(format!("build {}", v.name), &[]);
    }
    for v in s.variants {
        initramfs(&mut l, &v.name);
    }
    l.push("benchmark", &[Opt::Boots]);
    if s.heatmaps {
        for v in s
            .variants
            .iter()
            .filter(|v| v.name == baseline.name || v.profile != CompileProfile::None)
        {
            l.push(format!("record {} evaluation", v.name), &[Opt::Period]);
        }
    }
    if s.uml {
        l.push("configure uml base", &[]);
        for twin in s.variants.iter().filter_map(|v| twin_of(v).ok()) {
            l.push(format!("configure uml {}", twin.name), &[]);
            l.push(format!("build uml {}", twin.name), &[]);
        }
        l.push("benchmark uml", &[Opt::Boots]);
    }
    if s.kvm {
        l.push("benchmark kvm", &[Opt::Boots]);
    }
    l.push("report", &[]);
    if s.packages {
        // Only when a variant wins, and its kernel was built by kbuild.
        l.push("packages", &[]);
    }
    l.chooses(&[Opt::NoPackages]);
    if s.recipe.uml.is_some() {
        l.chooses(&[Opt::NoUml]);
    }
    if kvm_possible(s.recipe) {
        l.chooses(&[Opt::NoKvm]);
    }
    l
}
