//! The steps that make profiles: record the training run (hardware branch
//! sampling or emulated LBR, `kfdo_record::record`), convert it with kfdo
//! (`kfdo_convert::profile`) and with llvm-profgen, and the instrumented-PGO
//! training.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use kfdo_record::hardware::Method;

use super::compile::Built;
use super::ctx::Ctx;
use crate::steps::cache::Key;
use crate::steps::exec::Stdout;
use crate::steps::fresh_dir;
use crate::steps::ProfileFile;
use crate::vocabulary::{Compiler, Variant};

/// A recorded run of one build.
#[derive(Debug, Clone)]
pub struct Recording {
    pub perf_data: PathBuf,
    pub hash: String,
    /// The method that recorded it (auto resolved).
    pub method: Method,
    pub ip_only: bool,
}

/// Propeller's two profiles of one build and what identifies their content.
#[derive(Debug, Clone)]
pub struct PropellerProfiles {
    /// `-fbasic-block-sections=list=` (and lld's `--lto-basic-block-sections=`).
    pub cc: PathBuf,
    /// `--symbol-ordering-file=`.
    pub ld: PathBuf,
    /// Both files' content hashes.
    pub hash: String,
    /// What the layout did, in words (from the conversion's summary).
    pub summary: String,
}

/// A Propeller conversion's summary (as JSON facts) in words: what was laid out.
fn propeller_words(facts: &serde_json::Value) -> String {
    let n = |k: &str| facts.get(k).and_then(|v| v.as_u64());
    let f = |k: &str| facts.get(k).and_then(|v| v.as_f64());
    let mut parts = Vec::new();
    let plural = |k: u64, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    if let (Some(hot), Some(mapped)) = (n("hot_functions"), n("mapped_functions")) {
        parts.push(format!(
            "{} of {mapped} mapped",
            plural(hot, "hot function", "hot functions")
        ));
    }
    if let Some(b) = n("hot_blocks") {
        parts.push(plural(b, "hot block", "hot blocks"));
    }
    if let Some(s) = n("split_functions") {
        parts.push(plural(s, "function split", "functions split"));
    }
    if let (Some(a), Some(b)) = (f("ext_tsp_score_before"), f("ext_tsp_score_after")) {
        parts.push(format!("ext-TSP score {a:.4e} -> {b:.4e}"));
    }
    if parts.is_empty() {
        "Propeller profiles written".to_string()
    } else {
        parts.join(", ")
    }
}

/// The recording method: `auto` (None) resolved here (and said), so the step key
/// and the conversion know what kind of samples they get.
pub fn resolve_method(requested: Option<Method>) -> (Method, Vec<String>) {
    match requested {
        Some(m) => (m, Vec::new()),
        None => kfdo_record::hardware::Capabilities::detect().choose_auto(),
    }
}

impl Ctx {
    /// Records `built` running the training workload; `what` names the step.
    pub fn record(&self, built: &Built, method: Method, what: &str) -> anyhow::Result<Recording> {
        let r = self.recipe();
        let dir = self.dir(&format!("record/{}", built.label));
        let perf_data = dir.join("perf.data");
        let argv = r.train_argv(&built.binary)?;
        let step = format!("record {what}");
        let mut key = Key::new("record")
            .add("binary", &built.hash)
            .add("workload", &r.train.command)
            .add("method", method.name())
            .add("kfdo", &self.kfdo_version);
        if let Some(p) = self.opts.period {
            key = key.add("period", p.to_string());
        }
        let done = self.step(&step, key.finish(), std::slice::from_ref(&perf_data), |log| {
            fresh_dir(&dir)?;
            let run = dir.join("cwd");
            std::fs::create_dir_all(&run)?;
            let target = kfdo_record::Target::Command {
                argv: argv.iter().map(OsString::from).collect(),
                method: Some(method),
            };
            let mut req = kfdo_record::RecordRequest::new(target, &perf_data);
            if let Some(p) = self.opts.period {
                req.period = p;
            }
            req.child = kfdo_record::ChildSetup {
                cwd: Some(run),
                env: vec![("RECIPE".into(), r.dir.clone().into())],
                stdio: log.child_stdio()?,
            };
            log.note(&format!(
                "recording `{}` with --method {}",
                argv.join(" "),
                method.name()
            ));
            let recorded = kfdo_record::record(&req, &mut |s| log.say(&format!("kfdo record: {s}")))
                .map_err(|e| log.failed(e))?;
            if let kfdo_record::Recorded::Emulated(out) = &recorded {
                for w in &out.warnings {
                    log.say(&format!("kfdo record: warning: {w}"));
                }
                log.say(&format!(
                    "kfdo record: {} samples recorded (all processes; {} taken branches), {} executable mappings, {} process(es) -> {}",
                    kfdo_bench::report::fmt_count_int(out.samples),
                    kfdo_bench::report::fmt_count_int(out.branches),
                    out.mmaps,
                    out.processes,
                    perf_data.display()
                ));
            }
            if recorded.exit_code() != 0 {
                return Err(log.fail(format!(
                    "the training workload exited with status {}",
                    recorded.exit_code()
                )));
            }
            if !perf_data.is_file() {
                return Err(log.fail("the recording left no perf.data".into()));
            }
            Ok(serde_json::json!({ "method": method.name() }))
        })?;
        Ok(Recording {
            hash: done.hash_of(&perf_data).to_string(),
            perf_data,
            method,
            ip_only: method == Method::Ip,
        })
    }

