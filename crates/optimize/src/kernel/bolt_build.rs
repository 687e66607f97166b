//! The `autofdo+thinlto+bolt` kernel: the `autofdo+thinlto` kernel booted with the
//! training workload and recorded (with `nokaslr`: perf2bolt takes the samples'
//! addresses as the vmlinux's), perf2bolt's profile of that recording, llvm-bolt's rewrite
//! of its `vmlinux.unstripped` (the workarounds of `bolt`), and the boot image remade
//! from the rewrite. Every tool comes from the run's LLVM release.
//!
//! BOLT rewrites a kernel in place (its "non-relocation mode"): every function keeps
//! its address and only the blocks inside rewritten functions move, so the base
//! kernel's vmlinux still names every sampled function; the boots name it.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use kfdo_toolchain::Llvm;

use super::bolt::{needs_ksymtab_gpl, rebuild_boot_image, skip_file_text, skip_functions};
use super::build::BuiltKernel;
use super::ctx::KernelCtx;
use super::variant::KernelVariant;
use crate::steps::cache::Key;
use crate::steps::engine::PEAK_KIB;
use crate::steps::exec::Stdout;

/// What every boot of a BOLTed kernel needs: BOLT drops the relocations the boot code
/// applies for KASLR (see `bolt`).
pub const BOOT_ARGS: &str = "nokaslr";

/// llvm-bolt's options for a kernel, after BOLT's guide for Linux: blocks by ext-TSP;
/// no unreachable-code elimination and no conditional tail calls (the kernel's own
/// tables point into code BOLT cannot see); functions stay where they are (BOLT does
/// not reorder functions in a kernel).
pub const BOLT_KERNEL_OPTIONS: [&str; 4] = [
    "--reorder-blocks=ext-tsp",
    "--eliminate-unreachable=0",
    "--simplify-conditional-tail-calls=0",
    "--dyno-stats",
];

