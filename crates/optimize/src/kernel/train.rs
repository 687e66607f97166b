//! The kernel's training steps: boot a kernel with a workload and record its kernel
//! branches in the workload's window, then convert the recording with kfdo (the
//! workload's modules included) and with llvm-profgen, the reference.

use std::path::PathBuf;

use super::boot::Boot;
use super::build::BuiltKernel;
use super::ctx::KernelCtx;
use crate::steps::cache::Key;
use crate::steps::ProfileFile;

/// A kernel recording (perf.data) and its content hash.
pub struct KernelRecording {
    pub perf_data: PathBuf,
    pub hash: String,
}

impl KernelCtx {
    /// Boots `k` with `run` and records its kernel branches in the workload's window.
    pub fn record_boot(
        &self,
        k: &BuiltKernel,
        initrd: &(PathBuf, String),
        run: &str,
        what: &str,
    ) -> anyhow::Result<KernelRecording> {
        let dir = self.dir(&format!("record/{}", crate::steps::cache::file_name(what)));
        let perf_data = dir.join("perf.data");
        let period = self.opts.period.unwrap_or(kfdo_record::DEFAULT_PERIOD);
        let step = format!("record {what}");
        let mut key = Key::new("kernel record")
            .add("kernel", &k.hash)
            .add("initrd", &initrd.1)
            .add("run", run)
            .add("period", period.to_string())
            .add("kfdo", &self.kfdo_version)
            // What a recording holds beyond kfdo's version: module maps with pgoff from
            // the start of kfdo's section layout.
            .add("format", "module maps: pgoff from the layout's start");
        // Only where there are any, so the keys of the other recordings stay as they were.
        if !k.boot_args.is_empty() {
            key = key.add("boot args", &k.boot_args);
        }
        let key = key.finish();
        let done = self.step(&step, key, std::slice::from_ref(&perf_data), |log| {
            crate::steps::fresh_dir(&dir)?;
            let booted = self
                .boot(&Boot {
                    kernel: k,
                    initrd: &initrd.0,
                    run,
                    console: dir.join("console.txt"),
                    perf_data: Some(perf_data.clone()),
                    period,
                    counters: None,
                    gcov: false,
                })
                .map_err(|e| log.failed(format!("{e:#}")))?;
            for w in &booted.outcome.warnings {
                log.say(&format!("warning: {w}"));
            }
            log.say(&format!(
                "{} kernel samples at period {period}; {}",
                kfdo_bench::report::fmt_count_int(booted.outcome.samples),
                booted
                    .results
                    .iter()
                    .map(|w| format!("{} {:.1} ops/s", w.name, w.ops_per_s))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            if booted.outcome.samples == 0 {
                return Err(log.fail(
                    "no kernel samples in the workload's window: is the period too long for \
                     this workload? (--period)"
                        .into(),
                ));
            }
            Ok(serde_json::json!({ "samples": booted.outcome.samples }))
        })?;
        Ok(KernelRecording {
            hash: done.hash_of(&perf_data).to_string(),
            perf_data,
        })
    }

    /// kfdo's kernel AutoFDO profile of a recording of `k`, the workload's modules
    /// included: LLVM's extbinary, or for a GCC kernel (`gcc`: its major release) GCC's
    /// gcov format; and the path of its vmlinux-only twin (the same file when there are
    /// no modules, or for GCC), the one to hold against llvm-profgen's.
    pub fn kernel_profile_kfdo(
        &self,
        k: &BuiltKernel,
        rec: &KernelRecording,
        gcc: Option<u32>,
    ) -> anyhow::Result<(ProfileFile, PathBuf)> {
        let out = self.dir(if gcc.is_some() {
            "profiles/kfdo.gcov"
        } else {
            "profiles/kfdo.afdo"
        });
        let modules: Vec<PathBuf> = self
            .recipe
            .workload
            .modules
            .iter()
            .map(|m| k.dir.join(m))
            .collect();
        let vmlinux_only = if modules.is_empty() || gcc.is_some() {
            out.clone()
        } else {
            self.dir("profiles/kfdo-vmlinux.afdo")
        };
        let key = Key::new("kernel profile kfdo")
            .add("vmlinux", &k.hash)
            .add("perf.data", &rec.hash)
            .add("modules", format!("{modules:?}"))
            .add("gcc", gcc_key(gcc))
            .add("kfdo", &self.kfdo_hash)
            .finish();
        let outputs = [out.clone(), vmlinux_only.clone()];
        let done = self.step("profile kfdo", key, &outputs, |log| {
            std::fs::create_dir_all(out.parent().unwrap())?;
            let inputs = vec![kfdo_convert::Input::PerfData(rec.perf_data.clone())];
            let mut req = kfdo_convert::ProfileRequest {
                kernel: true,
                modules: modules.clone(),
                ..kfdo_convert::ProfileRequest::new(&k.vmlinux, inputs.clone(), &out)
            };
            if let Some(release) = gcc {
                req.format = kfdo_convert::OutputFormat::Gcov;
                req.gcc_version = Some(release);
            }
            let s = kfdo_convert::profile(&req, &mut |_| {}).map_err(|e| log.failed(e))?;
            let written = kfdo_afdo::read_profile(&out).map_err(|e| log.failed(e))?;
            // LLVM's flow-sensitive discriminators are what kbuild's AutoFDO flags add;
            // GCC's are its own and need no flag.
            if gcc.is_none() && super::profile_check::locations_with_discriminators(&written) == 0 {
                let _ = std::fs::remove_file(&out);
                return Err(log.fail(super::profile_check::no_discriminators(&k.vmlinux)));
            }
            log.say(&format!(
                "kfdo profile --kernel: {} samples in vmlinux -> {} functions, {} total",
                kfdo_bench::report::fmt_count_int(s.samples_in_binary()),
                s.functions,
                kfdo_bench::report::fmt_count_int(s.total_samples)
            ));
            for m in &s.modules {
                log.say(&format!(
                    "  module {}: {} functions, {} samples",
                    m.module,
                    m.functions,
                    kfdo_bench::report::fmt_count_int(m.total_samples)
                ));
            }
            if vmlinux_only != out {
                let req = kfdo_convert::ProfileRequest {
                    kernel: true,
                    ..kfdo_convert::ProfileRequest::new(&k.vmlinux, inputs, &vmlinux_only)
                };
                kfdo_convert::profile(&req, &mut |_| {}).map_err(|e| log.failed(e))?;
            }
            Ok(serde_json::json!({
                "modules": s.modules.iter().map(|m| serde_json::json!({
                    "module": m.module, "functions": m.functions, "samples": m.total_samples,
                })).collect::<Vec<_>>(),
            }))
        })?;
        Ok((
            ProfileFile {
                hash: done.hash_of(&out).to_string(),
                path: out,
            },
            vmlinux_only,
        ))
    }

    /// llvm-profgen's kernel profile of the same recording: the reference converter.
    pub fn kernel_profile_llvm_profgen(
        &self,
        k: &BuiltKernel,
        rec: &KernelRecording,
    ) -> anyhow::Result<ProfileFile> {
        let key = Key::new("kernel profile llvm-profgen")
            .add("vmlinux", &k.hash)
            .add("perf.data", &rec.hash);
        self.llvm_profgen_step(
            key,
            &self.opts.profgen,
            &k.vmlinux,
            &rec.perf_data,
            false,
            &["--kernel"],
        )
    }
}

/// The GCC release as the profile step's cache key spells it: as it was spelled when the
/// release was read from the compiler's name (`Some(Some(12))`, `None` for clang), so
/// the profiles cached before the compiler became one type stay valid.
fn gcc_key(gcc: Option<u32>) -> String {
    format!("{:?}", gcc.map(Some))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_gcc_release_keeps_its_cache_key_spelling() {
        assert_eq!(super::gcc_key(Some(12)), "Some(Some(12))");
        assert_eq!(super::gcc_key(None), "None");
    }
}
