//! A real S3 store for a test: SeaweedFS (`scripts/install-seaweedfs.sh` builds it),
//! started by `scripts/seaweedfs.sh` on free ports in a temporary folder and stopped
//! when the [`SeaweedFs`] is dropped (also when the test fails).
//!
//! ```no_run
//! # fn run(kfdo: &mut std::process::Command) {
//! let Some(store) = kfdo_testkit::seaweedfs::SeaweedFs::start(&["kfdo"]) else {
//!     return; // skipped, and said why
//! };
//! kfdo.envs(store.vars()); // AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...
//! # }
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::{require, require_tools, required};

/// A running SeaweedFS with an S3 endpoint on 127.0.0.1.
pub struct SeaweedFs {
    dir: tempfile::TempDir,
    port: u16,
    vars: Vec<(String, String)>,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where `scripts/install-seaweedfs.sh` puts `weed` (the script's own rule).
fn weed_binary() -> Option<PathBuf> {
    let script = std::fs::read_to_string(repo().join("scripts/install-seaweedfs.sh")).ok()?;
    let version = script
        .lines()
        .find_map(|l| l.strip_prefix("SEAWEEDFS_VERSION="))?
        .trim();
    let dir = match std::env::var_os("KFDO_SEAWEEDFS_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/kfdo/seaweedfs"),
    };
    Some(dir.join(format!("weed-{version}")))
}

/// Whether every port a store on `base` takes (`base..base+3` and 10000 above each)
/// can be bound now.
fn ports_free(base: u16) -> bool {
    (0..4u16).all(|i| {
        [base + i, base + 10000 + i]
            .iter()
            .all(|&p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok())
    })
}

/// A base port whose eight ports are free: bases spread by process and call, so that
/// tests starting stores at the same time (threads, test binaries) try different ones.
/// The gRPC ports stay below Linux's ephemeral range (32768 up).
fn free_base() -> Option<u16> {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let seed = std::process::id()
        .wrapping_mul(2_654_435_761)
        .wrapping_add(CALLS.fetch_add(1, Ordering::Relaxed).wrapping_mul(40_503));
    (0..200u32)
        .map(|i| 12_000 + ((seed.wrapping_add(i.wrapping_mul(7_919)) % 1_300) * 8) as u16)
        .find(|&b| ports_free(b))
}

impl SeaweedFs {
    /// A store with these buckets (the script's default, `kfdo`, when empty). None when
    /// it cannot start and tests may skip (the skip is reported); where tests must run
    /// ([`required`]) the test fails instead, and a missing `weed` is built first.
    pub fn start(buckets: &[&str]) -> Option<SeaweedFs> {
        if !require_tools(&["bash", "curl"]) {
            return None;
        }
        let built = weed_binary().is_some_and(|w| w.is_file());
        if !built && !required() {
            require(
                false,
                "SeaweedFS (`weed`) is not built",
                "bash scripts/install-seaweedfs.sh builds it, a few minutes once",
            );
            return None;
        }
        let mut last = String::new();
        // A port taken between the check and the start (another test's store) makes the
        // script refuse: try other ports.
        for _ in 0..3 {
            let Some(port) = free_base() else {
                last = "no free ports between 12000 and 32400".into();
                continue;
            };
            let dir = tempfile::Builder::new()
                .prefix("kfdo-seaweedfs-")
                .tempdir()
                .unwrap_or_else(|e| panic!("cannot make a temporary folder: {e}"));
            let out = Command::new("bash")
                .arg(repo().join("scripts/seaweedfs.sh"))
                .arg("start")
                .arg(dir.path())
                .arg(port.to_string())
                .args(buckets)
                .stdin(Stdio::null())
                .output()
                .unwrap_or_else(|e| panic!("cannot run scripts/seaweedfs.sh: {e}"));
            // From here on the guard stops whatever the script started.
            let mut store = SeaweedFs {
                dir,
                port,
                vars: Vec::new(),
            };
            if !out.status.success() {
                last = format!(
                    "scripts/seaweedfs.sh start on port {port} failed ({}): {}{}",
                    out.status,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                continue;
            }
            let env = std::fs::read_to_string(store.dir.path().join("env"))
                .unwrap_or_else(|e| panic!("seaweedfs.sh wrote no env file: {e}"));
            store.vars = env
                .lines()
                .filter_map(|l| l.trim().strip_prefix("export "))
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            return Some(store);
        }
        // Fails the test where tests must run; otherwise a reported skip.
        require(false, "SeaweedFS did not start", &last);
        None
    }

    /// The S3 endpoint, `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The variables a client needs: `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`.
    pub fn vars(&self) -> Vec<(String, String)> {
        self.vars.clone()
    }

    /// One of [`SeaweedFs::vars`].
    pub fn var(&self, name: &str) -> Option<String> {
        self.vars
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }

    /// The store's folder: its data, `weed.log` and `env`.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SeaweedFs {
    fn drop(&mut self) {
        // No panic here: this may run while the test is already unwinding.
        let stopped = Command::new("bash")
            .arg(repo().join("scripts/seaweedfs.sh"))
            .arg("stop")
            .arg(self.dir.path())
            .stdin(Stdio::null())
            .output();
        if let Err(e) = stopped {
            eprintln!(
                "cannot stop the SeaweedFS in {}: {e}",
                self.dir.path().display()
            );
        }
    }
}
