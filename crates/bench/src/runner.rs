//! The A/B runner: warm-up, then interleaved timed runs of every variant,
//! a fixed number of rounds or until the confidence intervals are narrow
//! enough. Every finished run is handed to the caller at once (to be stored),
//! so an interrupted comparison loses only the run in flight.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::metric::Metric;
use crate::stats;

/// One arm of a comparison: a named command under test (what the reports and the store
/// call a variant of the benchmark; the first arm is the baseline).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Arm {
    pub name: String,
    pub command: String,
    /// Free text describing how it was built (e.g. compiler flags).
    pub flags: Option<String>,
    /// The program under test, when `command` was made from a template that runs it
    /// (`{bin}`): a counter that must run the program itself (the emulated counters,
    /// since QEMU user mode does not follow `exec`) puts its launcher in its place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<ProgramSlot>,
}

impl Arm {
    /// A plain command, with neither build flags nor a program slot.
    pub fn new(name: impl Into<String>, command: impl Into<String>) -> Arm {
        Arm {
            name: name.into(),
            command: command.into(),
            flags: None,
            program: None,
        }
    }

    /// The command run from `template` with `{bin}` standing for `program`.
    pub fn from_template(name: impl Into<String>, template: &str, program: &Path) -> Arm {
        let slot = ProgramSlot {
            template: template.to_string(),
            path: program.to_path_buf(),
        };
        Arm {
            name: name.into(),
            command: slot.command_with(program),
            flags: None,
            program: Some(slot),
        }
    }
}

/// Where the program under test appears in a command template.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProgramSlot {
    /// The command with [`PROGRAM_PLACEHOLDER`] wherever the program runs.
    pub template: String,
    pub path: PathBuf,
}

/// The word that stands for the program under test in a command template.
pub const PROGRAM_PLACEHOLDER: &str = "{bin}";

impl ProgramSlot {
    /// The template with `program` (shell-quoted) in every place of the placeholder.
    pub fn command_with(&self, program: &Path) -> String {
        self.template.replace(
            PROGRAM_PLACEHOLDER,
            &shell_words::quote(&program.to_string_lossy()),
        )
    }
}

/// How a command string becomes a process.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Shell {
    /// `SHELL -c COMMAND` (default `sh`).
    Shell(String),
    /// Split on whitespace and run directly, without a shell's start-up cost.
    None,
}

impl Shell {
    pub fn argv(&self, command: &str) -> Vec<String> {
        match self {
            Shell::Shell(sh) => vec![sh.clone(), "-c".into(), command.into()],
            Shell::None => command.split_whitespace().map(String::from).collect(),
        }
    }
}

/// When to stop.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum StopRule {
    /// Exactly this many timed runs of each variant.
    Fixed(usize),
    /// Until the 95 % interval of every ratio to the first variant is within
    /// ±`target_pct` percent (or, with one variant, the interval of its mean),
    /// at least `min_runs` and at most `max_runs` runs per variant.
    Adaptive {
        target_pct: f64,
        min_runs: usize,
        max_runs: usize,
    },
}

/// How the arms are run: the untimed warm-up, when to stop, and how each command is
/// started (shell, directory, environment, output).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Protocol {
    pub warmup: usize,
    pub stop: StopRule,
    pub shell: Shell,
    /// Let the commands' stdout through instead of discarding it.
    pub show_output: bool,
    /// Where the commands run (default: this process's directory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// Set in the commands' environment, on top of this process's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, String)>,
}

impl Protocol {
    /// `warmup` untimed runs, then the stop rule; commands run with `sh -c` here, their
    /// output discarded.
    pub fn new(warmup: usize, stop: StopRule) -> Protocol {
        Protocol {
            warmup,
            stop,
            shell: Shell::Shell("sh".into()),
            show_output: false,
            cwd: None,
            env: Vec::new(),
        }
    }

    /// A command of this protocol, ready to spawn: its directory and environment set.
    pub fn command(&self, argv: &[String]) -> std::io::Result<Command> {
        let (program, args) = argv.split_first().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command")
        })?;
        let mut cmd = Command::new(program);
        cmd.args(args);
        if let Some(d) = &self.cwd {
            cmd.current_dir(d);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        default_interrupt_signals(&mut cmd);
        Ok(cmd)
    }
}