impl KernelCtx {
    /// Builds `v` (a BOLT variant) from `base`, the `autofdo+thinlto` kernel it rewrites.
    pub fn build_bolt_kernel(
        &self,
        v: &KernelVariant,
        base: &BuiltKernel,
        initrd: &(PathBuf, String),
    ) -> anyhow::Result<BuiltKernel> {
        let llvm = v.compiler.llvm().unwrap_or_default();
        let input = base.dir.join("vmlinux.unstripped");
        if !input.is_file() {
            anyhow::bail!(
                "variant '{}': {} is missing: BOLT needs the vmlinux kbuild links with its \
                 relocations (Linux 6.16 and later keep it as vmlinux.unstripped, with \
                 CONFIG_RELOCATABLE=y)",
                v.name,
                input.display()
            );
        }
        let recorded_on = BuiltKernel {
            boot_args: BOOT_ARGS.into(),
            ..base.clone()
        };
        let rec = self.record_boot(
            &recorded_on,
            initrd,
            &self.recipe.workload.train,
            &format!("{} training run for BOLT", base.variant),
        )?;
        // Not build/VARIANT: its configure step keeps the variant's .config there.
        let dir = self.dir(&format!("bolt/{}", v.name));
        let bolted = dir.join("vmlinux.unstripped");
        let image = dir.join("boot/arch/x86/boot/bzImage");
        let bolt = llvm.bolt();
        let tools = crate::steps::tool_identity(&[&bolt])?;
        let key = Key::new("kernel bolt")
            .add("vmlinux", &base.hash)
            .add("perf.data", &rec.hash)
            .add("options", BOLT_KERNEL_OPTIONS.join(" "))
            .add("tool", &tools)
            .add("kfdo", &self.kfdo_hash)
            .finish();
        let step = format!("bolt {}", v.name);
        let outputs = [bolted.clone(), image.clone()];
        let done = self.step(&step, key, &outputs, |log| {
            crate::steps::fresh_dir(&dir)?;
            let prepared = prepare_input(llvm, &input, &dir, log)?;
            let skipped = skip_functions(&prepared).map_err(|e| log.failed(e))?;
            let skip_file = dir.join("skip-funcs.txt");
            std::fs::write(&skip_file, skip_file_text(&skipped))?;
            log.note(&format!(
                "{} functions left as they are (--skip-funcs-file {})",
                skipped.len(),
                skip_file.display()
            ));
            let fdata = dir.join("perf.fdata");
            log.run(
                Command::new(llvm.perf2bolt())
                    .arg("-p")
                    .arg(&rec.perf_data)
                    .arg("-o")
                    .arg(&fdata)
                    .arg(&prepared),
                Stdout::Log,
            )?;
            let maxrss = dir.join("llvm-bolt.maxrss");
            let report = log.run(
                Command::new("/usr/bin/time")
                    .args(["-f", "%M", "-o"])
                    .arg(&maxrss)
                    .arg(&bolt)
                    .arg(&prepared)
                    .arg("-o")
                    .arg(&bolted)
                    .arg(format!("--data={}", fdata.display()))
                    .arg(format!("--skip-funcs-file={}", skip_file.display()))
                    .args(BOLT_KERNEL_OPTIONS),
                Stdout::Capture,
            )?;
            let peak_kib: u64 = std::fs::read_to_string(&maxrss)
                .ok()
                .and_then(|t| t.trim().lines().last()?.trim().parse().ok())
                .unwrap_or(0);
            let made = rebuild_boot_image(&base.dir, &bolted, &dir.join("boot"))
                .map_err(|e| log.failed(e))?;
            if made != image {
                std::fs::create_dir_all(image.parent().unwrap())?;
                std::fs::copy(&made, &image)?;
            }
            let facts = bolt_facts(&report);
            log.say(&format!(
                "{bolt}: {}; peak memory {:.0} MiB",
                facts.words(),
                peak_kib as f64 / 1024.0
            ));
            Ok(serde_json::json!({
                PEAK_KIB: peak_kib,
                "skipped": skipped.len(),
                "summary": facts.words(),
            }))
        })?;
        let words = done.facts["summary"].as_str().unwrap_or("").to_string();
        let peak = done.facts[PEAK_KIB].as_u64().unwrap_or(0);
        let mut make_vars = base.make_vars.clone();
        make_vars.push((
            "BOLT".into(),
            format!(
                "{bolt} --data=perf2bolt's profile {}",
                BOLT_KERNEL_OPTIONS.join(" ")
            ),
        ));
        Ok(BuiltKernel {
            variant: v.name.clone(),
            image,
            hash: done.hash_of(&bolted).to_string(),
            make_vars,
            notes: vec![format!(
                "{}: {bolt} rewrote the {} kernel ({words}; step '{step}': {:.1} s, peak \
                 memory {:.0} MiB); it boots with `{BOOT_ARGS}`",
                v.name,
                base.variant,
                done.seconds,
                peak as f64 / 1024.0
            )],
            boot_args: BOOT_ARGS.into(),
            ..base.clone()
        })
    }
}

/// The vmlinux llvm-bolt reads: `input`, or a copy with the empty `__ksymtab_gpl`
/// section BOLT's kernel support expects (Linux 7.x has none; llvm/llvm-project#206028).
fn prepare_input(
    llvm: Llvm,
    input: &Path,
    dir: &Path,
    log: &crate::steps::exec::Log,
) -> anyhow::Result<PathBuf> {
    if !needs_ksymtab_gpl(input).map_err(|e| log.failed(e))? {
        return Ok(input.to_path_buf());
    }
    let out = dir.join("vmlinux.input");
    log.note(
        "no __ksymtab_gpl section (Linux 7.x): an empty one is added, which BOLT's Linux \
         support reads unconditionally (llvm/llvm-project#206028)",
    );
    log.run(
        Command::new(llvm.objcopy())
            .arg(format!(
                "--add-section={}=/dev/null",
                super::bolt::KSYMTAB_GPL
            ))
            .arg(input)
            .arg(&out),
        Stdout::Log,
    )
    .context("adding the empty __ksymtab_gpl section")?;
    Ok(out)
}

