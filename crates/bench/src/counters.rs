//! Event counters per variant, side by side like the seeds' perf-stat table.
//!
//! A source is anything that runs a command once and returns named counts:
//! hardware `perf stat` where the machine has a PMU, valgrind's cachegrind
//! (simulated caches and branch predictor) where it does not, and the
//! emulated counters of `kfdo record` (kfdo's QEMU plugin, [`emulated`]) on
//! request. Each number keeps the name of its source, so a table never mixes
//! them silently. A count that is not deterministic (an emulated count of a
//! program that ran several threads) says so, with the spread of several
//! counts ([`determinism`]).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::runner::{self, Arm, ProgramSlot, Protocol};
use crate::warning::Warning;

pub mod determinism;
pub mod emulated;
pub use determinism::Spread;
pub use emulated::Emulated;

/// One counted event.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Counter {
    /// Event name as shown in the table (e.g. "instructions", "I1 misses").
    pub name: String,
    /// The count; the median of several where `spread` is set.
    pub value: f64,
    /// Which source measured it: "perf stat", "cachegrind", "emulated".
    pub source: String,
    /// The most threads one counted process ran, where the source knows it (emulated).
    /// Over one, the count is not deterministic: the threads' interleaving changes it
    /// from run to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// The lowest and highest of several counts, where the source counted more than once
    /// because one count would not be deterministic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
}

impl Counter {
    /// A count with nothing known of its program's threads.
    pub fn new(name: impl Into<String>, value: f64, source: impl Into<String>) -> Counter {
        Counter {
            name: name.into(),
            value,
            source: source.into(),
            threads: None,
            spread: None,
        }
    }

    /// "not deterministic: 4 threads" where the counted program ran several threads.
    pub fn determinism_label(&self) -> Option<String> {
        determinism::label(self.threads)
    }
}

/// What the user asked for with `--counters`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Choice {
    /// Hardware perf if it works here, else cachegrind if installed, else none.
    Auto,
    /// Hardware counters through `perf stat` ([`PerfStat`]).
    Perf,
    /// valgrind's cachegrind ([`Cachegrind`]).
    Cachegrind,
    /// kfdo's QEMU plugin ([`Emulated`]): exact instruction and branch counts,
    /// modelled L1i / iTLB misses, deterministic for a single-threaded program. Never
    /// chosen by `Auto`.
    Emulated,
    None,
}

impl Choice {
    pub const ALL: [Choice; 5] = [
        Choice::Auto,
        Choice::Perf,
        Choice::Cachegrind,
        Choice::Emulated,
        Choice::None,
    ];

    /// The name `--counters` takes.
    pub fn name(self) -> &'static str {
        match self {
            Choice::Auto => "auto",
            Choice::Perf => "perf",
            Choice::Cachegrind => "cachegrind",
            Choice::Emulated => "emulated",
            Choice::None => "none",
        }
    }
}

impl std::str::FromStr for Choice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Choice::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                format!("unknown counter source '{s}' (auto, perf, cachegrind, emulated, none)")
            })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CounterError {
    #[error("{0}")]
    Unavailable(String),
    #[error("variant '{variant}': counting with {source_name}: `{command}` {status}{}",
        if stderr.is_empty() { String::new() } else { format!("; its stderr ends with:\n{stderr}") })]
    Failed {
        variant: String,
        source_name: &'static str,
        command: String,
        status: String,
        stderr: String,
    },
    /// The counted command was ended by Ctrl-C: not a failure of the command.
    #[error("variant '{variant}': counting with {source_name} was interrupted (Ctrl-C)")]
    Interrupted {
        variant: String,
        source_name: &'static str,
    },
    #[error("{source_name}: cannot read its output {path}: {reason}")]
    Parse {
        source_name: &'static str,
        path: String,
        reason: String,
    },
    #[error("counting: {0}")]
    Io(#[from] std::io::Error),
}

