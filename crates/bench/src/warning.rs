//! Everything a comparison warns its user about, as one typed enum: the setup of the
//! machine (frequency scaling, turbo, load), what happened while it ran (other load, an
//! adaptive target not reached, a session cut short) and what the numbers say (too few
//! runs, outliers, a cold first run, high variance, runs too short to measure).
//!
//! Each warning says what to change. The text ([`std::fmt::Display`]) is the one
//! rendering: `kfdo compare` prints it, the HTML and Markdown reports and `kfdo optimize`'s
//! summary show it, and the JSON carries it as `message` beside the warning's `kind` and
//! its numbers. Sessions store their warnings in this form; stores written before it
//! held plain strings, which are read back as [`Warning::Other`].

use serde::{Deserialize, Serialize};

/// Fewer timed runs than this give intervals not worth much ([`Warning::TooFewRuns`]).
pub const MIN_RUNS: usize = 5;
/// Runs shorter than this are dominated by process start-up ([`Warning::ShortRuns`]).
pub const SHORT_RUN_S: f64 = 0.005;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// A variant without a finished timed run.
    NoRuns {
        variant: String,
    },
    TooFewRuns {
        variant: String,
        runs: usize,
    },
    /// Mean run time below [`SHORT_RUN_S`].
    ShortRuns {
        variant: String,
        mean_s: f64,
    },
    ColdFirstRun {
        variant: String,
        first_s: f64,
        median_s: f64,
    },
    /// Runs with a modified Z-score above 3.5 (not counting a cold first run).
    Outliers {
        variant: String,
        outliers: usize,
        runs: usize,
    },
    HighVariance {
        variant: String,
        cv_pct: f64,
    },
    /// CPUs whose cpufreq governor is not `performance`.
    FrequencyScaling {
        cpus: usize,
        governors: Vec<String>,
    },
    /// No cpufreq interface at all (typical of virtual machines).
    NoFrequencyControl,
    Turbo,
    /// The 1-minute load average when the comparison started.
    LoadAverage {
        load_avg_1m: f64,
        cpus: usize,
    },
    /// Other processes' share of the machine while the commands ran.
    OtherLoad {
        share_pct: f64,
        cpu_s: f64,
        wall_s: f64,
    },
    /// `--ci-target` was not reached within `--max-runs`.
    TargetMissed {
        target_pct: f64,
        max_runs: usize,
        half_width_pct: f64,
    },
    SessionInterrupted {
        session: i64,
    },
    SessionUnfinished {
        session: i64,
    },
    SessionFailed {
        session: i64,
    },
    /// Why the counters come from another source than asked for, or none.
    Counters {
        message: String,
    },
    /// Two tags compared: their runs come from separate boots, not interleaved.
    NotInterleaved {
        baseline: String,
        tag: String,
    },
    /// Two tags compared ran the same kernel build.
    SameKernel {
        baseline: String,
        tag: String,
        build_id: String,
    },
    /// A tagged session could not read the running kernel's build-id.
    KernelBuildIdUnknown {
        reason: String,
    },
    /// A tag holds runs of more than one kernel (added with `--force-tag`).
    TagMixesKernels {
        tag: String,
        kernels: Vec<String>,
    },
    /// Runs of a variant that ran another build of its program than its latest runs
    /// did, left out of a report (`kfdo compare --pool` pools them).
    EarlierProgramSetAside {
        variant: String,
        runs: usize,
        kept: usize,
    },
    /// A warning stored as plain text (stores written by earlier versions).
    Other {
        message: String,
    },
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::NoRuns { variant } => write!(f, "variant '{variant}' has no finished runs"),
            Warning::TooFewRuns { variant, runs } => write!(
                f,
                "too few runs: '{variant}' has {runs} timed run(s); intervals from fewer than \
                 {MIN_RUNS} are not worth much (use --runs 10, or --ci-target 2 --max-runs 30)"
            ),
            Warning::ShortRuns { variant, mean_s } => write!(
                f,
                "'{variant}' runs for only {:.2} ms: process start-up dominates the measurement; \
                 give it more work",
                mean_s * 1e3
            ),
            Warning::ColdFirstRun {
                variant,
                first_s,
                median_s,
            } => write!(
                f,
                "the first run of '{variant}' was much slower than the rest ({first_s:.3} s vs \
                 median {median_s:.3} s): caches were cold; use --warmup 2 or more"
            ),
            Warning::Outliers {
                variant,
                outliers,
                runs,
            } => write!(
                f,
                "statistical outliers: {outliers} of {runs} runs of '{variant}' are far from the \
                 median (modified Z-score > 3.5); other programs or interrupts disturbed them: \
                 close other work, use --warmup, and rerun"
            ),
            Warning::HighVariance { variant, cv_pct } => write!(
                f,
                "high variance: '{variant}' varies by {cv_pct:.1} % (coefficient of variation); \
                 differences smaller than that need many runs (--ci-target) and a quiet machine"
            ),
            Warning::FrequencyScaling { cpus, governors } => write!(
                f,
                "frequency scaling: {cpus} CPU(s) use the '{}' governor, so the clock moves with \
                 load; pin it for benchmarking: `cpupower frequency-set -g performance` (as root)",
                governors.join("', '")
            ),
            Warning::NoFrequencyControl => f.write_str(
                "frequency scaling: this kernel exposes no cpufreq interface (a virtual machine?), \
                 so the CPU clock can't be checked or pinned here; interleaved runs spread its \
                 drift over all variants",
            ),
            Warning::Turbo => f.write_str(
                "turbo / boost is on: the clock depends on temperature and on other cores' load; \
                 for stable timings turn it off (`echo 0 > /sys/devices/system/cpu/cpufreq/boost`, \
                 or `echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo`)",
            ),
            Warning::LoadAverage { load_avg_1m, cpus } => write!(
                f,
                "other load: the 1-minute load average was {load_avg_1m:.2} on {cpus} CPU(s) when \
                 the comparison started; stop other work (builds, browsers, indexers) or run on \
                 an idle machine"
            ),
            Warning::OtherLoad {
                share_pct,
                cpu_s,
                wall_s,
            } => write!(
                f,
                "other load: other processes used {share_pct:.0} % of the machine's CPU time \
                 while the commands ran ({cpu_s:.1} CPU-seconds in {wall_s:.1} s); stop other \
                 work or expect noisier, slower results"
            ),
            Warning::TargetMissed {
                target_pct,
                max_runs,
                half_width_pct,
            } => write!(
                f,
                "too few runs: the ±{target_pct:.2} % target was not reached in {max_runs} runs \
                 per variant (±{half_width_pct:.2} % now); raise --max-runs, or quiet the machine"
            ),
            Warning::SessionInterrupted { session } => write!(
                f,
                "session {session} was interrupted: its finished runs are included, the \
                 interrupted one is not"
            ),
            Warning::SessionUnfinished { session } => write!(
                f,
                "session {session} never finished (killed, or still running): its finished runs \
                 are included"
            ),
            Warning::SessionFailed { session } => write!(
                f,
                "session {session} stopped on a failing command: its finished runs are included"
            ),
            Warning::NotInterleaved { baseline, tag } => write!(
                f,
                "not interleaved: '{baseline}' and '{tag}' were measured in separate boots, so \
                 drift between the boots (temperature, clock, other load, what the boot left \
                 cached) is not controlled and lands in the difference; record each tag again \
                 after more reboots, alternating A, B, A, B (`--tag` adds a session each time)"
            ),
            Warning::SameKernel {
                baseline,
                tag,
                build_id,
            } => write!(
                f,
                "same kernel: '{baseline}' and '{tag}' ran the same kernel build (build-id \
                 {build_id}), so the difference is boot-to-boot noise, not two kernels; boot the \
                 other kernel before recording its tag"
            ),
            Warning::KernelBuildIdUnknown { reason } => write!(
                f,
                "the running kernel's build-id is unknown ({reason}); the tag names its kernel \
                 by `uname -r` only, which two builds of one version share"
            ),
            Warning::TagMixesKernels { tag, kernels } => write!(
                f,
                "tag '{tag}' holds runs of {} kernels ({}), added with --force-tag: its numbers \
                 mix them; record each kernel under its own tag",
                kernels.len(),
                kernels.join("; ")
            ),
            Warning::EarlierProgramSetAside {
                variant,
                runs,
                kept,
            } => write!(
                f,
                "'{variant}': {runs} earlier run(s) ran another build of its program (the binary \
                 changed since); only the latest build's {kept} run(s) and its counters are \
                 shown (kfdo compare --pool pools them)"
            ),
            Warning::Counters { message } | Warning::Other { message } => f.write_str(message),
        }
    }
}