/// Starts the command with SIGINT and SIGQUIT at their default, as a shell does for a
/// foreground job: a background job of a non-interactive shell (`nohup kfdo ... &`, a CI
/// runner) inherits them ignored, and a command that ignores them would neither die of
/// Ctrl-C nor report an interruption the runner can tell apart.
fn default_interrupt_signals(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: `pre_exec`'s contract: the closure runs in the forked child before exec and
    // may only make async-signal-safe calls; signal(2) with SIG_DFL is one, installs no
    // handler of ours, and the closure allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            for s in [libc::SIGINT, libc::SIGQUIT] {
                if libc::signal(s, libc::SIG_DFL) == libc::SIG_ERR {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// One finished timed run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunResult {
    /// What the run measured besides its time.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<Metric>,
    /// Index of the arm in the list of arms compared.
    pub variant: usize,
    /// 0-based index of this run among the variant's timed runs in this session.
    pub index: usize,
    /// Position in the session's run order (all variants), for drift plots.
    pub seq: usize,
    pub wall_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    /// Seconds since the Unix epoch when the run started.
    pub started_unix: f64,
}

/// What the runner reports while it works.
pub enum Event<'a> {
    Warmup {
        variant: usize,
        index: usize,
    },
    Run(&'a RunResult),
    /// After each round: the current ±% of each ratio (index 0: baseline).
    Round {
        round: usize,
        half_width_pct: &'a [f64],
    },
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum Ending {
    /// The fixed run count was reached.
    Done,
    /// The adaptive target was reached.
    TargetReached,
    /// `max_runs` was reached before the target.
    TargetMissed { half_width_pct: f64 },
    /// Stopped by the interrupt flag (SIGINT); finished runs were reported.
    Interrupted,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("variant '{variant}': cannot start `{command}`: {source} (check that the program exists and is executable)")]
    Spawn {
        variant: String,
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("variant '{variant}', {phase} run {run}: `{command}` {status}{}",
        if stderr.is_empty() { "; it wrote nothing to stderr".to_string() } else { format!("; its stderr ends with:\n{stderr}") })]
    Failed {
        variant: String,
        /// "warm-up" or "timed".
        phase: &'static str,
        /// 1-based run number within the phase.
        run: usize,
        command: String,
        status: String,
        stderr: String,
    },
    #[error("cannot capture the stderr of the commands: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Sink(String),
}

/// Human words for an exit status.
pub fn describe_status(st: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = st.code() {
        format!("exited with status {code}")
    } else if let Some(sig) = st.signal() {
        format!("was killed by signal {sig}{}", signal_name(sig))
    } else {
        format!("ended with {st}")
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => " (SIGINT)",
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGTERM => " (SIGTERM)",
        libc::SIGBUS => " (SIGBUS)",
        libc::SIGFPE => " (SIGFPE)",
        _ => "",
    }
}

/// Whether a command ended because the user pressed Ctrl-C: the terminal signals the
/// whole process group, so the command dies of SIGINT (or exits 130, as shells do).
pub fn ended_by_ctrl_c(status: &ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(libc::SIGINT) || status.code() == Some(130)
}

/// CPU time of all waited-for children so far (user, system), in seconds.
pub fn children_cpu() -> (f64, f64) {
    // SAFETY: getrusage only writes the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// The last `max` bytes of a file, as text (lossy), trimmed.
pub fn tail_of(file: &mut File, max: u64) -> std::io::Result<String> {
    let len = file.seek(SeekFrom::End(0))?;
    let start = len.saturating_sub(max);
    file.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::new();
    file.read_to_end(&mut buf)?;
    let mut s = String::from_utf8_lossy(&buf).trim_end().to_string();
    if start > 0 {
        s.insert_str(0, "[...]");
    }
    Ok(s)
}

/// The outcome of one process run.
pub(crate) enum Exec {
    Ok {
        wall_s: f64,
        user_s: f64,
        sys_s: f64,
        started_unix: f64,
    },
    /// Killed by SIGINT: the user pressed Ctrl-C (the terminal signals the
    /// whole process group); not a failure of the command.
    Interrupted,
    Failed {
        status: String,
        stderr: String,
    },
}

/// Runs `argv` once as `protocol` says, with stdin closed, stdout discarded (or shown) and
/// stderr captured in `err`.
pub(crate) fn exec(argv: &[String], protocol: &Protocol, err: &mut File) -> std::io::Result<Exec> {
    err.set_len(0)?;
    err.seek(SeekFrom::Start(0))?;
    let mut cmd = protocol.command(argv)?;
    cmd.stdin(Stdio::null())
        .stdout(if protocol.show_output {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::from(err.try_clone()?));
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let (u0, s0) = children_cpu();
    let t0 = Instant::now();
    let status = cmd.spawn()?.wait()?;
    let wall_s = t0.elapsed().as_secs_f64();
    let (u1, s1) = children_cpu();
    if status.success() {
        Ok(Exec::Ok {
            wall_s,
            user_s: u1 - u0,
            sys_s: s1 - s0,
            started_unix,
        })
    } else if ended_by_ctrl_c(&status) {
        Ok(Exec::Interrupted)
    } else {
        Ok(Exec::Failed {
            status: describe_status(&status),
            stderr: tail_of(err, 2000)?,
        })
    }
}

/// What one run of a variant measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The time that is judged (wall-clock seconds for a command; the workload's own
    /// time for a trial that measures itself).
    pub wall_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    /// Seconds since the Unix epoch when the run started.
    pub started_unix: f64,
    pub metrics: Vec<Metric>,
}

/// Runs one variant once: the runner decides which and when, a `Trials` does it. The
/// commands of `kfdo compare` are one kind ([`CommandTrials`]); a kernel booted under an
/// emulator with a workload is another.
pub trait Trials {
    /// Runs variant `i` once. `phase` is "warm-up" or "timed", `run` the 1-based number
    /// of the run in that phase (for error messages). `Ok(None)`: the user interrupted it.
    fn run(
        &mut self,
        i: usize,
        phase: &'static str,
        run: usize,
    ) -> Result<Option<Measurement>, RunError>;
}

/// The commands of a comparison, each run with the protocol's shell, directory and streams.
pub struct CommandTrials<'a> {
    arms: &'a [Arm],
    protocol: &'a Protocol,
    argvs: Vec<Vec<String>>,
    err: File,
}

impl<'a> CommandTrials<'a> {
    pub fn new(arms: &'a [Arm], protocol: &'a Protocol) -> Result<CommandTrials<'a>, RunError> {
        Ok(CommandTrials {
            argvs: arms
                .iter()
                .map(|v| protocol.shell.argv(&v.command))
                .collect(),
            arms,
            protocol,
            err: tempfile::tempfile()?,
        })
    }
}