/// What llvm-bolt's report says it did.
#[derive(Debug, Default, PartialEq)]
struct BoltFacts {
    /// "N out of M functions were overwritten".
    overwritten: Option<String>,
    /// The dyno-stats line of taken branches: "before -> after (change)".
    taken_branches: Option<String>,
    /// "N functions with profile could not be optimized": hot code BOLT left as it was
    /// (in a kernel, among others, functions split into a `.cold` part by the compiler).
    not_optimized: Option<String>,
    /// "rewritten functions cover X% of the execution count of simple functions".
    coverage: Option<String>,
}

impl BoltFacts {
    fn words(&self) -> String {
        let mut w = Vec::new();
        if let Some(o) = &self.overwritten {
            w.push(format!("{o} functions overwritten"));
        }
        if let Some(t) = &self.taken_branches {
            w.push(format!("taken branches of the profile {t}"));
        }
        if let Some(n) = &self.not_optimized {
            w.push(format!("{n} functions with profile not optimized"));
        }
        if let Some(c) = &self.coverage {
            w.push(format!(
                "the rewritten functions cover {c} of the simple functions' execution count"
            ));
        }
        if w.is_empty() {
            "no summary in its report".into()
        } else {
            w.join(", ")
        }
    }
}

fn bolt_facts(report: &str) -> BoltFacts {
    let mut f = BoltFacts::default();
    for line in report.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("BOLT: ") {
            if let Some(n) = rest.strip_suffix(" functions were overwritten.") {
                f.overwritten = Some(n.to_string());
            }
        }
        if let Some(rest) = line.strip_prefix("BOLT-INFO: ") {
            if let Some(n) = rest.strip_suffix(" functions with profile could not be optimized") {
                f.not_optimized = Some(n.to_string());
            }
            if let Some(c) = rest.strip_prefix("rewritten functions cover ") {
                f.coverage = c.split_whitespace().next().map(|p| p.replace("%", " %"));
            }
        }
        // "    7809 : taken branches (-30.9%)" after "5397 : ..." lines: dyno-stats print
        // the count before and after for each stat, the after line with its change.
        if line.ends_with(')') && line.contains(" : taken branches (") {
            f.taken_branches =
                Some(line.split(" : ").next().unwrap_or("").trim().to_string()).map(|after| {
                    let change = line.rsplit('(').next().unwrap_or("").trim_end_matches(')');
                    format!("{after} after ({change})")
                });
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_summary_is_read_from_bolts_own_lines() {
        let report = "BOLT-INFO: 314 out of 14168 functions in the binary (2.2%) have \
                      non-empty execution profile\n\
                      \x20            7809 : taken branches\n\
                      \x20            5397 : taken branches (-30.9%)\n\
                      BOLT-INFO: 410 functions with profile could not be optimized\n\
                      BOLT-INFO: rewritten functions cover 58.56% of the execution count of \
                      simple functions of this binary\n\
                      BOLT: 263 out of 14168 functions were overwritten.\n";
        let f = bolt_facts(report);
        assert_eq!(f.overwritten.as_deref(), Some("263 out of 14168"));
        assert_eq!(f.taken_branches.as_deref(), Some("5397 after (-30.9%)"));
        assert!(f.words().contains("263 out of 14168 functions overwritten"));
        assert_eq!(f.not_optimized.as_deref(), Some("410"));
        assert_eq!(f.coverage.as_deref(), Some("58.56 %"));
        assert!(
            f.words().ends_with(
                "410 functions with profile not optimized, the rewritten functions cover \
                 58.56 % of the simple functions' execution count"
            ),
            "{}",
            f.words()
        );
        assert_eq!(bolt_facts("").words(), "no summary in its report");
    }
}