/// One run to count: a variant's command as the runner runs it.
pub struct CountedRun<'a> {
    /// The variant's name, for messages.
    pub variant: &'a str,
    /// The command as the runner runs it (`[SHELL, "-c", CMD]`, or split words).
    pub argv: Vec<String>,
    /// Where the command runs the program under test, when it was made from a template.
    pub program: Option<&'a ProgramSlot>,
    /// How the timed runs ran: the shell (to run a template's command), the directory
    /// and the environment.
    pub protocol: &'a Protocol,
}

impl<'a> CountedRun<'a> {
    pub fn of(v: &'a Arm, protocol: &'a Protocol) -> CountedRun<'a> {
        CountedRun {
            variant: &v.name,
            argv: protocol.shell.argv(&v.command),
            program: v.program.as_ref(),
            protocol,
        }
    }
}

/// A source of counters. Adding one means implementing this and naming it in
/// [`select`].
pub trait Source {
    /// Short name stored beside each value.
    fn name(&self) -> &'static str;
    /// One sentence for reports: what the numbers are.
    fn describe(&self) -> String;
    /// [`Source::describe`] once the variants (name, counts) are counted: what holds of
    /// these counts in particular (whether they are deterministic).
    fn describe_counted(&self, _counted: &[(&str, &[Counter])]) -> String {
        self.describe()
    }
    /// Runs the command under the counter (once, or a few times where one count would not
    /// be deterministic) and returns the counts.
    fn measure(&self, run: &CountedRun<'_>) -> Result<Vec<Counter>, CounterError>;
}

fn tool_exists(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// A counter source, if any.
pub type Selected = Option<Box<dyn Source + Send + Sync>>;

/// Picks the source for `choice`. For `Auto`, the second value says why the
/// better sources were passed over (shown to the user and in the report).
pub fn select(choice: Choice) -> Result<(Selected, Vec<Warning>), CounterError> {
    let mut notes = Vec::new();
    match choice {
        Choice::None => Ok((None, notes)),
        Choice::Perf => {
            let p = PerfStat::probe().map_err(CounterError::Unavailable)?;
            Ok((Some(Box::new(p)), notes))
        }
        Choice::Cachegrind => {
            if !tool_exists("valgrind") {
                return Err(CounterError::Unavailable(
                    "--counters cachegrind: valgrind is not installed (apt-get install valgrind)"
                        .into(),
                ));
            }
            Ok((Some(Box::new(Cachegrind)), notes))
        }
        Choice::Emulated => {
            let e = Emulated::probe().map_err(CounterError::Unavailable)?;
            Ok((Some(Box::new(e)), notes))
        }
        Choice::Auto => match PerfStat::probe() {
            Ok(p) => Ok((Some(Box::new(p)), notes)),
            Err(why) => {
                notes.push(Warning::Counters { message: why });
                if tool_exists("valgrind") {
                    notes.push(Warning::Counters {
                        message: "using valgrind's cachegrind instead (simulated I1/LL \
                                      caches and branch predictor)"
                            .into(),
                    });
                    Ok((Some(Box::new(Cachegrind)), notes))
                } else {
                    notes.push(Warning::Counters {
                        message: "valgrind is not installed either: no counters \
                                      (apt-get install valgrind)"
                            .into(),
                    });
                    Ok((None, notes))
                }
            }
        },
    }
}

fn run_capturing(
    argv: &[String],
    protocol: &Protocol,
) -> std::io::Result<(std::process::ExitStatus, String)> {
    let mut err = tempfile::tempfile()?;
    let status = protocol
        .command(argv)?
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(err.try_clone()?))
        .status()?;
    let tail = runner::tail_of(&mut err, 2000)?;
    Ok((status, tail))
}

// ---------------------------------------------------------------- perf stat

/// Hardware counters through `perf stat`.
pub struct PerfStat {
    events: Vec<(&'static str, &'static str)>,
}

/// (perf event, name in the table). The taken-branch event is Intel's name;
/// it is used only where `perf` knows it.
const PERF_EVENTS: &[(&str, &str)] = &[
    ("instructions", "instructions"),
    ("cycles", "cycles"),
    ("L1-icache-load-misses", "L1-icache misses"),
    ("iTLB-load-misses", "iTLB misses"),
    ("branches", "branches"),
    ("branch-misses", "branch misses"),
];
const PERF_TAKEN: (&str, &str) = ("br_inst_retired.near_taken", "taken branches");

/// One value of `perf stat -x,` output: a count, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum PerfValue {
    Count(f64),
    NotSupported,
    NotCounted,
}