    /// kfdo's AutoFDO profile of `rec` against `built`: LLVM extbinary for clang, the
    /// gcov format of the GCC release for GCC.
    pub fn profile_kfdo(&self, built: &Built, rec: &Recording) -> anyhow::Result<ProfileFile> {
        let (out, format, gcc_version) = match self.opts.compiler {
            Compiler::Clang { .. } => (
                self.dir("profiles/kfdo.afdo"),
                kfdo_convert::OutputFormat::Extbinary,
                None,
            ),
            Compiler::Gcc { major } => (
                self.dir("profiles/kfdo.gcov"),
                kfdo_convert::OutputFormat::Gcov,
                Some(major),
            ),
        };
        let key = Key::new("profile kfdo")
            .add("binary", &built.hash)
            .add("perf.data", &rec.hash)
            .add("ip-only", rec.ip_only.to_string())
            .add("format", format.name())
            .add(
                "gcc",
                gcc_version.map(|v| v.to_string()).unwrap_or_default(),
            )
            .add("kfdo", &self.kfdo_hash)
            .finish();
        self.file_step("profile kfdo", key, out.clone(), |log| {
            std::fs::create_dir_all(out.parent().unwrap())?;
            let summary = convert(log, built, rec, format, gcc_version, &out)?;
            log.say(&format!(
                "kfdo profile: {} samples in {} -> {} ranges, {} branches, {} functions -> {} ({}) in {:.2}s",
                kfdo_bench::report::fmt_count_int(summary.samples_in_binary()),
                built.binary.display(),
                kfdo_bench::report::fmt_count_int(summary.ranges as u64),
                kfdo_bench::report::fmt_count_int(summary.branches as u64),
                summary.functions,
                out.display(),
                summary.format,
                summary.seconds
            ));
            Ok(serde_json::json!({}))
        })
    }

    /// kfdo's Propeller profiles (`kfdo profile --format propeller`) of `rec` against
    /// `built` (linked with the BB address map), for the layout variant `variant`:
    /// `profiles/VARIANT_cc_profile.txt` and `profiles/VARIANT_ld_profile.txt`.
    pub fn profile_propeller(
        &self,
        built: &Built,
        rec: &Recording,
        variant: Variant,
    ) -> anyhow::Result<PropellerProfiles> {
        let prefix = self.dir(&format!("profiles/{}", variant.name()));
        let (cc, ld) = kfdo_convert::propeller_paths(&prefix);
        let step = format!("profile {}", variant.name());
        let key = Key::new("profile propeller")
            .add("binary", &built.hash)
            .add("perf.data", &rec.hash)
            .add("ip-only", rec.ip_only.to_string())
            .add("kfdo", &self.kfdo_hash)
            .finish();
        let done = self.step(&step, key, &[cc.clone(), ld.clone()], |log| {
            std::fs::create_dir_all(prefix.parent().unwrap())?;
            let outcome = convert(
                log,
                built,
                rec,
                kfdo_convert::OutputFormat::Propeller,
                None,
                &prefix,
            )?;
            let facts = serde_json::to_value(&outcome.propeller).unwrap_or_default();
            log.say(&format!(
                "kfdo profile: {} samples in {} -> {} and {} in {:.2}s",
                kfdo_bench::report::fmt_count_int(outcome.samples_in_binary()),
                built.binary.display(),
                cc.display(),
                ld.display(),
                outcome.seconds
            ));
            log.say(&format!("kfdo profile: {}", propeller_words(&facts)));
            Ok(facts)
        })?;
        Ok(PropellerProfiles {
            hash: format!("{}+{}", done.hash_of(&cc), done.hash_of(&ld)),
            summary: propeller_words(&done.facts),
            cc,
            ld,
        })
    }

