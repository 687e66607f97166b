//! `kfdo collect run`: the long-lived sampler of a host (windows of perf, host files in
//! a bounded spool, uploads to an object store); `kfdo collect status`: what it did.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kfdo_collect::{run as run_collector, CollectConfig, Scope, Status};
use kfdo_objstore::S3Url;
use kfdo_record::hardware::{Capabilities, Method};

use crate::output::Global;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Record this machine in windows, spool each window's host files, upload them.
    Run(Box<RunArgs>),
    /// What a collector recorded, spooled, uploaded and dropped, and why.
    Status(StatusArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// The spool: host files waiting for upload, status.json, the lock (one collector
    /// per spool).
    #[arg(long, value_name = "DIR")]
    spool: PathBuf,
    /// Upload to this S3 prefix (s3://bucket/prefix/); endpoint and credentials from
    /// AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION. Without
    /// it, files stay in the spool.
    #[arg(long, value_name = "s3://BUCKET/PREFIX/")]
    upload: Option<String>,
    /// The host name written in every file (default: this machine's hostname).
    #[arg(long)]
    host: Option<String>,
    /// The host class written in every file (merges weigh classes).
    #[arg(long, default_value = "")]
    host_class: String,
    /// How long each window records.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    window: Duration,
    /// How often a window starts.
    #[arg(long, default_value = "10m", value_parser = humantime::parse_duration)]
    every: Duration,
    /// Stop after N windows, once the spool is uploaded (or --drain-timeout passed);
    /// 0 uploads what the spool holds and stops. Default: run until stopped.
    #[arg(long, value_name = "N")]
    windows: Option<u64>,
    /// With --windows: how long to keep trying to upload at the end.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    drain_timeout: Duration,
    /// auto (hardware branch stacks where this machine has them, else ip), or one of
    /// lbr, brs, lbrv2, brbe, ip.
    #[arg(long, default_value = "auto")]
    method: String,
    /// Events per sample (cpu-clock: nanoseconds). Default: 1000000 for ip (1 kHz per
    /// CPU), 500009 for branch stacks.
    #[arg(long)]
    period: Option<u64>,
    /// Only the processes of this cgroup (perf -G; relative to the cgroup mount).
    #[arg(long, value_name = "NAME")]
    cgroup: Option<String>,
    /// Only these binaries (path or file name; repeat). Default: every binary with samples.
    #[arg(long, value_name = "PATH-or-NAME")]
    program: Vec<String>,
    /// The running kernel's ELF (vmlinux with symbols), for the kernel's file. Default:
    /// looked for in /usr/lib/debug, /boot and the build tree.
    #[arg(long, value_name = "VMLINUX")]
    vmlinux: Option<PathBuf>,
    /// A binary with fewer samples in a window gets no file.
    #[arg(long, default_value_t = 10)]
    min_samples: u64,
    /// Binaries larger than this (bytes; K, M, G suffixes) get no file: converting one
    /// decodes its code whole, so the collector's peak memory follows the largest binary.
    #[arg(long, default_value = "256M", value_parser = parse_size)]
    max_binary: u64,
    /// The spool's size cap (bytes; K, M, G suffixes are powers of 1024): the oldest
    /// files are dropped first.
    #[arg(long, default_value = "256M", value_parser = parse_size)]
    spool_max: u64,
    /// CPU budget in percent of one CPU over the run (the collector and its perf):
    /// windows are shortened or skipped to stay under it.
    #[arg(long, default_value_t = 5.0)]
    max_cpu: f64,
}

#[derive(clap::Args)]
struct StatusArgs {
    #[arg(long, value_name = "DIR")]
    spool: PathBuf,
    /// The status file as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args, g: &Global) -> anyhow::Result<i32> {
    match a.command {
        Sub::Run(r) => run_collect(*r, g),
        Sub::Status(s) => status(s),
    }
}

