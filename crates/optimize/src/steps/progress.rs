//! Progress on the terminal: one line per step as it starts and ends, and
//! on a terminal a live spinner per running step with its elapsed time and
//! the last line its log received (so a long build or benchmark shows life).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    mp: MultiProgress,
    live: bool,
    quiet: bool,
    total: usize,
    started: AtomicUsize,
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
            live,
            quiet,
            total,
            started: AtomicUsize::new(0),
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
            eprintln!("{}", msg.as_ref());
        }
    }

    pub fn elapsed(&self) -> String {
        fmt_secs(self.t0.elapsed().as_secs_f64())
    }

    /// A step the cache already holds: one line, no bar.
    pub fn cached(&self, name: &str) {
        let index = self.started.fetch_add(1, Ordering::SeqCst) + 1;
        self.say(format!(
            "[{index}/{}] {name}: cached (inputs unchanged)",
            self.total
        ));
    }

    /// A step begins; `log` is followed for the live line.
    pub fn start(&self, name: &str, log: Option<&Path>) -> StepBar<'_> {
        let index = self.started.fetch_add(1, Ordering::SeqCst) + 1;
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
            eprintln!("[{index}/{}] {name} ...", self.total);
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