/// Parses `perf stat -x,` CSV lines: `value,unit,event,run time,percent,...`.
pub fn parse_perf_csv(text: &str) -> Vec<(String, PerfValue)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        if f.len() < 3 {
            continue;
        }
        let value = match f[0] {
            "<not supported>" => PerfValue::NotSupported,
            "<not counted>" => PerfValue::NotCounted,
            v => match v.parse::<f64>() {
                Ok(x) => PerfValue::Count(x),
                Err(_) => continue,
            },
        };
        // Events may carry a modifier suffix (":u") in the output.
        let event = f[2].split(':').next().unwrap_or(f[2]).to_string();
        out.push((event, value));
    }
    out
}

impl PerfStat {
    /// Checks that `perf stat` counts instructions here; the error says why
    /// not in words a user can act on.
    pub fn probe() -> Result<PerfStat, String> {
        if !tool_exists("perf") {
            return Err(
                "hardware counters: `perf` is not installed (apt-get install linux-perf)".into(),
            );
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = dir.path().join("probe.csv");
        let try_events = |events: &str| -> Option<Vec<(String, PerfValue)>> {
            let st = Command::new("perf")
                .args(["stat", "-x,", "-o"])
                .arg(&out)
                .args(["-e", events, "--", "true"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .ok()?;
            if !st.success() {
                return None;
            }
            Some(parse_perf_csv(&std::fs::read_to_string(&out).ok()?))
        };
        match try_events("instructions") {
            None => Err("hardware counters: `perf stat -e instructions` fails here (perf_event_paranoid? \
                         try `sysctl kernel.perf_event_paranoid=1` or run as root)"
                .into()),
            Some(v) if v.iter().any(|(_, x)| matches!(x, PerfValue::Count(_))) => {
                let mut events = PERF_EVENTS.to_vec();
                if let Some(v) = try_events(PERF_TAKEN.0) {
                    if v.iter().any(|(_, x)| matches!(x, PerfValue::Count(_))) {
                        events.push(PERF_TAKEN);
                    }
                }
                Ok(PerfStat { events })
            }
            Some(_) => Err("hardware counters: `perf stat -e instructions` says <not supported>: this machine \
                            exposes no hardware PMU (typical of virtual machines)"
                .into()),
        }
    }
}

impl Source for PerfStat {
    fn name(&self) -> &'static str {
        "perf stat"
    }
    fn describe(&self) -> String {
        "hardware performance counters read with `perf stat` (one run per variant)".into()
    }
    fn measure(&self, run: &CountedRun<'_>) -> Result<Vec<Counter>, CounterError> {
        let (variant, argv) = (run.variant, &run.argv);
        let dir = tempfile::tempdir()?;
        let out = dir.path().join("stat.csv");
        let events: Vec<&str> = self.events.iter().map(|e| e.0).collect();
        let mut full = vec![
            "perf".to_string(),
            "stat".into(),
            "-x,".into(),
            "-o".into(),
            out.display().to_string(),
            "-e".into(),
            events.join(","),
            "--".into(),
        ];
        full.extend(argv.iter().cloned());
        let (status, stderr) = run_capturing(&full, run.protocol)?;
        if runner::ended_by_ctrl_c(&status) {
            return Err(CounterError::Interrupted {
                variant: variant.into(),
                source_name: "perf stat",
            });
        }
        if !status.success() {
            return Err(CounterError::Failed {
                variant: variant.into(),
                source_name: "perf stat",
                command: argv.join(" "),
                status: runner::describe_status(&status),
                stderr,
            });
        }
        let text = std::fs::read_to_string(&out)?;
        let parsed = parse_perf_csv(&text);
        let mut counters = Vec::new();
        for (ev, name) in &self.events {
            if let Some((_, PerfValue::Count(v))) = parsed.iter().find(|(e, _)| e == ev) {
                counters.push(Counter::new(*name, *v, self.name()));
            }
        }
        Ok(counters)
    }
}

// --------------------------------------------------------------- cachegrind

/// valgrind's cachegrind with cache and branch simulation. The numbers are
/// exact for instructions and simulated for misses: a model of an I1/D1/LL
/// hierarchy and a simple branch predictor, not this CPU.
pub struct Cachegrind;

/// Sums the `events:` / `summary:` lines of cachegrind output files.
pub fn parse_cachegrind_summary(text: &str) -> Result<Vec<(String, f64)>, String> {
    let mut events: Option<Vec<String>> = None;
    let mut summary: Option<Vec<f64>> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("events:") {
            events = Some(rest.split_whitespace().map(String::from).collect());
        } else if let Some(rest) = line.strip_prefix("summary:") {
            summary = Some(
                rest.split_whitespace()
                    .map(|x| {
                        x.parse::<f64>()
                            .map_err(|e| format!("bad number '{x}' in summary line: {e}"))
                    })
                    .collect::<Result<_, _>>()?,
            );
        }
    }
    let events = events.ok_or("no `events:` line")?;
    let summary = summary.ok_or("no `summary:` line")?;
    Ok(events.into_iter().zip(summary).collect())
}

/// Table rows made from cachegrind's event totals.
pub fn cachegrind_counters(totals: &[(String, f64)]) -> Vec<Counter> {
    let get = |k: &str| totals.iter().find(|(e, _)| e == k).map(|(_, v)| *v);
    let mut out = Vec::new();
    let mut push = |name: &str, v: Option<f64>| {
        if let Some(value) = v {
            out.push(Counter::new(name, value, "cachegrind"));
        }
    };
    push("instructions", get("Ir"));
    push("I1 misses", get("I1mr"));
    push("LL instruction misses", get("ILmr"));
    push(
        "D1 misses",
        get("D1mr").zip(get("D1mw")).map(|(a, b)| a + b),
    );
    let sum = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    };
    push("branches", sum(get("Bc"), get("Bi")));
    push("branch mispredictions", sum(get("Bcm"), get("Bim")));
    out
}

