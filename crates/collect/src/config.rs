//! [`CollectConfig`]: what one collector records, where it spools and uploads, and
//! within which budget. Checked once, before anything is recorded.

use std::path::PathBuf;
use std::time::Duration;

use kfdo_objstore::S3Url;
use kfdo_record::hardware::Method;

use crate::error::CollectError;

/// Which code is recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every process and the kernel.
    System,
    /// The processes of one cgroup (perf `-G`, relative to the cgroup mount), and the
    /// kernel code they run.
    Cgroup(String),
}

#[derive(Clone, Debug)]
pub struct CollectConfig {
    /// The spool directory: host files waiting for upload, the status file, the lock.
    pub spool: PathBuf,
    /// Where host files go (`s3://bucket/prefix/`); None: they stay in the spool.
    pub upload: Option<S3Url>,
    /// The `host` and `host_class` columns of every file written.
    pub host: String,
    pub host_class: String,
    pub scope: Scope,
    /// Only binaries whose path or file name is one of these (empty: every binary with
    /// samples).
    pub programs: Vec<String>,
    /// How branch samples are taken: a hardware method, or `Method::Ip` (cpu-clock).
    pub method: Method,
    /// The sampling period: events per sample (for cpu-clock, nanoseconds).
    pub period: u64,
    /// The kernel's ELF with symbols, for the kernel's own file (`[kernel.kallsyms]`);
    /// None: the running kernel's is looked for where distributions put it.
    pub vmlinux: Option<PathBuf>,
    /// How long one window records, and how often a window starts.
    pub window: Duration,
    pub every: Duration,
    /// Stop after this many windows (None: until stopped), once the spool is uploaded or
    /// `drain_timeout` has passed.
    pub windows: Option<u64>,
    pub drain_timeout: Duration,
    /// A binary with fewer samples in a window gets no file for it (too little to be
    /// worth a file; counted in the status).
    pub min_samples: u64,
    /// Binaries whose file is larger get no file (converting decodes the binary's code
    /// whole, so the collector's peak memory follows the largest binary it converts).
    pub max_binary_bytes: u64,
    /// The spool's size cap in bytes: when a new file would pass it, the oldest files
    /// are dropped first.
    pub spool_max_bytes: u64,
    /// The collector's CPU budget, percent of one CPU over its whole run.
    pub max_cpu_percent: f64,
}

impl CollectConfig {
    pub fn new(spool: impl Into<PathBuf>, host: impl Into<String>) -> CollectConfig {
        CollectConfig {
            spool: spool.into(),
            upload: None,
            host: host.into(),
            host_class: String::new(),
            scope: Scope::System,
            programs: Vec::new(),
            method: Method::Ip,
            period: 1_000_000,
            vmlinux: None,
            window: Duration::from_secs(10),
            every: Duration::from_secs(600),
            windows: None,
            drain_timeout: Duration::from_secs(60),
            min_samples: 10,
            max_binary_bytes: 256 << 20,
            spool_max_bytes: 256 << 20,
            max_cpu_percent: 5.0,
        }
    }

    /// Refuses settings that cannot work, before recording starts.
    pub fn check(&self) -> Result<(), CollectError> {
        let bad = |s: String| Err(CollectError::Config(s));
        if self.host.is_empty() || self.host.contains('/') {
            return bad(format!(
                "--host {:?}: a host name must be non-empty and hold no '/': it names the \
                 host's folder in the store",
                self.host
            ));
        }
        if self.window.is_zero() {
            return bad("--window must be longer than zero".into());
        }
        if self.window > self.every {
            return bad(format!(
                "--window {} is longer than --every {}: a window must fit in its period",
                humantime::format_duration(self.window),
                humantime::format_duration(self.every)
            ));
        }
        if !(self.max_cpu_percent > 0.0 && self.max_cpu_percent <= 100.0 * 1024.0) {
            return bad(format!(
                "--max-cpu {}: give a share of one CPU in percent, above 0",
                self.max_cpu_percent
            ));
        }
        if self.period == 0 {
            return bad("--period must be at least 1".into());
        }
        if matches!(self.method, Method::Emulated | Method::Spe) {
            return bad(format!(
                "--method {}: kfdo collect records the running machine with perf; use a \
                 hardware branch method (lbr, brs, lbrv2, brbe) or ip",
                self.method.name()
            ));
        }
        if self.spool_max_bytes < 4 << 10 {
            return bad(format!(
                "--spool-max {} bytes: give at least 4 KiB (a host file must fit)",
                self.spool_max_bytes
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_window_longer_than_its_period() {
        let mut c = CollectConfig::new("/tmp/s", "h1");
        c.window = Duration::from_secs(20);
        c.every = Duration::from_secs(10);
        let e = c.check().unwrap_err().to_string();
        assert!(e.contains("longer than --every"), "{e}");
    }

    #[test]
    fn refuses_a_host_name_with_a_slash() {
        let c = CollectConfig::new("/tmp/s", "a/b");
        assert!(c.check().unwrap_err().to_string().contains("no '/'"));
    }

    #[test]
    fn defaults_are_accepted() {
        CollectConfig::new("/tmp/s", "h1").check().unwrap();
    }
}
