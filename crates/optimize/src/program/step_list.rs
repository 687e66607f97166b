//! The steps of a program's run, in the order `pipeline` takes them (see its diagram),
//! each with the options it reads: what progress counts, what the run may do, and what
//! `kfdo optimize` refuses to be told when no step reads it.

use crate::steps::{Opt, StepList};
use crate::vocabulary::{Compiler, ProfileKind, Variant};

use super::recipe::Recipe;

/// What decides a program run's steps.
pub struct Shape<'a> {
    pub recipe: &'a Recipe,
    /// Baseline first, each layout variant after its base.
    pub variants: &'a [Variant],
    pub compiler: Compiler,
    pub heatmaps: bool,
}

/// Whether a layout variant optimizes the build `base`.
pub fn layout_on(variants: &[Variant], base: Variant) -> bool {
    variants.iter().any(|v| v.base() == Some(base))
}

/// Whether the baseline's training run is recorded: a profile is made of it, a layout
/// variant sits on the baseline, or it is the baseline's heat map.
pub fn records_training(variants: &[Variant], heatmaps: bool) -> bool {
    variants.iter().any(|v| {
        !v.is_layout() && matches!(v.profile(), ProfileKind::Kfdo | ProfileKind::LlvmProfgen)
    }) || heatmaps
        || layout_on(variants, Variant::Baseline)
}

pub fn step_list(s: &Shape<'_>) -> StepList {
    let has = |v: Variant| s.variants.contains(&v);
    let build = [Opt::Cc, Opt::Cxx];
    let record = [Opt::Method, Opt::Period];
    let mut l = StepList::default();
    if s.recipe.source.debian.is_some() {
        l.push("source", &[]);
    }
    if s.recipe.source.prepare.is_some() {
        l.push("prepare", &build);
    }
    l.push("build baseline", &build);
    if has(Variant::Ifdo) {
        l.push("build ifdo-instrumented", &build);
        // clang's counts are merged by llvm-profdata; GCC's .gcda files are read as
        // they are.
        let merge: &[Opt] = if s.compiler.is_gcc() {
            &[]
        } else {
            &[Opt::LlvmProfdata]
        };
        l.push("train ifdo", merge);
    }
    if records_training(s.variants, s.heatmaps) {
        l.push("record training run", &record);
    }
    if has(Variant::Autofdo) || has(Variant::AutofdoThinlto) {
        l.push("profile kfdo", &[]);
    }
    if has(Variant::AutofdoLlvmProfgen) {
        l.push("profile llvm-profgen", &[Opt::LlvmProfgen]);
    }
    let on = |base: Variant| {
        s.variants
            .iter()
            .copied()
            .filter(move |v| v.base() == Some(base))
    };
    for v in on(Variant::Baseline) {
        l.push(format!("profile {}", v.name()), &[]);
    }
    // The autofdo+thinlto chain: its build, its recording and the layout variants on it.
    let chain = layout_on(s.variants, Variant::AutofdoThinlto);
    for v in s.variants.iter().filter(|v| **v != Variant::Baseline) {
        let in_chain = *v == Variant::AutofdoThinlto || v.base() == Some(Variant::AutofdoThinlto);
        if !(chain && in_chain) {
            l.push(format!("build {}", v.name()), &build);
        }
    }
    if chain {
        l.push("build autofdo+thinlto", &build);
        l.push("record autofdo+thinlto (training run)", &record);
        for v in on(Variant::AutofdoThinlto) {
            l.push(format!("profile {}", v.name()), &[]);
        }
        for v in on(Variant::AutofdoThinlto) {
            l.push(format!("build {}", v.name()), &build);
        }
    }
    l.push("benchmark", &[Opt::Runs, Opt::Counters]);
    if s.heatmaps {
        for v in s
            .variants
            .iter()
            .filter(|v| **v == Variant::Autofdo || v.is_layout())
        {
            l.push(format!("record {} (for its heat map)", v.name()), &record);
        }
    }
    l.push("report", &[]);
    l
}
