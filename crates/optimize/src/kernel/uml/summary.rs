//! The native-time part of the kernel verdict: what the twins are and how they differ
//! from the real kernels, how much of the profile applies to them, and per evaluation
//! workload the twins' host CPU time and the workload's own time, with the index.

use std::fmt::Write;
use std::path::Path;

use kfdo_bench::analysis;
use kfdo_bench::stats;
use kfdo_bench::store::Store;

use super::coverage::Coverage;
use crate::kernel::summary::{index, timed_tables};

/// What the section says besides the measurements.
pub struct NativeNotes {
    pub boots: usize,
    /// Variants without a twin, and why.
    pub no_twin: Vec<(String, String)>,
    /// The recipe's settings UML does not have.
    pub left_out: Vec<String>,
    /// The profile's split (None without a profiled twin).
    pub coverage: Option<Coverage>,
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// The section's Markdown, from the twins' store `db`.
pub fn section(db: &Path, notes: &NativeNotes) -> anyhow::Result<String> {
    let contents = Store::open_existing(db)?.load()?;
    let a = analysis::analyze(&contents, stats::BOOTSTRAP_RESAMPLES);
    let mut s = String::new();
    writeln!(
        s,
        "## Native time: User-Mode Linux twins\n\n\
         Each variant's twin is the same kernel source, configuration fragments and profile \
         built as User-Mode Linux (`ARCH=um`; the profile through KCFLAGS: \
         `-fdebug-info-for-profiling`, the flow-sensitive discriminators, `-gmlt`, \
         `-fprofile-sample-use`; ThinLTO through UML's `LTO_CLANG_THIN`), booted {} times per \
         workload on this machine as a host process, the twins interleaved. Its generic code \
         (net/, fs/, mm/, kernel/, lib/) runs natively; its architecture code is UML's own, not \
         x86's: a guest system call is a ptrace stop of the host, not `syscall` and the x86 \
         entry code, and there are no x86 interrupts or page tables. So the measure FDO can \
         move is the host CPU time of the UML kernel process in user mode (its own code); its \
         system time is the host's ptrace work, shown for context. Times are in milliseconds \
         of host CPU per boot (the boot included, the same code in every twin); the \
         workloads' operations per second and latencies are host time too.\n",
        notes.boots
    )?;
    if let Some(c) = &notes.coverage {
        writeln!(
            s,
            "- the profile: {:.1} % of its {} samples are in x86 architecture code (functions \
             of the x86 baseline's objects under arch/), which no twin runs; the UML baseline \
             twin defines {} of its {} functions, holding {:.1} % of its samples{}",
            pct(c.arch_samples, c.samples),
            c.samples,
            c.in_twin_functions,
            c.functions,
            pct(c.in_twin_samples, c.samples),
            if c.missing.is_empty() {
                String::new()
            } else {
                format!(
                    "; the hottest it lacks: {}",
                    c.missing
                        .iter()
                        .map(|(n, k)| format!("{n} ({:.1} %)", pct(*k, c.samples)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        )?;
    }
    if !notes.left_out.is_empty() {
        writeln!(
            s,
            "- the recipe's settings UML has no such option for (left out of the twins): {}",
            notes.left_out.join(", ")
        )?;
    }
    for (v, why) in &notes.no_twin {
        writeln!(s, "- no twin of '{v}': {why}")?;
    }
    writeln!(s)?;
    timed_tables(&mut s, &a.benchmarks, "native time")?;
    index(
        &mut s,
        &a.benchmarks,
        "### Index over the workloads (UnixBench-style, native time)",
    )?;
    Ok(s)
}
