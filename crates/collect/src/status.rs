//! The status file (`SPOOL/status.json`): what the collector recorded, spooled,
//! uploaded and dropped, and why; read by `kfdo collect status` and by monitoring.
//! It also carries what must survive a restart: the host the spool belongs to, the next
//! window's sequence number and the last window's wall-clock start. Written whole under
//! a temporary name and renamed, so a reader never sees half of it.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::CollectError;

/// The status file's format version; a newer one is refused, not misread.
pub const STATUS_VERSION: u32 = 1;
/// How many recent events the file keeps.
const EVENTS_KEPT: usize = 50;

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Status {
    pub version: u32,
    pub host: String,
    pub host_class: String,
    /// `s3://...` or "" when files stay in the spool.
    pub upload: String,
    /// The collector's process while it runs; `state` says what it is doing.
    pub pid: u32,
    pub state: String,
    pub updated_unix_s: u64,
    /// The next window's sequence number, and the last window's wall-clock start.
    pub next_seq: u64,
    pub last_window_unix_ns: i64,
    pub windows: WindowCounts,
    pub files: FileCounts,
    pub store: StoreState,
    pub cost: Cost,
    /// The newest events last (recorded windows, drops and their reasons, store errors).
    pub events: Vec<Event>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct WindowCounts {
    pub recorded: u64,
    /// Shortened to stay within --max-cpu.
    pub shortened: u64,
    /// Skipped: over the CPU budget.
    pub skipped_cpu: u64,
    /// perf failed or recorded nothing.
    pub failed: u64,
    /// The wall clock stood before the previous window's start.
    pub clock_went_back: u64,
    pub samples: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FileCounts {
    pub spooled: u64,
    pub uploaded: u64,
    pub uploaded_bytes: u64,
    /// Dropped to keep the spool under its cap (oldest first).
    pub dropped_spool_full: u64,
    /// Found unreadable in the spool before upload (moved to SPOOL/bad).
    pub dropped_unreadable: u64,
    /// Binaries with fewer samples than --min-samples in a window.
    pub below_min_samples: u64,
    /// Binaries with samples whose ELF could not be used (gone, another build-id, no
    /// vmlinux for the kernel): named in the events.
    pub not_aggregated: u64,
    /// In the spool now, waiting for upload.
    pub waiting: u64,
    pub waiting_bytes: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct StoreState {
    pub last_upload_unix_s: u64,
    pub last_error: String,
    pub consecutive_failures: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Cost {
    /// This run's CPU time (the collector and its perf), and its wall time.
    pub cpu_seconds: f64,
    pub wall_seconds: f64,
    pub cpu_percent: f64,
    pub max_cpu_percent: f64,
    /// Peak resident memory of the collector itself, and of its largest perf.
    pub peak_rss_kib: u64,
    pub perf_peak_rss_kib: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Event {
    pub unix_s: u64,
    pub what: String,
}

impl Status {
    pub fn path(spool: &Path) -> PathBuf {
        spool.join("status.json")
    }

    /// The spool's status, or a new one if it has none.
    pub fn load(spool: &Path) -> Result<Option<Status>, CollectError> {
        let path = Status::path(spool);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(CollectError::io(&path, "cannot read the status file", e)),
        };
        let s: Status = serde_json::from_str(&text).map_err(|e| CollectError::BadStatus {
            path: path.clone(),
            what: format!(
                "not a kfdo collect status file (line {}, column {}: {e}); move it away or \
                 use another --spool",
                e.line(),
                e.column()
            ),
        })?;
        if s.version > STATUS_VERSION {
            return Err(CollectError::BadStatus {
                path,
                what: format!(
                    "written by a newer kfdo (status version {}, this one reads {STATUS_VERSION}); \
                     run that kfdo, or use another --spool",
                    s.version
                ),
            });
        }
        Ok(Some(s))
    }

    pub fn save(&self, spool: &Path) -> Result<(), CollectError> {
        let path = Status::path(spool);
        let tmp = spool.join(".status.json.tmp");
        let text = serde_json::to_string_pretty(self).map_err(|e| CollectError::BadStatus {
            path: path.clone(),
            what: format!("cannot encode the status: {e}"),
        })?;
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.write_all(b"\n")?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(|e| CollectError::io(&path, "cannot write the status file", e))
    }

    pub fn event(&mut self, now_unix_s: u64, what: impl Into<String>) {
        self.events.push(Event {
            unix_s: now_unix_s,
            what: what.into(),
        });
        if self.events.len() > EVENTS_KEPT {
            let extra = self.events.len() - EVENTS_KEPT;
            self.events.drain(..extra);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_and_loads_the_same() {
        let d = tempfile::tempdir().unwrap();
        let mut s = Status {
            version: STATUS_VERSION,
            host: "h1".into(),
            next_seq: 7,
            ..Status::default()
        };
        s.event(1, "recorded");
        s.save(d.path()).unwrap();
        assert_eq!(Status::load(d.path()).unwrap(), Some(s));
    }

    #[test]
    fn keeps_the_newest_events() {
        let mut s = Status::default();
        for i in 0..(EVENTS_KEPT as u64 + 5) {
            s.event(i, format!("e{i}"));
        }
        assert_eq!(s.events.len(), EVENTS_KEPT);
        assert_eq!(s.events[0].what, "e5");
    }

    #[test]
    fn a_foreign_file_is_named_not_overwritten() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(Status::path(d.path()), "{not json").unwrap();
        let e = Status::load(d.path()).unwrap_err().to_string();
        assert!(e.contains("status.json") && e.contains("line 1"), "{e}");
        assert_eq!(
            std::fs::read_to_string(Status::path(d.path())).unwrap(),
            "{not json"
        );
    }

    #[test]
    fn a_newer_version_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let s = Status {
            version: STATUS_VERSION + 1,
            ..Status::default()
        };
        s.save(d.path()).unwrap();
        let e = Status::load(d.path()).unwrap_err().to_string();
        assert!(e.contains("newer kfdo"), "{e}");
    }
}
