//! What a run says and undoes when it is interrupted (Ctrl-C, SIGTERM): the steps
//! record here what finished, what runs and which commands run for them, so the
//! signal handler (the CLI's) can stop the commands, remove the outputs of the steps
//! cut short and say what the cache kept. A signal is process-wide, and so is this
//! record.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

#[derive(Default)]
struct State {
    /// Finished steps in order: (name, whether the cache already held it).
    finished: Vec<(String, bool)>,
    /// Running steps and the outputs they are writing.
    running: Vec<(String, Vec<PathBuf>)>,
    /// Process ids of the running commands, each the leader of its process group.
    commands: Vec<u32>,
}

static STATE: Mutex<State> = Mutex::new(State {
    finished: Vec::new(),
    running: Vec::new(),
    commands: Vec::new(),
});

fn state() -> MutexGuard<'static, State> {
    // A panicking step must not keep an interruption from being reported.
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A step the cache held.
pub(crate) fn cached(step: &str) {
    state().finished.push((step.to_string(), true));
}

/// A running step: forgotten when dropped (it failed, or [`Running::finished`]).
pub(crate) struct Running(String);

impl Running {
    pub(crate) fn start(step: &str, outputs: &[PathBuf]) -> Running {
        state().running.push((step.to_string(), outputs.to_vec()));
        Running(step.to_string())
    }

    /// The step ran to the end and the cache holds it.
    pub(crate) fn finished(self) {
        state().finished.push((self.0.clone(), false));
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        state().running.retain(|(s, _)| *s != self.0);
    }
}

/// A command started in its own process group (`pid` leads it), until dropped.
pub(crate) struct Command(u32);

impl Command {
    pub(crate) fn started(pid: u32) -> Command {
        state().commands.push(pid);
        Command(pid)
    }
}

impl Drop for Command {
    fn drop(&mut self) {
        state().commands.retain(|p| *p != self.0);
    }
}

/// Stops the run's commands (SIGTERM to their process groups), removes what the steps
/// cut short had written, and returns what to tell the user. For the signal handler,
/// which exits afterwards.
pub fn interrupt() -> String {
    let s = state();
    for pid in &s.commands {
        if let Some(pid) = rustix::process::Pid::from_raw(*pid as i32) {
            // Gone already is fine: there is nothing left to stop.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
        }
    }
    for (_, outputs) in &s.running {
        for p in outputs {
            let _ = if p.is_dir() {
                std::fs::remove_dir_all(p)
            } else {
                std::fs::remove_file(p)
            };
        }
    }
    report(&s)
}

fn report(s: &State) -> String {
    let names = |v: Vec<&str>| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    let running: Vec<&str> = s.running.iter().map(|(n, _)| n.as_str()).collect();
    let kept: Vec<&str> = s.finished.iter().map(|(n, _)| n.as_str()).collect();
    format!(
        "kfdo optimize: interrupted during {}: its commands were stopped and what it had \
         written removed\n  finished and kept in the cache (a rerun skips them): {}\n  no \
         summary or report was written; rerun the same command to go on",
        names(running),
        names(kept)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_names_the_interrupted_and_the_kept_steps() {
        let s = State {
            finished: vec![
                ("build baseline".into(), true),
                ("profile kfdo".into(), false),
            ],
            running: vec![("build autofdo".into(), Vec::new())],
            commands: Vec::new(),
        };
        let r = report(&s);
        assert!(
            r.contains("interrupted during build autofdo:")
                && r.contains(
                    "kept in the cache (a rerun skips them): build baseline, profile kfdo"
                ),
            "{r}"
        );
        assert!(report(&State::default()).contains("interrupted during none"));
    }
}
