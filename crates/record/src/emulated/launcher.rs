//! Counting a program wherever a shell command runs it.
//!
//! QEMU user mode follows `fork` but not `exec`, so a benchmark command such as
//! `{bin} -q -t corpus/* && {bin} -q -d out | wc -c` cannot be counted by running the
//! shell under QEMU: the shell would be counted and the program, which it execs, would
//! run natively. Instead the shell runs natively and `{bin}` is this launcher: a small
//! `sh` script that execs the real program under QEMU with kfdo's plugin, counting,
//! each invocation into a capture stream of its own. [`Launcher::counts`] then reads
//! every stream and sums the counts (instructions, branches, modelled L1i / iTLB misses
//! of each process the program ran as, including the ones it forked).
//!
//! Every invocation starts a fresh process with a cold cache model, exactly as running
//! the invocations one by one under `kfdo record --counters` would; the sum of their
//! counts is therefore the same as the sum of separate recordings.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::emulated::capture::Capture;
use crate::emulated::counters::{CacheModel, CountersFile, USER_SOURCE};
use crate::emulated::guest_program::resolve_program;
use crate::emulated::plugin::PluginFile;
use crate::emulated::plugin_args::PluginArgs;
use crate::emulated::stream::{Stream, Tail};
use crate::error::Error;

/// A launcher script for one program, and the streams its invocations write.
pub struct Launcher {
    work: tempfile::TempDir,
    script: PathBuf,
    streams: PathBuf,
    program: String,
    cache: CacheModel,
    _plugin: PluginFile,
}

/// The counts of every invocation so far.
#[derive(Debug, Clone)]
pub struct LaunchedCounts {
    /// How many times the program was started through the launcher.
    pub invocations: usize,
    /// Summed over invocations, in the form `kfdo record --counters` writes.
    pub file: CountersFile,
    /// exec calls inside the program (their programs ran natively, uncounted).
    pub execs: usize,
}

/// `s` quoted for `sh`: single quotes, with each `'` written `'\''`.
fn sh_quote(s: &[u8]) -> Vec<u8> {
    let mut out = vec![b'\''];
    for &c in s {
        if c == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(c);
        }
    }
    out.push(b'\'');
    out
}

