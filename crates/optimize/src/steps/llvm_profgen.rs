//! llvm-profgen, the reference converter: `perf script` of a recording, then
//! llvm-profgen on it. Programs and kernels run the same step; the caller's key says
//! what it reads.

use std::path::Path;
use std::process::Command;

use super::cache::Key;
use super::engine::{tool_identity, Steps};
use super::exec::{Log, Stdout};
use super::profile::ProfileFile;

impl Steps {
    /// The step "profile llvm-profgen": `profgen`'s profile of `perf_data` against
    /// `binary` into `profiles/llvm-profgen.afdo`. `key` holds what the caller reads
    /// (binary, recording); the tools' versions are added here.
    pub fn llvm_profgen_step(
        &self,
        key: Key,
        profgen: &str,
        binary: &Path,
        perf_data: &Path,
        ip_only: bool,
        extra: &[&str],
    ) -> anyhow::Result<ProfileFile> {
        let out = self.dir("profiles/llvm-profgen.afdo");
        let script = self.dir("profiles/perf.script");
        let key = finish_key(key, &tool_identity(&[profgen, "perf"])?);
        self.file_step("profile llvm-profgen", key, out.clone(), |log| {
            run_llvm_profgen(
                log, profgen, binary, perf_data, ip_only, extra, &script, &out,
            )?;
            Ok(serde_json::json!({}))
        })
    }
}

/// The step's key: the caller's inputs, then the tools' versions (`tools`).
fn finish_key(key: Key, tools: &str) -> String {
    key.add("tools", tools).finish()
}

/// `perf script` of `perf_data` into `script`, then `profgen` on it into `out`: llvm's
/// reference conversion (`extra`: `--kernel`, `--leading-ip-only`). The script text is
/// large and only an intermediate: removed afterwards.
#[allow(clippy::too_many_arguments)]
fn run_llvm_profgen(
    log: &Log,
    profgen: &str,
    binary: &Path,
    perf_data: &Path,
    ip_only: bool,
    extra: &[&str],
    script: &Path,
    out: &Path,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(out.parent().unwrap())?;
    let fields = if ip_only { "ip" } else { "ip,brstack" };
    log.run(
        Command::new("perf")
            .args(["script", "-F", fields, "--show-mmap-events", "-i"])
            .arg(perf_data),
        Stdout::File(script),
    )?;
    log.run(
        Command::new(profgen)
            .args(extra)
            .arg("--binary")
            .arg(binary)
            .arg("--perfscript")
            .arg(script)
            .arg("-o")
            .arg(out),
        Stdout::Log,
    )?;
    let _ = std::fs::remove_file(script);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of the two llvm-profgen steps, as the code before the shared step
    /// computed them (`.add("tools", ..)` last): a changed key would rerun every
    /// cached conversion and the builds after it.
    #[test]
    fn the_keys_are_those_of_the_steps_before_they_were_shared() {
        let program = Key::new("profile llvm-profgen")
            .add("binary", "b1")
            .add("perf.data", "p1")
            .add("ip-only", "false");
        assert_eq!(
            finish_key(program, "llvm-profgen-19\nLLVM 19\nperf\nperf 6.1\n"),
            "604143564a813ff270e6e682bc13ef1b211708f607fd73371984ca4b04f17135"
        );
        let kernel = Key::new("kernel profile llvm-profgen")
            .add("vmlinux", "v1")
            .add("perf.data", "p1");
        assert_eq!(
            finish_key(kernel, "llvm-profgen-19\nperf\n"),
            "92375ffe28042763913403bdd4ef9c9e998fcc365463ab441c0aa2cfc2c9d449"
        );
    }
}