impl Trials for CommandTrials<'_> {
    fn run(
        &mut self,
        i: usize,
        phase: &'static str,
        run: usize,
    ) -> Result<Option<Measurement>, RunError> {
        let v = &self.arms[i];
        match exec(&self.argvs[i], self.protocol, &mut self.err) {
            Ok(Exec::Interrupted) => Ok(None),
            Ok(Exec::Failed { status, stderr }) => Err(RunError::Failed {
                variant: v.name.clone(),
                phase,
                run,
                command: v.command.clone(),
                status,
                stderr,
            }),
            Ok(Exec::Ok {
                wall_s,
                user_s,
                sys_s,
                started_unix,
            }) => Ok(Some(Measurement {
                wall_s,
                user_s,
                sys_s,
                started_unix,
                metrics: Vec::new(),
            })),
            Err(source) => Err(RunError::Spawn {
                variant: v.name.clone(),
                command: v.command.clone(),
                source,
            }),
        }
    }
}

/// The current ±% that decides when an adaptive comparison may stop:
/// index 0 is the baseline's own mean interval (t-based), the others the
/// bootstrap interval of their ratio to the baseline.
pub fn half_widths(samples: &[Vec<f64>], resamples: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(samples.len());
    let base = &samples[0];
    let n = base.len() as f64;
    let base_hw = if base.len() >= 2 {
        let m = stats::mean(base);
        100.0 * stats::t_critical(0.05, n - 1.0) * stats::stddev(base) / n.sqrt() / m.abs()
    } else {
        f64::INFINITY
    };
    out.push(base_hw);
    for s in &samples[1..] {
        let hw = if s.len() >= 2 && base.len() >= 2 {
            stats::bootstrap_ratio_ci(base, s, 0.95, resamples, stats::data_seed(base, s))
                .map(|i| i.half_width_pct())
                .unwrap_or(f64::INFINITY)
        } else {
            f64::INFINITY
        };
        out.push(hw);
    }
    out
}

