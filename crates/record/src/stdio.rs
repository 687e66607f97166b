//! Where a recorded program's standard streams go, chosen by the caller.
//!
//! A library that runs programs must not assume the process's own stdin, stdout and
//! stderr are the right ones: `kfdo record` passes its terminal through, a counted
//! benchmark run discards the output and keeps stderr for its error message, and
//! `kfdo optimize` sends everything into the step's log. Each caller says so here,
//! instead of pointing the whole process's descriptors elsewhere.

use std::fs::File;
use std::process::Stdio;
use std::sync::Arc;

/// One standard stream of a child process.
#[derive(Debug, Clone, Default)]
pub enum StdStream {
    /// This process's own stream.
    #[default]
    Inherit,
    /// `/dev/null`.
    Null,
    /// An open file (shared, so a plan can be cloned and reused).
    File(Arc<File>),
}

impl StdStream {
    pub fn file(f: File) -> StdStream {
        StdStream::File(Arc::new(f))
    }

    /// The `Stdio` for one spawn (a file is duplicated, so the plan stays usable).
    pub fn to_stdio(&self) -> std::io::Result<Stdio> {
        Ok(match self {
            StdStream::Inherit => Stdio::inherit(),
            StdStream::Null => Stdio::null(),
            StdStream::File(f) => Stdio::from(f.try_clone()?),
        })
    }
}

/// The three standard streams of a child process.
#[derive(Debug, Clone, Default)]
pub struct StdioPlan {
    pub stdin: StdStream,
    pub stdout: StdStream,
    pub stderr: StdStream,
}

impl StdioPlan {
    /// This process's own streams (the default).
    pub fn inherit() -> StdioPlan {
        StdioPlan::default()
    }

    /// Applies the plan to `cmd`.
    pub fn apply(&self, cmd: &mut std::process::Command) -> std::io::Result<()> {
        cmd.stdin(self.stdin.to_stdio()?)
            .stdout(self.stdout.to_stdio()?)
            .stderr(self.stderr.to_stdio()?);
        Ok(())
    }
}

/// How a recorded program starts: its working directory, environment additions and
/// standard streams.
#[derive(Debug, Clone, Default)]
pub struct ChildSetup {
    /// The working directory (default: this process's).
    pub cwd: Option<std::path::PathBuf>,
    /// Set on top of this process's environment.
    pub env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    pub stdio: StdioPlan,
}

impl ChildSetup {
    /// Applies the working directory and environment to `cmd` (not the streams).
    pub fn apply_place(&self, cmd: &mut std::process::Command) {
        if let Some(d) = &self.cwd {
            cmd.current_dir(d);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek};

    #[test]
    fn a_plan_sends_each_stream_where_it_says() {
        let mut out = tempfile::tempfile().unwrap();
        let mut err = tempfile::tempfile().unwrap();
        let plan = StdioPlan {
            stdin: StdStream::Null,
            stdout: StdStream::file(out.try_clone().unwrap()),
            stderr: StdStream::file(err.try_clone().unwrap()),
        };
        for _ in 0..2 {
            let mut cmd = std::process::Command::new("sh");
            cmd.args(["-c", "cat; echo out; echo err >&2"]);
            plan.apply(&mut cmd).unwrap();
            assert!(cmd.status().unwrap().success());
        }
        let read = |f: &mut File| {
            let mut s = String::new();
            f.rewind().unwrap();
            f.read_to_string(&mut s).unwrap();
            s
        };
        // stdin was /dev/null (cat read nothing); both runs appended to the same files.
        assert_eq!(read(&mut out), "out\nout\n");
        assert_eq!(read(&mut err), "err\nerr\n");
    }
}
