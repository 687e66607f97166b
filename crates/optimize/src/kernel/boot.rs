//! Booting a kernel under QEMU (TCG) with the workload, through kfdo-record's system
//! mode: the guest's /init runs the workloads the command line names (`kfdo.run=`), each
//! marking the start and the end of its measured phase with kfdo's window markers, so that
//! samples and counters cover the workload and not the boot. What the guest printed is
//! read back: each workload's result line, its failure, or the kernel's last words.

use std::path::{Path, PathBuf};

use super::build::BuiltKernel;
use super::ctx::KernelCtx;

/// One workload's result line: `kfdo-workload: NAME ops=N seconds=S ops_per_s=X`, and for
/// the request/response workloads (tcp_rr, pipe, unix) ` p1_us=A p50_us=B p99_us=C
/// mean_us=D`: the round trips' latency percentiles.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadResult {
    pub name: String,
    pub ops: u64,
    pub seconds: f64,
    pub ops_per_s: f64,
    pub latency: Option<Latency>,
}

/// A request/response workload's round-trip latencies, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    pub p1_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub mean_us: f64,
}

impl Latency {
    /// Each statistic with its name (`p1`, `p50`, `p99`, `mean`).
    pub fn named(&self) -> [(&'static str, f64); 4] {
        [
            ("p1", self.p1_us),
            ("p50", self.p50_us),
            ("p99", self.p99_us),
            ("mean", self.mean_us),
        ]
    }
}

/// What a boot's console said.
#[derive(Debug, Clone, PartialEq)]
pub enum Console {
    /// Every workload ran and /init said `done`.
    Done(Vec<WorkloadResult>),
    /// A workload failed: its line.
    Failed(String),
    /// Neither: the guest did not get through (a panic, a hang, a missing driver).
    Unfinished,
}

const PREFIX: &str = "kfdo-workload: ";

/// Reads the console output of a boot.
pub fn parse_console(text: &str) -> Console {
    let mut results = Vec::new();
    for line in text.lines().map(|l| l.trim_end_matches('\r')) {
        // The line may follow kernel messages on the same console line.
        let Some(at) = line.find(PREFIX) else {
            continue;
        };
        let rest = &line[at + PREFIX.len()..];
        if rest.starts_with("FAILED") {
            return Console::Failed(rest.to_string());
        }
        if rest.trim() == "done" {
            return Console::Done(results);
        }
        if let Some(r) = parse_result(rest) {
            results.push(r);
        }
    }
    Console::Unfinished
}

fn parse_result(rest: &str) -> Option<WorkloadResult> {
    let mut words = rest.split_whitespace();
    let name = words.next()?.to_string();
    let mut r = WorkloadResult {
        name,
        ops: 0,
        seconds: f64::NAN,
        ops_per_s: f64::NAN,
        latency: None,
    };
    let mut lat = [f64::NAN; 4];
    for w in words {
        let (k, v) = w.split_once('=')?;
        match k {
            "ops" => r.ops = v.parse().ok()?,
            "seconds" => r.seconds = v.parse().ok()?,
            "ops_per_s" => r.ops_per_s = v.parse().ok()?,
            "p1_us" => lat[0] = v.parse().ok()?,
            "p50_us" => lat[1] = v.parse().ok()?,
            "p99_us" => lat[2] = v.parse().ok()?,
            "mean_us" => lat[3] = v.parse().ok()?,
            _ => {}
        }
    }
    if lat.iter().all(|x| x.is_finite()) {
        r.latency = Some(Latency {
            p1_us: lat[0],
            p50_us: lat[1],
            p99_us: lat[2],
            mean_us: lat[3],
        });
    }
    (r.seconds.is_finite() && r.ops_per_s.is_finite()).then_some(r)
}

/// The last `n` non-empty lines of a console, for error messages.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("  | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A boot to make.
pub struct Boot<'a> {
    pub kernel: &'a BuiltKernel,
    pub initrd: &'a Path,
    /// `NAME:ARG[,...]` for the guest's /init.
    pub run: &'a str,
    /// Where the guest's console goes.
    pub console: PathBuf,
    /// Record samples into this perf.data (else only count).
    pub perf_data: Option<PathBuf>,
    /// Sampling period when recording.
    pub period: u64,
    /// Emulated counters as JSON.
    pub counters: Option<PathBuf>,
    /// A gcov-instrumented kernel: /init zeroes its counts before the workloads and
    /// prints them after (`kfdo.gcov=1`, read by `gcov_pgo`).
    pub gcov: bool,
}

/// What a boot gave.
pub struct Booted {
    pub results: Vec<WorkloadResult>,
    pub outcome: kfdo_record::SystemOutcome,
    pub console: String,
}