/// Runs the protocol's commands; see [`run_trials`].
pub fn run(
    arms: &[Arm],
    protocol: &Protocol,
    prior: &[Vec<f64>],
    stop: &AtomicBool,
    on_event: impl FnMut(Event<'_>) -> Result<(), String>,
) -> Result<Ending, RunError> {
    let mut trials = CommandTrials::new(arms, protocol)?;
    run_trials(arms.len(), protocol, prior, stop, &mut trials, on_event)
}

/// Runs `k` variants as the protocol says (warm-up, then interleaved rounds until its stop
/// rule). `prior` holds earlier stored timings of each variant (they count towards the
/// adaptive target; pass empty vectors for a fresh start). `stop` is polled between
/// runs. `on_event` sees every warm-up and run as it finishes; an error from it (e.g.
/// the store is gone) ends the comparison.
pub fn run_trials(
    k: usize,
    protocol: &Protocol,
    prior: &[Vec<f64>],
    stop: &AtomicBool,
    trials: &mut dyn Trials,
    mut on_event: impl FnMut(Event<'_>) -> Result<(), String>,
) -> Result<Ending, RunError> {
    assert!(k > 0);
    for w in 0..protocol.warmup {
        for i in 0..k {
            if stop.load(Ordering::SeqCst) {
                return Ok(Ending::Interrupted);
            }
            if trials.run(i, "warm-up", w + 1)?.is_none() {
                return Ok(Ending::Interrupted);
            }
            on_event(Event::Warmup {
                variant: i,
                index: w,
            })
            .map_err(RunError::Sink)?;
        }
    }

    let mut samples: Vec<Vec<f64>> = (0..k)
        .map(|i| prior.get(i).cloned().unwrap_or_default())
        .collect();
    let (rounds_max, adaptive) = match protocol.stop {
        StopRule::Fixed(n) => (n, None),
        StopRule::Adaptive {
            target_pct,
            min_runs,
            max_runs,
        } => (max_runs, Some((target_pct, min_runs))),
    };
    let mut seq = 0;
    let mut last_hw = f64::INFINITY;
    for round in 0..rounds_max {
        // Rotate the starting variant each round (A B, B A, A B, ...) so that
        // no variant always runs right after the same other one.
        for j in 0..k {
            let i = (round + j) % k;
            if stop.load(Ordering::SeqCst) {
                return Ok(Ending::Interrupted);
            }
            let Some(m) = trials.run(i, "timed", round + 1)? else {
                return Ok(Ending::Interrupted);
            };
            let r = RunResult {
                variant: i,
                index: round,
                seq,
                wall_s: m.wall_s,
                user_s: m.user_s,
                sys_s: m.sys_s,
                started_unix: m.started_unix,
                metrics: m.metrics,
            };
            seq += 1;
            samples[i].push(r.wall_s);
            on_event(Event::Run(&r)).map_err(RunError::Sink)?;
        }
        if let Some((target, min_runs)) = adaptive {
            let hw = half_widths(&samples, 2000);
            on_event(Event::Round {
                round,
                half_width_pct: &hw,
            })
            .map_err(RunError::Sink)?;
            // The baseline's own interval matters only when it is alone.
            let relevant = if k == 1 { &hw[..] } else { &hw[1..] };
            last_hw = relevant.iter().cloned().fold(0.0, f64::max);
            if round + 1 >= min_runs && last_hw <= target {
                return Ok(Ending::TargetReached);
            }
        }
    }
    Ok(match adaptive {
        Some(_) => Ending::TargetMissed {
            half_width_pct: last_hw,
        },
        None => Ending::Done,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(name: &str, cmd: &str) -> Arm {
        Arm::new(name, cmd)
    }

    #[test]
    fn a_template_runs_the_program_quoted_wherever_it_says() {
        let v = Arm::from_template(
            "a",
            "{bin} -q x && {bin} -d y | wc -c",
            Path::new("/tmp/my prog"),
        );
        assert_eq!(
            v.command,
            "'/tmp/my prog' -q x && '/tmp/my prog' -d y | wc -c"
        );
        let slot = v.program.unwrap();
        assert_eq!(
            slot.command_with(Path::new("/l/launch")),
            "/l/launch -q x && /l/launch -d y | wc -c"
        );
    }

    fn protocol(stop: StopRule) -> Protocol {
        Protocol::new(1, stop)
    }

    #[test]
    fn interleaves_and_rotates() {
        let vs = [v("a", "true"), v("b", "true")];
        let mut order = Vec::new();
        let mut warm = 0;
        let end = run(
            &vs,
            &protocol(StopRule::Fixed(3)),
            &[],
            &AtomicBool::new(false),
            |e| {
                match e {
                    Event::Run(r) => order.push((r.variant, r.index, r.seq)),
                    Event::Warmup { .. } => warm += 1,
                    _ => {}
                }
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(end, Ending::Done);
        assert_eq!(warm, 2);
        let vars: Vec<usize> = order.iter().map(|o| o.0).collect();
        assert_eq!(vars, vec![0, 1, 1, 0, 0, 1]);
        assert_eq!(
            order.iter().map(|o| o.2).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4, 5]
        );
    }

    #[test]
    fn failure_names_variant_run_and_stderr() {
        let vs = [
            v("good", "true"),
            v("bad <one>", "echo 'no such table: t1' >&2; exit 3"),
        ];
        let e = run(
            &vs,
            &protocol(StopRule::Fixed(2)),
            &[],
            &AtomicBool::new(false),
            |_| Ok(()),
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("variant 'bad <one>'"), "{msg}");
        assert!(msg.contains("warm-up run 1"), "{msg}");
        assert!(msg.contains("exited with status 3"), "{msg}");
        assert!(msg.contains("no such table: t1"), "{msg}");
    }

    #[test]
    fn failure_in_a_timed_run() {
        // Fails on its second invocation: the warm-up passes, timed run 1 fails.
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("count");
        let cmd = format!(
            "if [ -e {0} ]; then echo boom >&2; exit 1; fi; touch {0}",
            f.display()
        );
        let vs = [v("flaky", &cmd)];
        let e = run(
            &vs,
            &protocol(StopRule::Fixed(2)),
            &[],
            &AtomicBool::new(false),
            |_| Ok(()),
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("variant 'flaky', timed run 1"), "{msg}");
        assert!(msg.contains("boom"), "{msg}");
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let vs = [v("x", "/nonexistent/prog")];
        let mut p = protocol(StopRule::Fixed(1));
        p.shell = Shell::None;
        let e = run(&vs, &p, &[], &AtomicBool::new(false), |_| Ok(())).unwrap_err();
        assert!(matches!(e, RunError::Spawn { .. }), "{e}");
        assert!(e.to_string().contains("variant 'x'"));
    }

    #[test]
    fn stop_flag_keeps_finished_runs() {
        let vs = [v("a", "true"), v("b", "true")];
        let stop = AtomicBool::new(false);
        let mut runs = 0;
        let end = run(&vs, &protocol(StopRule::Fixed(100)), &[], &stop, |e| {
            if let Event::Run(_) = e {
                runs += 1;
                if runs == 3 {
                    stop.store(true, Ordering::SeqCst);
                }
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(end, Ending::Interrupted);
        assert_eq!(runs, 3);
    }

    #[test]
    fn child_killed_by_sigint_is_an_interruption() {
        // As a background job of a non-interactive shell runs: SIGINT ignored on entry,
        // which the children would inherit unless the runner resets it.
        // SAFETY: SIG_IGN installs no handler; no test of this binary relies on SIGINT.
        unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
        let vs = [v("a", "kill -INT $$")];
        let end = run(
            &vs,
            &protocol(StopRule::Fixed(3)),
            &[],
            &AtomicBool::new(false),
            |_| Ok(()),
        )
        .unwrap();
        assert_eq!(end, Ending::Interrupted);
    }

    #[test]
    fn adaptive_stops_on_identical_constant_prior() {
        // Prior samples with no spread: the interval is already 0 wide, so
        // the first round that reaches min_runs ends it.
        let vs = [v("a", "true"), v("b", "true")];
        let prior = vec![vec![1.0; 10], vec![1.0; 10]];
        let stop = StopRule::Adaptive {
            target_pct: 1000.0,
            min_runs: 2,
            max_runs: 50,
        };
        let mut rounds = 0;
        let end = run(&vs, &protocol(stop), &prior, &AtomicBool::new(false), |e| {
            if let Event::Round { .. } = e {
                rounds += 1;
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(end, Ending::TargetReached);
        assert_eq!(rounds, 2);
    }

    #[test]
    fn half_widths_shrink_with_more_samples() {
        let a: Vec<f64> = (0..10).map(|i| 1.0 + 0.01 * (i % 3) as f64).collect();
        let b: Vec<f64> = (0..10).map(|i| 2.0 + 0.02 * (i % 3) as f64).collect();
        let hw = half_widths(&[a.clone(), b.clone()], 2000);
        let a4: Vec<f64> = a.iter().cycle().take(40).cloned().collect();
        let b4: Vec<f64> = b.iter().cycle().take(40).cloned().collect();
        let hw4 = half_widths(&[a4, b4], 2000);
        assert!(hw4[1] < hw[1] && hw4[0] < hw[0], "{hw:?} {hw4:?}");
    }
}
