//! The machine a comparison ran on (CPU, kernel, compilers, frequency
//! policy) and the checks that warn about a noisy setup: frequency scaling,
//! turbo, other load.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};

use crate::warning::Warning;

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Environment {
    pub cpu_model: String,
    pub logical_cpus: usize,
    pub kernel: String,
    pub os: String,
    pub memory_gib: f64,
    /// scaling_governor of each distinct value -> how many CPUs use it;
    /// empty when the kernel exposes no cpufreq (common in virtual machines).
    pub governors: BTreeMap<String, usize>,
    /// "1" when turbo / boost is on, "0" off, absent if unknown.
    pub boost: Option<String>,
    /// 1-minute load average when the comparison started.
    pub load_avg_1m: f64,
    /// First line of `--version` of each compiler found (clang-19, clang, gcc, cc).
    pub compilers: BTreeMap<String, String>,
    /// CC, CFLAGS, ... as set in the environment of the comparison.
    pub build_env: BTreeMap<String, String>,
    pub kfdo_version: String,
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn first_line_of(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}

pub fn load_avg_1m() -> f64 {
    read("/proc/loadavg")
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(0.0)
}

pub fn logical_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Captures the environment now. `kfdo_version` is the caller's version.
pub fn capture(kfdo_version: &str) -> Environment {
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name") || l.starts_with("Model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let kernel = read("/proc/sys/kernel/osrelease").unwrap_or_default();
    let kernel_version = read("/proc/sys/kernel/version").unwrap_or_default();
    let os = read("/etc/os-release")
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("PRETTY_NAME="))
                .map(|l| l["PRETTY_NAME=".len()..].trim_matches('"').to_string())
        })
        .unwrap_or_default();
    let memory_gib = read("/proc/meminfo")
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| {
                    l.split_whitespace()
                        .nth(1)
                        .and_then(|k| k.parse::<f64>().ok())
                })
        })
        .map(|kib| (kib / 1024.0 / 1024.0 * 10.0).round() / 10.0)
        .unwrap_or(0.0);
    let mut governors = BTreeMap::new();
    if let Ok(rd) = std::fs::read_dir("/sys/devices/system/cpu") {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with("cpu")
                && name[3..].chars().all(|c| c.is_ascii_digit())
                && name.len() > 3
            {
                if let Some(g) = read(&format!("{}/cpufreq/scaling_governor", e.path().display())) {
                    *governors.entry(g).or_insert(0) += 1;
                }
            }
        }
    }
    let boost = read("/sys/devices/system/cpu/cpufreq/boost").or_else(|| {
        read("/sys/devices/system/cpu/intel_pstate/no_turbo").map(|nt| {
            if nt == "1" {
                "0".into()
            } else {
                "1".into()
            }
        })
    });
    let mut compilers = BTreeMap::new();
    for cc in ["clang-19", "clang", "gcc", "cc"] {
        if let Some(v) = first_line_of(cc, &["--version"]) {
            compilers.insert(cc.to_string(), v);
        }
    }
    let mut build_env = BTreeMap::new();
    for var in [
        "CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "KCFLAGS", "LLVM",
    ] {
        if let Ok(v) = std::env::var(var) {
            build_env.insert(var.to_string(), v);
        }
    }
    Environment {
        cpu_model,
        logical_cpus: logical_cpus(),
        kernel: if kernel_version.is_empty() {
            kernel
        } else {
            format!("{kernel} {kernel_version}")
        },
        os,
        memory_gib,
        governors,
        boost,
        load_avg_1m: load_avg_1m(),
        compilers,
        build_env,
        kfdo_version: kfdo_version.to_string(),
    }
}

/// Busy and total jiffies of all CPUs from /proc/stat, for measuring how
/// much *other* work ran while the benchmark did.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuTimes {
    pub busy_s: f64,
    pub total_s: f64,
}

pub fn cpu_times() -> Option<CpuTimes> {
    let s = read("/proc/stat")?;
    let line = s.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() < 4 {
        return None;
    }
    // user nice system idle iowait irq softirq steal (guest is inside user)
    let idle = v[3] + v.get(4).copied().unwrap_or(0.0);
    let total: f64 = v.iter().take(8).sum();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let hz = if hz > 0.0 { hz } else { 100.0 };
    Some(CpuTimes {
        busy_s: (total - idle) / hz,
        total_s: total / hz,
    })
}

/// Warnings about the machine itself, each saying what to change.
pub fn setup_warnings(env: &Environment) -> Vec<Warning> {
    let mut w = Vec::new();
    let non_perf: usize = env
        .governors
        .iter()
        .filter(|(g, _)| g.as_str() != "performance")
        .map(|(_, n)| n)
        .sum();
    if non_perf > 0 {
        w.push(Warning::FrequencyScaling {
            cpus: non_perf,
            governors: env.governors.keys().cloned().collect(),
        });
    } else if env.governors.is_empty() {
        w.push(Warning::NoFrequencyControl);
    }
    if env.boost.as_deref() == Some("1") {
        w.push(Warning::Turbo);
    }
    let cpus = env.logical_cpus.max(1) as f64;
    if env.load_avg_1m > 0.5 * cpus {
        w.push(Warning::LoadAverage {
            load_avg_1m: env.load_avg_1m,
            cpus: env.logical_cpus,
        });
    }
    w
}

/// Warning when other processes used a noticeable share of the machine
/// during the runs: `busy` is the machine's busy CPU time over the window,
/// `ours` the CPU time of the benchmarked commands, `wall` the window.
pub fn other_load_warning(busy_s: f64, ours_s: f64, wall_s: f64, cpus: usize) -> Option<Warning> {
    if wall_s <= 0.0 {
        return None;
    }
    let other = (busy_s - ours_s).max(0.0);
    let share = other / (wall_s * cpus.max(1) as f64);
    (share > 0.10).then_some(Warning::OtherLoad {
        share_pct: share * 100.0,
        cpu_s: other,
        wall_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_reads_this_machine() {
        let e = capture("test");
        assert!(e.logical_cpus >= 1);
        assert!(!e.kernel.is_empty());
        assert!(e.memory_gib > 0.0);
        let t = cpu_times().unwrap();
        assert!(t.total_s >= t.busy_s && t.busy_s > 0.0);
    }

    #[test]
    fn warnings_say_what_to_do() {
        let mut e = Environment {
            logical_cpus: 2,
            load_avg_1m: 3.0,
            boost: Some("1".into()),
            ..Default::default()
        };
        e.governors.insert("powersave".into(), 2);
        let w: Vec<String> = setup_warnings(&e).iter().map(|w| w.to_string()).collect();
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("cpupower frequency-set -g performance"));
        assert!(w[1].contains("boost"));
        assert!(w[2].contains("load average was 3.00"));
        e.governors.clear();
        e.governors.insert("performance".into(), 2);
        e.boost = None;
        e.load_avg_1m = 0.1;
        assert!(setup_warnings(&e).is_empty());
        assert!(other_load_warning(10.0, 9.5, 10.0, 2).is_none());
        assert!(other_load_warning(15.0, 9.5, 10.0, 2)
            .unwrap()
            .to_string()
            .contains("28 %"));
    }
}