    /// kfdo's BOLT profile (fdata, `kfdo profile --format bolt`) of `rec` against `built`
    /// (linked with `--emit-relocs`), for the layout variant `variant`.
    pub fn profile_bolt(
        &self,
        built: &Built,
        rec: &Recording,
        variant: Variant,
    ) -> anyhow::Result<ProfileFile> {
        let out = self.dir(&format!("profiles/{}.fdata", variant.name()));
        let step = format!("profile {}", variant.name());
        let key = Key::new("profile bolt")
            .add("binary", &built.hash)
            .add("perf.data", &rec.hash)
            .add("ip-only", rec.ip_only.to_string())
            .add("kfdo", &self.kfdo_hash)
            .finish();
        self.file_step(&step, key, out.clone(), |log| {
            std::fs::create_dir_all(out.parent().unwrap())?;
            let outcome = convert(
                log,
                built,
                rec,
                kfdo_convert::OutputFormat::Bolt,
                None,
                &out,
            )?;
            let facts = serde_json::to_value(&outcome.bolt).unwrap_or_default();
            log.say(&format!(
                "kfdo profile: {} samples in {} -> {} ({facts}) in {:.2}s",
                kfdo_bench::report::fmt_count_int(outcome.samples_in_binary()),
                built.binary.display(),
                out.display(),
                outcome.seconds
            ));
            Ok(facts)
        })
    }

    /// llvm-profgen's profile of the same recording: the reference converter.
    pub fn profile_llvm_profgen(
        &self,
        built: &Built,
        rec: &Recording,
    ) -> anyhow::Result<ProfileFile> {
        let key = Key::new("profile llvm-profgen")
            .add("binary", &built.hash)
            .add("perf.data", &rec.hash)
            .add("ip-only", rec.ip_only.to_string());
        let extra: &[&str] = if rec.ip_only {
            &["--leading-ip-only"]
        } else {
            &[]
        };
        self.llvm_profgen_step(
            key,
            &self.opts.profgen,
            &built.binary,
            &rec.perf_data,
            rec.ip_only,
            extra,
        )
    }

    /// Runs the instrumented build on the training workload (natively) and
    /// merges its counts: the profile of instrumented PGO.
    pub fn train_instrumented(&self, instrumented: &Built) -> anyhow::Result<ProfileFile> {
        let r = self.recipe();
        let out = self.dir("profiles/ifdo.profdata");
        let dir = self.dir("record/ifdo-instrumented");
        let argv = r.train_argv(&instrumented.binary)?;
        let key = Key::new("train ifdo")
            .add("binary", &instrumented.hash)
            .add("workload", &r.train.command)
            .add(
                "tools",
                crate::steps::tool_identity(&[&self.opts.profdata])?,
            )
            .finish();
        self.file_step("train ifdo", key, out.clone(), |log| {
            fresh_dir(&dir)?;
            let raw = dir.join("raw");
            let run = dir.join("cwd");
            std::fs::create_dir_all(&run)?;
            std::fs::create_dir_all(out.parent().unwrap())?;
            log.run(
                Command::new(&argv[0])
                    .args(&argv[1..])
                    .current_dir(&run)
                    .env("RECIPE", &r.dir)
                    .env("LLVM_PROFILE_FILE", raw.join("%p-%m.profraw")),
                Stdout::Log,
            )?;
            let raws = list_profraw(&raw);
            if raws.is_empty() {
                return Err(log.fail(format!(
                    "the instrumented training run wrote no .profraw in {} (did the build pass $CFLAGS and $LDFLAGS to the compiler and linker?)",
                    raw.display()
                )));
            }
            log.run(
                Command::new(&self.opts.profdata)
                    .arg("merge")
                    .arg("-o")
                    .arg(&out)
                    .args(&raws),
                Stdout::Log,
            )?;
            Ok(serde_json::json!({ "profraw_files": raws.len() }))
        })
    }
}

/// `kfdo profile` of the recording `rec` of `built` into `out` (a prefix for Propeller),
/// in `format`; what it reads is said in the step's log.
fn convert(
    log: &crate::steps::exec::Log,
    built: &Built,
    rec: &Recording,
    format: kfdo_convert::OutputFormat,
    gcc_version: Option<u32>,
    out: &Path,
) -> anyhow::Result<kfdo_convert::ProfileOutcome> {
    let req = kfdo_convert::ProfileRequest {
        format,
        gcc_version,
        ip_only: rec.ip_only,
        ..kfdo_convert::ProfileRequest::new(
            &built.binary,
            vec![kfdo_convert::Input::PerfData(rec.perf_data.clone())],
            out,
        )
    };
    kfdo_convert::profile(&req, &mut |p| {
        log.say(&format!("kfdo profile: reading {}", p.display()))
    })
    .map_err(|e| log.failed(e))
}

fn list_profraw(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "profraw"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