impl Source for Cachegrind {
    fn name(&self) -> &'static str {
        "cachegrind"
    }
    fn describe(&self) -> String {
        "valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes (one run per variant, all child \
         processes): instruction counts are exact, cache misses and branch mispredictions are simulated"
            .into()
    }
    fn measure(&self, run: &CountedRun<'_>) -> Result<Vec<Counter>, CounterError> {
        let (variant, argv) = (run.variant, &run.argv);
        let dir = tempfile::tempdir()?;
        let pattern = dir.path().join("cg.%p");
        let mut full = vec![
            "valgrind".to_string(),
            "--tool=cachegrind".into(),
            "--cache-sim=yes".into(),
            "--branch-sim=yes".into(),
            "--trace-children=yes".into(),
            format!("--cachegrind-out-file={}", pattern.display()),
            "--".into(),
        ];
        full.extend(argv.iter().cloned());
        let (status, mut stderr) = run_capturing(&full, run.protocol)?;
        if runner::ended_by_ctrl_c(&status) {
            return Err(CounterError::Interrupted {
                variant: variant.into(),
                source_name: "cachegrind",
            });
        }
        if !status.success() {
            if stderr.contains("debuginfo reader") {
                stderr.push_str(
                    "\n(valgrind cannot read this binary's debug info: older valgrind (3.19 in Debian 12) \
                     does not read DWARF 5, clang's default; build with -gdwarf-4 or without -g)",
                );
            }
            return Err(CounterError::Failed {
                variant: variant.into(),
                source_name: "cachegrind",
                command: argv.join(" "),
                status: runner::describe_status(&status),
                stderr,
            });
        }
        let totals = sum_cachegrind_dir(dir.path())?;
        Ok(cachegrind_counters(&totals))
    }
}

