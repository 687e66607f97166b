//! The collector's loop: a window every period (recorded, aggregated, spooled), the
//! spool uploaded after each window and, while the store fails, retried with backoff,
//! the status file written after every step. Stopping (a signal, or `--windows N` done
//! and the spool drained) ends the loop between steps; a window cut short by a stop is
//! dropped whole.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kfdo_objstore::Store;
use kfdo_record::hardware::Capabilities;

use crate::aggregate_window::{aggregate, Why};
use crate::budget::{usage, Budget, NextWindow};
use crate::config::CollectConfig;
use crate::error::CollectError;
use crate::lock::SpoolLock;
use crate::naming::{spool_name, unix_ns, went_back, window_id};
use crate::record_window::{record, Recorded};
use crate::spool::Spool;
use crate::status::{Status, STATUS_VERSION};
use crate::upload::drain;

/// The longest wait between two upload attempts while the store fails.
const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// How often a waiting collector looks at its stop flag.
const TICK: Duration = Duration::from_millis(200);

/// What the run ended with.
#[derive(Debug)]
pub struct Finished {
    pub status: Status,
    /// Files still in the spool (the store was unreachable or failing at the end).
    pub left_in_spool: u64,
}

struct Collector<'a> {
    cfg: &'a CollectConfig,
    caps: Capabilities,
    spool: Spool,
    store: Option<Store>,
    st: Status,
    budget: Budget,
    started: Instant,
    cpu_at_start: Duration,
    /// Binaries already reported as not aggregated (once per run, not every window).
    reported: HashSet<(String, String)>,
    /// A window was recorded in this run: after that, a failed recording is a window
    /// lost; before it, the collector cannot record at all (no perf, no permission).
    recorded_in_this_run: bool,
    say: &'a mut dyn FnMut(&str),
}

/// Runs the collector until `stop` is set or `cfg.windows` windows are done and the
/// spool is drained (or `cfg.drain_timeout` passed).
pub fn run(
    cfg: &CollectConfig,
    caps: Capabilities,
    stop: &AtomicBool,
    say: &mut dyn FnMut(&str),
) -> Result<Finished, CollectError> {
    cfg.check()?;
    // The store's settings before the spool is touched: a bad setting leaves nothing behind.
    let store = match &cfg.upload {
        Some(u) => Some(
            Store::from_env(&u.bucket)?
                .with_timeout(Duration::from_secs(5), Duration::from_secs(120)),
        ),
        None => None,
    };
    if cfg.spool.exists() && !cfg.spool.is_dir() {
        return Err(CollectError::Config(format!(
            "--spool {}: is a file, not a folder; give --spool a folder of its own \
             (it is made if missing)",
            cfg.spool.display()
        )));
    }
    crate::spool::refuse_foreign(&cfg.spool, &cfg.programs)?;
    std::fs::create_dir_all(&cfg.spool)
        .map_err(|e| CollectError::io(&cfg.spool, "cannot create the spool", e))?;
    let _lock = SpoolLock::take(&cfg.spool)?;
    let spool = Spool::open(&cfg.spool)?;
    let mut st = Status::load(&cfg.spool)?.unwrap_or_default();
    if !st.host.is_empty() && st.host != cfg.host {
        return Err(CollectError::Config(format!(
            "{}: this spool holds host {:?}'s files, not {:?}'s; give each host its own --spool",
            cfg.spool.display(),
            st.host,
            cfg.host
        )));
    }
    st.version = STATUS_VERSION;
    st.host = cfg.host.clone();
    st.host_class = cfg.host_class.clone();
    st.upload = cfg
        .upload
        .as_ref()
        .map(|u| u.to_string())
        .unwrap_or_default();
    st.pid = std::process::id();
    st.state = "starting".into();
    st.cost = Default::default();
    st.cost.max_cpu_percent = cfg.max_cpu_percent;
    let mut c = Collector {
        cfg,
        caps,
        spool,
        store,
        st,
        budget: Budget::new(cfg.max_cpu_percent),
        started: Instant::now(),
        cpu_at_start: usage().cpu,
        reported: HashSet::new(),
        recorded_in_this_run: false,
        say,
    };
    c.event(format!(
        "started: {} every {}, {} samples, upload to {}",
        humantime::format_duration(cfg.window),
        humantime::format_duration(cfg.every),
        cfg.method.name(),
        if c.st.upload.is_empty() {
            "nowhere (spool only)"
        } else {
            &c.st.upload
        }
    ));
    c.save()?;
    c.run_loop(stop)
}

