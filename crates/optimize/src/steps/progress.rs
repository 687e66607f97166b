//! Progress on stderr: one line per step as it starts and ends; on a terminal a live
//! spinner per running step with its elapsed time and the last line its log received,
//! and elsewhere (a pipe, `tee`, a CI log) a plain line every few seconds while a step
//! runs, so a long build or benchmark shows life either way.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Where the plain lines go (stderr; a test's buffer).
type Sink = Arc<dyn Fn(&str) + Send + Sync>;

/// How often a running step says it still runs when stderr is not a terminal.
pub const HEARTBEAT: Duration = Duration::from_secs(10);

pub struct Progress {
    mp: MultiProgress,
    sink: Sink,
    heartbeat: Duration,
    live: bool,
    quiet: bool,
    total: usize,
    /// The steps said so far, in order: a step said again (asked for twice, cached the
    /// second time) keeps its number.
    said: Mutex<Vec<String>>,
    t0: Instant,
}

pub struct StepBar<'a> {
    progress: &'a Progress,
    name: String,
    index: usize,
    t0: Instant,
    bar: Option<ProgressBar>,
    stop: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

fn fmt_secs(s: f64) -> String {
    if s >= 60.0 {
        format!("{}m{:02}s", (s / 60.0) as u64, (s % 60.0) as u64)
    } else {
        format!("{s:.1} s")
    }
}

impl Progress {
    pub fn new(total: usize, quiet: bool) -> Progress {
        let live = !quiet && std::io::stderr().is_terminal();
        let mp = MultiProgress::with_draw_target(if live {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        });
        Progress {
            mp,
            sink: Arc::new(|line: &str| eprintln!("{line}")),
            heartbeat: HEARTBEAT,
            live,
            quiet,
            total,
            said: Mutex::new(Vec::new()),
            t0: Instant::now(),
        }
    }

    /// Plain lines into `sink` (never live), a running step's every `heartbeat`.
    pub fn plain(total: usize, heartbeat: Duration, sink: Sink) -> Progress {
        Progress {
            mp: MultiProgress::with_draw_target(ProgressDrawTarget::hidden()),
            sink,
            heartbeat,
            live: false,
            quiet: false,
            total,
            said: Mutex::new(Vec::new()),
            t0: Instant::now(),
        }
    }

    /// A line above the live bars (or plain on stderr).
    pub fn say(&self, msg: impl AsRef<str>) {
        if self.quiet {
            return;
        }
        if self.live {
            let _ = self.mp.println(msg.as_ref());
        } else {
            (self.sink)(msg.as_ref());
        }
    }

    pub fn elapsed(&self) -> String {
        fmt_secs(self.t0.elapsed().as_secs_f64())
    }

    /// The step's number: its place among the steps said so far.
    fn index(&self, name: &str) -> usize {
        let mut said = self.said.lock().unwrap_or_else(|e| e.into_inner());
        match said.iter().position(|s| s == name) {
            Some(i) => i + 1,
            None => {
                said.push(name.to_string());
                said.len()
            }
        }
    }

    /// A step the cache already holds: one line, no bar.
    pub fn cached(&self, name: &str) {
        let index = self.index(name);
        self.say(format!(
            "[{index}/{}] {name}: cached (inputs unchanged)",
            self.total
        ));
    }