impl Warning {
    /// Reads a stored warning: the tagged form, or a plain string from an older store.
    pub fn from_stored(v: serde_json::Value) -> Warning {
        match v {
            serde_json::Value::String(message) => Warning::Other { message },
            v => serde_json::from_value(v.clone()).unwrap_or_else(|_| Warning::Other {
                message: v.to_string(),
            }),
        }
    }
}

/// A warning as the JSON outputs show it: its kind and numbers, and the same message
/// the text and HTML show.
#[derive(Serialize)]
struct WithMessage<'a> {
    #[serde(flatten)]
    warning: &'a Warning,
    message: String,
}

/// `serialize_with` for lists of warnings in JSON outputs.
pub fn serialize_with_messages<S: serde::Serializer>(
    ws: &[Warning],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(ws.len()))?;
    for w in ws {
        seq.serialize_element(&WithMessage {
            warning: w,
            message: w.to_string(),
        })?;
    }
    seq.end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_carries_kind_numbers_and_the_text() {
        let w = vec![Warning::TooFewRuns {
            variant: "a".into(),
            runs: 2,
        }];
        #[derive(Serialize)]
        struct Doc<'a>(#[serde(serialize_with = "serialize_with_messages")] &'a [Warning]);
        let j = serde_json::to_value(Doc(&w)).unwrap();
        assert_eq!(j[0]["kind"], "too_few_runs");
        assert_eq!(j[0]["runs"], 2);
        assert_eq!(j[0]["message"], w[0].to_string());
        assert!(w[0]
            .to_string()
            .starts_with("too few runs: 'a' has 2 timed run(s)"));
    }

    #[test]
    fn stored_forms_round_trip_and_old_strings_are_read() {
        let w = Warning::OtherLoad {
            share_pct: 28.0,
            cpu_s: 5.5,
            wall_s: 10.0,
        };
        let stored = serde_json::to_value(&w).unwrap();
        assert_eq!(Warning::from_stored(stored), w);
        assert_eq!(
            Warning::from_stored(serde_json::json!("an old note")),
            Warning::Other {
                message: "an old note".into()
            }
        );
    }
}