fn run_collect(a: RunArgs, g: &Global) -> anyhow::Result<i32> {
    let host = match a.host {
        Some(h) => h,
        None => hostname()?,
    };
    let mut cfg = CollectConfig::new(&a.spool, host);
    cfg.upload = a.upload.as_deref().map(S3Url::parse).transpose()?;
    cfg.host_class = a.host_class;
    cfg.window = a.window;
    cfg.every = a.every;
    cfg.windows = a.windows;
    cfg.drain_timeout = a.drain_timeout;
    cfg.programs = a.program;
    cfg.vmlinux = a.vmlinux;
    cfg.min_samples = a.min_samples;
    cfg.spool_max_bytes = a.spool_max;
    cfg.max_binary_bytes = a.max_binary;
    cfg.max_cpu_percent = a.max_cpu;
    if let Some(cg) = a.cgroup {
        cfg.scope = Scope::Cgroup(cg);
    }
    let caps = Capabilities::detect();
    cfg.method = choose_method(&a.method, &caps, g)?;
    cfg.period = a.period.unwrap_or(if cfg.method == Method::Ip {
        1_000_000
    } else {
        500_009
    });
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    let finished = run_collector(&cfg, caps, &stop, &mut |line| {
        g.info(format!("kfdo collect: {line}"))
    })?;
    let s = &finished.status;
    g.info(format!(
        "kfdo collect: {} window(s) recorded ({} skipped, {} shortened for --max-cpu), {} file(s) \
         uploaded, {} left in the spool; CPU {:.2}% of one CPU over {:.0} s; status: {}",
        s.windows.recorded,
        s.windows.skipped_cpu,
        s.windows.shortened,
        s.files.uploaded,
        finished.left_in_spool,
        s.cost.cpu_percent,
        s.cost.wall_seconds,
        Status::path(&cfg.spool).display()
    ));
    Ok(0)
}

/// `auto`: the hardware's branch stacks where they work, else IP samples (said why).
fn choose_method(name: &str, caps: &Capabilities, g: &Global) -> anyhow::Result<Method> {
    if name != "auto" {
        let m: Method = name
            .parse()
            .map_err(|e: String| anyhow::anyhow!("--method {name}: {e}"))?;
        if m.is_hardware_branch() {
            caps.usable(m)
                .map_err(|why| anyhow::anyhow!("--method {name}: {why}"))?;
        }
        return Ok(m);
    }
    match caps.hardware_candidate() {
        Some(m) if caps.usable(m).is_ok() => Ok(m),
        _ => {
            g.info(format!(
                "kfdo collect: no hardware branch sampling ({}): IP-only cpu-clock samples",
                caps.why_no_hardware()
            ));
            Ok(Method::Ip)
        }
    }
}

fn status(a: StatusArgs) -> anyhow::Result<i32> {
    let Some(s) = Status::load(&a.spool)? else {
        anyhow::bail!(
            "{}: no status file: no kfdo collect has run with this --spool",
            Status::path(&a.spool).display()
        );
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
        return Ok(0);
    }
    let running = s.state != "stopped" && is_alive(s.pid);
    println!(
        "host {} (class {:?}), {}, upload to {}",
        s.host,
        s.host_class,
        if running {
            format!("running (pid {}): {}", s.pid, s.state)
        } else {
            "not running".to_string()
        },
        if s.upload.is_empty() {
            "nowhere (spool only)"
        } else {
            &s.upload
        }
    );
    let w = &s.windows;
    println!(
        "windows: {} recorded ({} samples), {} shortened and {} skipped for --max-cpu, {} failed, clock went back {} time(s)",
        w.recorded, w.samples, w.shortened, w.skipped_cpu, w.failed, w.clock_went_back
    );
    let f = &s.files;
    println!(
        "files: {} spooled, {} uploaded ({} bytes), {} waiting ({} bytes); dropped: {} spool full, {} unreadable; {} binaries below --min-samples, {} not aggregated",
        f.spooled, f.uploaded, f.uploaded_bytes, f.waiting, f.waiting_bytes,
        f.dropped_spool_full, f.dropped_unreadable, f.below_min_samples, f.not_aggregated
    );
    if !s.store.last_error.is_empty() {
        println!(
            "store: {} failure(s) in a row, last: {}",
            s.store.consecutive_failures, s.store.last_error
        );
    }
    let c = &s.cost;
    println!(
        "cost: {:.2}% of one CPU ({:.1} s CPU over {:.0} s; budget {}%), peak memory {} KiB (perf {} KiB)",
        c.cpu_percent, c.cpu_seconds, c.wall_seconds, c.max_cpu_percent, c.peak_rss_kib, c.perf_peak_rss_kib
    );
    println!("recent:");
    for e in s.events.iter().rev().take(10).rev() {
        println!(
            "  {}  {}",
            humantime::format_rfc3339_seconds(
                std::time::UNIX_EPOCH + Duration::from_secs(e.unix_s)
            ),
            e.what
        );
    }
    Ok(0)
}

fn is_alive(pid: u32) -> bool {
    pid != 0 && std::path::Path::new(&format!("/proc/{pid}")).exists()
}

fn hostname() -> anyhow::Result<String> {
    let h = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map_err(|e| anyhow::anyhow!("/proc/sys/kernel/hostname: {e}; give --host"))?;
    Ok(h.trim().to_string())
}

/// `256M`, `1G`, `4096`: bytes, with power-of-1024 suffixes.
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s
        .trim()
        .trim_end_matches(['B', 'b'])
        .trim_end_matches(['i']);
    let (num, mult) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("{s:?}: give bytes, optionally with K, M or G (256M)"))
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("256M"), Ok(256 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").is_err());
    }
}