    /// A step begins; `log` is followed for the live line.
    pub fn start(&self, name: &str, log: Option<&Path>) -> StepBar<'_> {
        let index = self.index(name);
        let stop = Arc::new(AtomicBool::new(false));
        let mut sb = StepBar {
            progress: self,
            name: name.to_string(),
            index,
            t0: Instant::now(),
            bar: None,
            stop: stop.clone(),
            ticker: None,
        };
        if self.live {
            let pb = self.mp.add(ProgressBar::new_spinner());
            pb.set_style(ProgressStyle::with_template("{spinner} {msg}").unwrap());
            pb.enable_steady_tick(Duration::from_millis(120));
            let head = format!("[{index}/{}] {name}", self.total);
            pb.set_message(head.clone());
            let log: Option<PathBuf> = log.map(Path::to_path_buf);
            let bar = pb.clone();
            let t0 = sb.t0;
            sb.ticker = Some(std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let last = log
                        .as_deref()
                        .and_then(|l| super::exec::tail(l, 1).pop())
                        .unwrap_or_default();
                    let last: String = last.chars().take(90).collect();
                    bar.set_message(format!(
                        "{head}  {}  {last}",
                        fmt_secs(t0.elapsed().as_secs_f64())
                    ));
                    std::thread::sleep(Duration::from_millis(400));
                }
            }));
            sb.bar = Some(pb);
        } else if !self.quiet {
            let head = format!("[{index}/{}] {name}", self.total);
            (self.sink)(&format!("{head} ..."));
            let (sink, every, t0) = (self.sink.clone(), self.heartbeat, sb.t0);
            let log: Option<PathBuf> = log.map(Path::to_path_buf);
            sb.ticker = Some(std::thread::spawn(move || {
                let mut next = every;
                while !stop.load(Ordering::Relaxed) {
                    // Short naps, so the step's end is not held up by a whole period.
                    std::thread::sleep(Duration::from_millis(100).min(every));
                    if stop.load(Ordering::Relaxed) || t0.elapsed() < next {
                        continue;
                    }
                    next += every;
                    let last = log
                        .as_deref()
                        .and_then(|l| super::exec::tail(l, 1).pop())
                        .map(|l| format!(": {}", l.chars().take(120).collect::<String>()))
                        .unwrap_or_default();
                    sink(&format!(
                        "{head}: running for {}{last}",
                        fmt_secs(t0.elapsed().as_secs_f64())
                    ));
                }
            }));
        }
        sb
    }
}

impl StepBar<'_> {
    /// The step ran to completion: its closing line with the time it took.
    pub fn finish(mut self) {
        self.close();
        let p = self.progress;
        let took = fmt_secs(self.t0.elapsed().as_secs_f64());
        p.say(format!(
            "[{}/{}] {}: done in {took}",
            self.index, p.total, self.name
        ));
    }

    fn close(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
            self.progress.mp.remove(&b);
        }
    }
}

impl Drop for StepBar<'_> {
    /// A failed step's bar goes away too (the error says what happened).
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn collecting(heartbeat: Duration) -> (Progress, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let into = lines.clone();
        let sink: Sink = Arc::new(move |l: &str| into.lock().unwrap().push(l.to_string()));
        (Progress::plain(2, heartbeat, sink), lines)
    }

    /// Not on a terminal, a running step says so every heartbeat, with the last line of
    /// its log, and its end in one line; a step shorter than a heartbeat only starts
    /// and ends.
    #[test]
    fn a_long_step_off_a_terminal_says_it_still_runs() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("build.log");
        std::fs::write(&log, "compiling lz.c\n").unwrap();
        let (p, lines) = collecting(Duration::from_millis(50));
        let bar = p.start("build baseline", Some(&log));
        // Waits for the heartbeat itself, not for a time: a loaded machine only delays it.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("running for"))
        {
            assert!(
                Instant::now() < deadline,
                "no heartbeat: {:?}",
                lines.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        bar.finish();
        let lines = lines.lock().unwrap().clone();
        assert_eq!(lines[0], "[1/2] build baseline ...");
        let beat = lines.iter().find(|l| l.contains("running for")).unwrap();
        assert!(
            beat.starts_with("[1/2] build baseline: running for ")
                && beat.ends_with(": compiling lz.c"),
            "{beat}"
        );
        assert!(
            lines
                .last()
                .unwrap()
                .starts_with("[1/2] build baseline: done in "),
            "{lines:?}"
        );

        let (p, lines) = collecting(Duration::from_secs(3600));
        p.start("profile kfdo", None).finish();
        p.cached("report");
        let lines = lines.lock().unwrap().clone();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert_eq!(lines[2], "[2/2] report: cached (inputs unchanged)");
    }
}