fn sum_cachegrind_dir(dir: &Path) -> Result<Vec<(String, f64)>, CounterError> {
    let mut totals: Vec<(String, f64)> = Vec::new();
    let mut files = 0;
    for e in std::fs::read_dir(dir)?.flatten() {
        let path = e.path();
        let text = std::fs::read_to_string(&path)?;
        let one = parse_cachegrind_summary(&text).map_err(|reason| CounterError::Parse {
            source_name: "cachegrind",
            path: path.display().to_string(),
            reason,
        })?;
        files += 1;
        for (k, v) in one {
            match totals.iter_mut().find(|(e, _)| *e == k) {
                Some(t) => t.1 += v,
                None => totals.push((k, v)),
            }
        }
    }
    if files == 0 {
        return Err(CounterError::Parse {
            source_name: "cachegrind",
            path: dir.display().to_string(),
            reason: "valgrind wrote no output file".into(),
        });
    }
    Ok(totals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_csv() {
        let text = "# started on Thu\n\n<not supported>,,instructions:u,0,100.00,,\n\
                    123456,,cycles,812000,100.00,,\n<not counted>,,iTLB-load-misses,0,0.00,,\n";
        let p = parse_perf_csv(text);
        assert_eq!(p[0], ("instructions".into(), PerfValue::NotSupported));
        assert_eq!(p[1], ("cycles".into(), PerfValue::Count(123456.0)));
        assert_eq!(p[2], ("iTLB-load-misses".into(), PerfValue::NotCounted));
    }

    #[test]
    fn cachegrind_file() {
        let text = "desc: I1 cache: 32768 B, 64 B, 8-way associative\ncmd: ./a\n\
                    events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim\n\
                    fl=x.c\nfn=main\n1 2 0 0 0 0 0 0 0 0 0 0 0 0\n\
                    summary: 1000 10 5 300 7 1 200 3 1 150 12 20 4\n";
        let t = parse_cachegrind_summary(text).unwrap();
        let c = cachegrind_counters(&t);
        let get = |n: &str| c.iter().find(|x| x.name == n).unwrap().value;
        assert_eq!(get("instructions"), 1000.0);
        assert_eq!(get("I1 misses"), 10.0);
        assert_eq!(get("D1 misses"), 10.0);
        assert_eq!(get("branches"), 170.0);
        assert_eq!(get("branch mispredictions"), 16.0);
        assert!(c.iter().all(|x| x.source == "cachegrind"));
        assert!(parse_cachegrind_summary("events: Ir\n").is_err());
    }

    #[test]
    fn auto_never_fails_and_says_why_it_fell_back() {
        let (src, notes) = select(Choice::Auto).unwrap();
        match PerfStat::probe() {
            // A machine with a PMU: hardware counters, nothing to explain.
            Ok(_) => assert_eq!(src.unwrap().name(), "perf stat"),
            // Without one (this project's VMs): the reason is given, and
            // cachegrind (or nothing) is used instead.
            Err(why) => {
                assert!(
                    why.contains("not supported")
                        || why.contains("fails")
                        || why.contains("not installed"),
                    "{why}"
                );
                assert_eq!(notes[0].to_string(), why);
                if let Some(s) = src {
                    assert_eq!(s.name(), "cachegrind");
                }
                assert!(select(Choice::Perf).is_err());
            }
        }
    }

    #[test]
    fn emulated_is_selectable() {
        match select(Choice::Emulated) {
            Ok((src, notes)) => {
                assert_eq!(src.unwrap().name(), "emulated");
                assert!(notes.is_empty());
            }
            // Only where QEMU user mode is missing, and then it says so.
            Err(e) => assert!(e.to_string().contains("qemu"), "{e}"),
        }
        assert_eq!("emulated".parse::<Choice>(), Ok(Choice::Emulated));
    }
}