impl Launcher {
    /// Writes the plugin and the launcher script for `program` into a private directory
    /// (under `work_dir`, or the system's temporary directory).
    pub fn new(
        program: &Path,
        cache: CacheModel,
        qemu: Option<&Path>,
        work_dir: Option<&Path>,
    ) -> Result<Launcher, Error> {
        cache.validate().map_err(Error::Config)?;
        let launch = resolve_program(program.as_os_str(), &[])?;
        let work = match work_dir {
            Some(d) => tempfile::Builder::new().prefix("kfdo-vlbr-").tempdir_in(d),
            None => tempfile::Builder::new().prefix("kfdo-vlbr-").tempdir(),
        }
        .map_err(|e| Error::io("cannot create a temporary directory for the launcher", e))?;
        if work.path().as_os_str().as_bytes().contains(&b',') {
            // The stream's name is put into QEMU's -plugin option by the shell, which
            // cannot escape QEMU's ',' without bash.
            return Err(Error::Config(format!(
                "the temporary directory {} has a ',' in its path, which QEMU's option syntax \
                 cannot take from a launcher; set TMPDIR to a directory without one",
                work.path().display()
            )));
        }
        let plugin = PluginFile::write_into(work.path())
            .map_err(|e| Error::io("cannot write the QEMU plugin to a temporary file", e))?;
        let streams = work.path().join("streams");
        std::fs::create_dir(&streams)
            .map_err(|e| Error::io("cannot create the launcher's stream directory", e))?;

        // No samples, only counts: one sample per 2^62 taken branches (none, in
        // practice) with one record, as the single-program counting run does.
        let popt = PluginArgs::new(plugin.path())
            .number("period", 1 << 62)
            .number("depth", 1)
            .path("exe", &launch.exe)
            .counters(&cache);
        let qemu: OsString = qemu
            .map(|q| q.as_os_str().to_owned())
            .unwrap_or_else(|| crate::emulated::guest_arch::qemu_user(launch.arch).into());
        let mut text = Vec::new();
        text.extend_from_slice(
            b"#!/bin/sh\n# kfdo: runs the program under QEMU with kfdo's plugin, counting.\n",
        );
        text.extend_from_slice(b"f=$(mktemp ");
        text.extend_from_slice(&sh_quote(streams.join("run.XXXXXX").as_os_str().as_bytes()));
        text.extend_from_slice(b") || exit 127\nexec ");
        text.extend_from_slice(&sh_quote(qemu.as_bytes()));
        for a in crate::emulated::guest_arch::sysroot_args(launch.arch, &[]) {
            text.push(b' ');
            text.extend_from_slice(&sh_quote(a.as_os_str().as_bytes()));
        }
        text.extend_from_slice(b" -plugin ");
        text.extend_from_slice(&sh_quote(popt.into_os_string().as_bytes()));
        text.extend_from_slice(b"\",out=$f\" -0 ");
        text.extend_from_slice(&sh_quote(program.as_os_str().as_bytes()));
        text.push(b' ');
        text.extend_from_slice(&sh_quote(launch.exe.as_os_str().as_bytes()));
        for a in &launch.args {
            text.push(b' ');
            text.extend_from_slice(&sh_quote(a.as_bytes()));
        }
        text.extend_from_slice(b" \"$@\"\n");
        let script = work.path().join("launch");
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&script)?;
            f.write_all(&text)?;
            f.set_permissions(std::fs::Permissions::from_mode(0o755))
        };
        write().map_err(|e| Error::io("cannot write the launcher script", e))?;
        Ok(Launcher {
            work,
            script,
            streams,
            program: launch.display,
            cache,
            _plugin: plugin,
        })
    }

    /// The launcher: run it wherever the program would run, with the program's arguments.
    pub fn path(&self) -> &Path {
        &self.script
    }

    /// Reads every invocation's stream and sums the counts. An invocation whose stream
    /// is incomplete (killed, or the disk filled) is an error: its counts would be short.
    pub fn counts(&self) -> Result<LaunchedCounts, Error> {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&self.streams)
            .map_err(|e| Error::io("cannot list the launcher's streams", e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        paths.sort();
        let mut counts = Vec::new();
        let mut invocations = 0;
        let mut execs = 0;
        for path in &paths {
            let data = crate::emulated::stream::map_capture(path);
            if data.is_empty() {
                // mktemp ran but QEMU never wrote its header: it could not start.
                return Err(Error::Program {
                    program: self.program.clone(),
                    what: format!(
                        "QEMU did not start it through the launcher (its capture {} is empty; \
                         see the command's stderr)",
                        path.display()
                    ),
                });
            }
            let stream = Stream::parse(path, &data)?;
            let cap = Capture::collect(&stream);
            if !cap.ended || cap.write_failed || matches!(cap.tail, Tail::Truncated { .. }) {
                return Err(Error::Output {
                    path: path.clone(),
                    what: format!(
                        "the capture of one run of {} is incomplete (the program was killed, \
                         or the disk is full): its counts would be short",
                        self.program
                    ),
                });
            }
            invocations += 1;
            execs += cap.execs;
            counts.extend(cap.counters);
        }
        Ok(LaunchedCounts {
            invocations,
            file: CountersFile::from_processes(USER_SOURCE.into(), self.cache, &counts),
            execs,
        })
    }

    /// The private directory (plugin, script, streams); removed on drop.
    pub fn dir(&self) -> &Path {
        self.work.path()
    }
}

#[cfg(test)]
mod tests {
    use super::sh_quote;

    #[test]
    fn quoting_survives_single_quotes() {
        assert_eq!(sh_quote(b"a b"), b"'a b'");
        assert_eq!(sh_quote(b"it's"), b"'it'\\''s'");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "printf %s {}",
                String::from_utf8(sh_quote(b"x'y $HOME \"z\"")).unwrap()
            ))
            .output()
            .unwrap();
        assert_eq!(out.stdout, b"x'y $HOME \"z\"");
    }
}