impl KernelCtx {
    /// Boots `b.kernel` with the workload; an error names the kernel and quotes its console.
    pub fn boot(&self, b: &Boot<'_>) -> anyhow::Result<Booted> {
        let r = &self.recipe;
        let out = b
            .perf_data
            .clone()
            .unwrap_or_else(|| b.console.with_extension("perf.data"));
        let mut cfg = kfdo_record::SystemConfig::new(&b.kernel.image, &out);
        cfg.initrd = Some(b.initrd.to_path_buf());
        cfg.vmlinux = Some(b.kernel.vmlinux.clone());
        let insmod = self.insmod_args();
        let gcov = if b.gcov { "kfdo.gcov=1" } else { "" };
        cfg.append = Some(
            format!("kfdo.run={} {insmod} {gcov} {}", b.run, b.kernel.boot_args)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        );
        cfg.memory_mb = r.kernel.memory_mb;
        cfg.timeout_s = r.kernel.boot_timeout_s;
        cfg.filter = kfdo_record::Filter::Kernel;
        cfg.window = kfdo_record::Window::Markers;
        // Counting only: one sample per 2^62 taken branches (none) keeps the perf.data tiny.
        cfg.period = if b.perf_data.is_some() {
            b.period
        } else {
            1 << 62
        };
        // Without a perf.data wanted (a counting boot, or one for its console and gcov
        // data alone) an empty recording is what was asked for.
        cfg.samples_wanted = b.perf_data.is_some();
        cfg.depth = if b.perf_data.is_some() {
            kfdo_record::DEFAULT_DEPTH
        } else {
            1
        };
        cfg.counters = b.counters.clone();
        let console_file = std::fs::File::create(&b.console)?;
        if !r.workload.modules.is_empty() {
            cfg.modules = Some(kfdo_record::GuestModules {
                console: b.console.clone(),
                files: r
                    .workload
                    .modules
                    .iter()
                    .map(|m| b.kernel.dir.join(m))
                    .collect(),
            });
        }
        cfg.stdio = kfdo_record::StdioPlan {
            stdin: kfdo_record::StdStream::Null,
            stdout: kfdo_record::StdStream::file(console_file.try_clone()?),
            stderr: kfdo_record::StdStream::file(console_file),
        };
        let recorded = kfdo_record::record_system(&cfg);
        let console = std::fs::read_to_string(&b.console).unwrap_or_default();
        let what = format!(
            "booting the {} kernel with kfdo.run={} (console: {})",
            b.kernel.variant,
            b.run,
            b.console.display()
        );
        let outcome = recorded.map_err(|e| {
            // A workload that failed explains the recording's trouble (no window, say).
            let cause = match parse_console(&console) {
                Console::Failed(line) => format!("the workload failed in the guest: {line}"),
                _ => e.to_string(),
            };
            anyhow::anyhow!(
                "{what}: {cause}\nthe console's last lines:\n{}",
                tail(&console, 15)
            )
        })?;
        if b.perf_data.is_none() {
            let _ = std::fs::remove_file(&out);
        }
        match parse_console(&console) {
            Console::Done(results) => Ok(Booted {
                results,
                outcome,
                console,
            }),
            Console::Failed(line) => anyhow::bail!(
                "{what}: the workload failed in the guest: {line}\nthe console's last lines:\n{}",
                tail(&console, 15)
            ),
            Console::Unfinished => anyhow::bail!(
                "{what}: the guest did not finish its workloads{}; the console's last lines:\n{}",
                if outcome
                    .warnings
                    .iter()
                    .any(|w| w.contains("did not finish within"))
                {
                    format!(" within {} s", r.kernel.boot_timeout_s)
                } else {
                    String::new()
                },
                tail(&console, 15)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_failures_and_unfinished_boots_are_told_apart() {
        let ok = "[    0.5] Run /init as init process\n\
                  kfdo-workload: tcp_rr ops=2000 seconds=1.500000 ops_per_s=1333.3 p1_us=500.10 p50_us=700.25 p99_us=1900.00 mean_us=750.00\n\
                  [   2.1] random: crng\rkfdo-workload: pipe ops=100 seconds=0.25 ops_per_s=400\n\
                  kfdo-workload: done\n";
        assert_eq!(
            parse_console(ok),
            Console::Done(vec![
                WorkloadResult {
                    name: "tcp_rr".into(),
                    ops: 2000,
                    seconds: 1.5,
                    ops_per_s: 1333.3,
                    latency: Some(Latency {
                        p1_us: 500.1,
                        p50_us: 700.25,
                        p99_us: 1900.0,
                        mean_us: 750.0
                    }),
                },
                WorkloadResult {
                    name: "pipe".into(),
                    ops: 100,
                    seconds: 0.25,
                    ops_per_s: 400.0,
                    latency: None,
                },
            ])
        );
        assert_eq!(
            parse_console("kfdo-workload: FAILED tcp_rr: connect (Connection refused)\n"),
            Console::Failed("FAILED tcp_rr: connect (Connection refused)".into())
        );
        assert_eq!(
            parse_console("Kernel panic - not syncing: VFS: Unable to mount root fs\n"),
            Console::Unfinished
        );
        assert_eq!(tail("a\n\nb\nc\n", 2), "  | b\n  | c");
    }
}
