//! Running a step's command with its output in the step's log file, and the
//! error that names the step and the log when it fails.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;

/// How many log lines a failure quotes.
const TAIL_LINES: usize = 12;

/// A step's command failed: says which step, how, and where its log is.
#[derive(Debug)]
pub struct StepFailed {
    pub step: String,
    pub how: String,
    pub log: PathBuf,
    pub tail: Vec<String>,
}

impl std::fmt::Display for StepFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "step '{}' failed ({}); its log is {}",
            self.step,
            self.how,
            self.log.display()
        )?;
        if !self.tail.is_empty() {
            write!(f, "\nlast lines of the log:")?;
            for l in &self.tail {
                write!(f, "\n  | {l}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for StepFailed {}

/// The last `n` non-empty lines of a log (progress bars' carriage returns removed).
pub fn tail(log: &Path, n: usize) -> Vec<String> {
    let Ok(bytes) = std::fs::read(log) else {
        return Vec::new();
    };
    let start = bytes.len().saturating_sub(64 * 1024);
    let text = String::from_utf8_lossy(&bytes[start..]);
    let lines: Vec<String> = text
        .lines()
        .map(|l| l.rsplit('\r').next().unwrap_or("").trim_end().to_string())
        .filter(|l| !l.trim().is_empty() && !l.starts_with("# "))
        .collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// Where a command's standard output goes.
pub enum Stdout<'a> {
    /// Into the log, with stderr.
    Log,
    /// Returned to the caller (and copied into the log).
    Capture,
    /// Into this file (e.g. `perf script` text).
    File(&'a Path),
}

/// A step's log file: a header per command saying what ran where, then its output.
pub struct Log {
    pub step: String,
    pub path: PathBuf,
}

impl Log {
    pub fn create(step: &str, path: &Path) -> anyhow::Result<Log> {
        let mut f = std::fs::File::create(path)
            .with_context(|| format!("cannot create the log {}", path.display()))?;
        writeln!(f, "# step: {step}")?;
        Ok(Log {
            step: step.to_string(),
            path: path.to_path_buf(),
        })
    }

    fn append(&self) -> anyhow::Result<std::fs::File> {
        std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .with_context(|| format!("cannot write the log {}", self.path.display()))
    }

    /// Runs `cmd` with its output in the log; a failure names the step and the log.
    pub fn run(&self, cmd: &mut Command, stdout: Stdout<'_>) -> anyhow::Result<String> {
        let mut f = self.append()?;
        if let Some(dir) = cmd.get_current_dir() {
            writeln!(f, "# cwd: {}", dir.display())?;
        }
        for (k, v) in cmd.get_envs() {
            if let Some(v) = v {
                writeln!(f, "# env: {}={}", k.to_string_lossy(), v.to_string_lossy())?;
            }
        }
        let argv: Vec<String> = std::iter::once(cmd.get_program())
            .chain(cmd.get_args())
            .map(|a| shell_words::quote(&a.to_string_lossy()).into_owned())
            .collect();
        writeln!(f, "# command: {}", argv.join(" "))?;
        f.flush()?;
        cmd.stdin(Stdio::null()).stderr(Stdio::from(f.try_clone()?));
        match stdout {
            Stdout::Log => cmd.stdout(Stdio::from(f.try_clone()?)),
            Stdout::Capture => cmd.stdout(Stdio::piped()),
            Stdout::File(p) => cmd.stdout(Stdio::from(
                std::fs::File::create(p)
                    .with_context(|| format!("cannot create {}", p.display()))?,
            )),
        };
        // Its own process group, so that an interruption stops the command and all it
        // started (steps::interrupt).
        std::os::unix::process::CommandExt::process_group(cmd, 0);
        let child = cmd.spawn().map_err(|e| {
            self.fail(format!(
                "cannot start {}: {e}",
                cmd.get_program().to_string_lossy()
            ))
        })?;
        let _running = super::interrupt::Command::started(child.id());
        let out = child
            .wait_with_output()
            .with_context(|| format!("step '{}': waiting for the command", self.step))?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if !text.is_empty() {
            // Keep what the command said in the log too.
            let _ = f.write_all(text.as_bytes());
        }
        if !out.status.success() {
            use std::os::unix::process::ExitStatusExt;
            let how = match (out.status.code(), out.status.signal()) {
                (Some(c), _) => format!("exit status {c}"),
                (None, Some(s)) => format!("killed by signal {s}"),
                _ => out.status.to_string(),
            };
            return Err(self.fail(how));
        }
        Ok(text)
    }

    /// The step failed: `what` says how; the error quotes the log's last lines.
    pub fn fail(&self, what: String) -> anyhow::Error {
        StepFailed {
            step: self.step.clone(),
            how: what,
            log: self.path.clone(),
            tail: tail(&self.path, TAIL_LINES),
        }
        .into()
    }

    /// A note in the log (what kfdo decided, not what a command said).
    pub fn note(&self, msg: &str) {
        if let Ok(mut f) = self.append() {
            let _ = writeln!(f, "# kfdo: {msg}");
        }
    }

    /// Output of a step that kfdo does itself (a library call): what a command would
    /// have printed. The progress display shows the last such line.
    pub fn say(&self, msg: &str) {
        if let Ok(mut f) = self.append() {
            let _ = writeln!(f, "{msg}");
        }
    }

    /// Where a program that kfdo starts itself writes: no input, its output and errors
    /// into this log.
    pub fn child_stdio(&self) -> anyhow::Result<kfdo_record::StdioPlan> {
        use kfdo_record::StdStream;
        Ok(kfdo_record::StdioPlan {
            stdin: StdStream::Null,
            stdout: StdStream::file(self.append()?),
            stderr: StdStream::file(self.append()?),
        })
    }

    /// A library call's error: kept in the log, as a failing command's would be, and
    /// quoted from there in the step's error.
    pub fn failed(&self, e: impl std::fmt::Display) -> anyhow::Error {
        self.say(&format!("kfdo: error: {e}"));
        self.fail("kfdo reported an error".into())
    }
}