impl Collector<'_> {
    fn run_loop(mut self, stop: &AtomicBool) -> Result<Finished, CollectError> {
        let mut next_window = Instant::now();
        let mut next_upload = Instant::now();
        let mut windows_done = 0u64;
        let mut draining_since: Option<Instant> = None;
        loop {
            if stop.load(Ordering::Relaxed) {
                self.event("stopping: asked to".to_string());
                break;
            }
            let now = Instant::now();
            let all_done = self.cfg.windows.is_some_and(|n| windows_done >= n);
            if all_done {
                let since = *draining_since.get_or_insert(now);
                let waiting = self.spool.waiting()?.len();
                if self.store.is_none() || waiting == 0 {
                    break;
                }
                if now.duration_since(since) >= self.cfg.drain_timeout {
                    self.event(format!(
                        "stopping with {waiting} file(s) in the spool: the store did not take \
                         them within --drain-timeout {}",
                        humantime::format_duration(self.cfg.drain_timeout)
                    ));
                    break;
                }
            } else if now >= next_window {
                next_window += self.cfg.every;
                if next_window < now {
                    // Late (a slow window, a suspended machine): missed windows are not
                    // made up for.
                    next_window = now + self.cfg.every;
                }
                self.window(stop)?;
                windows_done += 1;
                next_upload = Instant::now();
            }
            if self.store.is_some() && Instant::now() >= next_upload {
                next_upload = Instant::now() + self.upload(stop)?;
            }
            self.save()?;
            if all_done && self.spool.waiting()?.is_empty() {
                continue; // drained: stop now, not at the next upload's time
            }
            let wake = match (all_done, draining_since) {
                (true, Some(since)) => next_upload.min(since + self.cfg.drain_timeout),
                _ => next_window.min(next_upload),
            };
            while Instant::now() < wake && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(TICK.min(wake.saturating_duration_since(Instant::now())));
            }
        }
        self.st.state = "stopped".into();
        let left = self.spool.waiting()?.len() as u64;
        self.save()?;
        Ok(Finished {
            status: self.st,
            left_in_spool: left,
        })
    }

    fn window(&mut self, stop: &AtomicBool) -> Result<(), CollectError> {
        let spent = usage().cpu.saturating_sub(self.cpu_at_start);
        let elapsed = self.started.elapsed();
        let length = match self
            .budget
            .next_window(spent, elapsed, self.cfg.window, self.cfg.every)
        {
            NextWindow::Record(l) => l,
            NextWindow::Shorten(l) => {
                self.st.windows.shortened += 1;
                self.event(format!(
                    "window shortened to {} to stay within --max-cpu {}%",
                    humantime::format_duration(round_ms(l)),
                    self.cfg.max_cpu_percent
                ));
                l
            }
            NextWindow::Skip => {
                self.st.windows.skipped_cpu += 1;
                self.event(format!(
                    "window skipped: the run used {:.2}% of a CPU, over --max-cpu {}%",
                    Budget::percent(spent, elapsed),
                    self.cfg.max_cpu_percent
                ));
                return Ok(());
            }
        };
        let wall = SystemTime::now();
        if let Some(back) = went_back(self.st.last_window_unix_ns, wall) {
            self.st.windows.clock_went_back += 1;
            self.event(format!(
                "the wall clock went back {} since the last window: window {} keeps its place \
                 by sequence number",
                humantime::format_duration(round_ms(back)),
                self.st.next_seq
            ));
        }
        let seq = self.st.next_seq;
        self.st.next_seq += 1;
        self.st.last_window_unix_ns = unix_ns(wall);
        let id = window_id(seq, wall);
        self.st.state = format!("recording window {id}");
        self.save()?;
        let cpu_before = usage().cpu;
        self.spool.clear_work()?;
        let work = self.spool.work();
        let data = match record(self.cfg, &self.caps, length, &work, stop) {
            Ok(Recorded::Done(d)) => d,
            Ok(Recorded::Stopped) => {
                self.event(format!("window {id} dropped: stopped while recording"));
                return Ok(());
            }
            Err(e) => {
                self.st.windows.failed += 1;
                self.event(format!("window {id} failed: {e}"));
                if !self.recorded_in_this_run {
                    self.st.state = "stopped: the first window could not be recorded".into();
                    self.save()?;
                    return Err(e);
                }
                return Ok(());
            }
        };
        self.recorded_in_this_run = true;
        self.st.state = format!("aggregating window {id}");
        let agg = match aggregate(self.cfg, &data, &work) {
            Ok(a) => a,
            Err(e) => {
                self.st.windows.failed += 1;
                self.event(format!("window {id} failed: {e}"));
                self.spool.clear_work()?;
                return Ok(());
            }
        };
        let mut kept = Vec::new();
        for f in &agg.files {
            let added = self.spool.add(
                &f.path,
                &spool_name(&id, &f.build_id),
                self.cfg.spool_max_bytes,
            )?;
            if added.kept {
                self.st.files.spooled += 1;
                kept.push(format!(
                    "{} ({} samples, {} rows)",
                    f.binary, f.samples, f.rows
                ));
            }
            if !added.dropped.is_empty() {
                self.st.files.dropped_spool_full += added.dropped.len() as u64;
                self.event(format!(
                    "spool full (--spool-max {} bytes): dropped {}",
                    self.cfg.spool_max_bytes,
                    added.dropped.join(", ")
                ));
            }
        }
        for s in &agg.skipped {
            match &s.why {
                Why::BelowMinSamples => self.st.files.below_min_samples += 1,
                Why::NotAggregated(why) => {
                    self.st.files.not_aggregated += 1;
                    if self.reported.insert((s.binary.clone(), s.build_id.clone())) {
                        self.event(format!(
                            "not aggregated: {} ({}): {why}",
                            s.binary, s.build_id
                        ));
                    }
                }
            }
        }
        self.spool.clear_work()?;
        self.st.windows.recorded += 1;
        self.st.windows.samples += agg.samples;
        self.event(format!(
            "window {id}: {} samples in {}, {} file(s): {}",
            agg.samples,
            humantime::format_duration(round_ms(length)),
            kept.len(),
            if kept.is_empty() {
                "-".to_string()
            } else {
                kept.join(", ")
            }
        ));
        self.budget
            .observe(length, usage().cpu.saturating_sub(cpu_before));
        self.st.state = "waiting".into();
        Ok(())
    }

    /// One upload pass; returns how long to wait before the next one.
    fn upload(&mut self, stop: &AtomicBool) -> Result<Duration, CollectError> {
        let (Some(store), Some(prefix)) = (&self.store, &self.cfg.upload) else {
            return Ok(MAX_BACKOFF);
        };
        if self.spool.waiting()?.is_empty() {
            return Ok(MAX_BACKOFF);
        }
        self.st.state = "uploading".into();
        let d = drain(&self.spool, store, prefix, &self.cfg.host, stop);
        for (url, bytes) in &d.uploaded {
            self.st.files.uploaded += 1;
            self.st.files.uploaded_bytes += bytes;
            self.st.store.last_upload_unix_s = unix_s();
            self.event(format!("uploaded {url} ({bytes} bytes)"));
        }
        for (name, why) in &d.quarantined {
            self.st.files.dropped_unreadable += 1;
            self.event(format!("not uploaded, moved to bad/{name}: {why}"));
        }
        self.st.state = "waiting".into();
        if let Some(e) = d.spool_error {
            return Err(CollectError::Config(e));
        }
        match d.failed {
            None => {
                self.st.store.consecutive_failures = 0;
                self.st.store.last_error.clear();
                Ok(MAX_BACKOFF)
            }
            Some(f) => {
                self.st.store.consecutive_failures += 1;
                let n = self.st.store.consecutive_failures;
                let wait = backoff(n);
                let what = if f.unreachable {
                    format!("store unreachable ({})", f.what)
                } else {
                    f.what.clone()
                };
                self.st.store.last_error = what.clone();
                self.event(format!(
                    "upload of {} failed (attempt {n}), files kept in the spool, next try in {}: {what}",
                    f.url,
                    humantime::format_duration(wait)
                ));
                Ok(wait)
            }
        }
    }

    fn event(&mut self, what: String) {
        (self.say)(&what);
        self.st.event(unix_s(), what);
    }

    fn save(&mut self) -> Result<(), CollectError> {
        let u = usage();
        let spent = u.cpu.saturating_sub(self.cpu_at_start);
        let elapsed = self.started.elapsed();
        self.st.cost.cpu_seconds = spent.as_secs_f64();
        self.st.cost.wall_seconds = elapsed.as_secs_f64();
        self.st.cost.cpu_percent = Budget::percent(spent, elapsed);
        self.st.cost.peak_rss_kib = u.peak_rss_kib;
        self.st.cost.perf_peak_rss_kib = u.children_peak_rss_kib;
        let waiting = self.spool.waiting()?;
        self.st.files.waiting = waiting.len() as u64;
        self.st.files.waiting_bytes = waiting.iter().map(|w| w.bytes).sum();
        self.st.updated_unix_s = unix_s();
        self.st.save(&self.cfg.spool)
    }
}

/// 1 s, 2 s, 4 s ... up to five minutes.
fn backoff(failures: u64) -> Duration {
    let exp = failures.saturating_sub(1).min(16) as u32;
    Duration::from_secs(1u64 << exp).min(MAX_BACKOFF)
}

fn round_ms(d: Duration) -> Duration {
    Duration::from_millis(d.as_millis() as u64)
}

fn unix_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_five_minutes() {
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(4), Duration::from_secs(8));
        assert_eq!(backoff(40), MAX_BACKOFF);
    }
}
