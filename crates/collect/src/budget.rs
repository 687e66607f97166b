//! The collector's own cost, and `--max-cpu`: CPU time of the collector and its perf
//! (getrusage of itself and of its reaped children) against the wall time of the run.
//!
//! Before each window the budget looks ahead one period: the CPU the run may have used
//! by the period's end, less what it has used, is what the window may cost. A window
//! costs about in proportion to its length (its samples), so the last window's cost per
//! second of recording predicts it; a window that would cost more is shortened to fit,
//! and skipped when less than a second would fit.

use std::time::Duration;

use nix::sys::resource::{getrusage, UsageWho};

/// CPU time and peak memory, now.
#[derive(Clone, Copy, Debug, Default)]
pub struct Usage {
    /// User and system time of this process and of its reaped children.
    pub cpu: Duration,
    pub peak_rss_kib: u64,
    /// The largest reaped child's peak (perf).
    pub children_peak_rss_kib: u64,
}

pub fn usage() -> Usage {
    let of = |who| match getrusage(who) {
        Ok(u) => {
            let t = |tv: nix::sys::time::TimeVal| {
                Duration::from_secs(tv.tv_sec().max(0) as u64)
                    + Duration::from_micros(tv.tv_usec().max(0) as u64)
            };
            (
                t(u.user_time()) + t(u.system_time()),
                u.max_rss().max(0) as u64,
            )
        }
        Err(_) => (Duration::ZERO, 0),
    };
    let (own, own_rss) = of(UsageWho::RUSAGE_SELF);
    let (children, children_rss) = of(UsageWho::RUSAGE_CHILDREN);
    Usage {
        cpu: own + children,
        peak_rss_kib: own_rss,
        children_peak_rss_kib: children_rss,
    }
}

/// What the next window may do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NextWindow {
    Record(Duration),
    /// Record for less than asked, to stay within the budget.
    Shorten(Duration),
    /// Too little budget left for a window of a second.
    Skip,
}

#[derive(Clone, Debug)]
pub struct Budget {
    /// Share of one CPU (0.05 for 5 %).
    max_share: f64,
    /// CPU per second of recording, from the last window recorded.
    cost_per_window_second: Option<f64>,
}

impl Budget {
    pub fn new(max_percent: f64) -> Budget {
        Budget {
            max_share: max_percent / 100.0,
            cost_per_window_second: None,
        }
    }

    /// A recorded window of `length` that cost `cpu` (recording, aggregating, spooling).
    pub fn observe(&mut self, length: Duration, cpu: Duration) {
        if !length.is_zero() {
            self.cost_per_window_second = Some(cpu.as_secs_f64() / length.as_secs_f64());
        }
    }

    /// The window to record now, `elapsed` into the run having `spent` CPU, with windows
    /// of `window` every `every`.
    pub fn next_window(
        &self,
        spent: Duration,
        elapsed: Duration,
        window: Duration,
        every: Duration,
    ) -> NextWindow {
        let allowed = self.max_share * (elapsed + every).as_secs_f64();
        let headroom = allowed - spent.as_secs_f64();
        let Some(rate) = self.cost_per_window_second else {
            return NextWindow::Record(window);
        };
        let cost = rate * window.as_secs_f64();
        if cost <= headroom {
            return NextWindow::Record(window);
        }
        let fits = if rate > 0.0 { headroom / rate } else { 0.0 };
        if fits >= 1.0 {
            NextWindow::Shorten(Duration::from_secs_f64(fits.min(window.as_secs_f64())))
        } else {
            NextWindow::Skip
        }
    }

    pub fn percent(spent: Duration, elapsed: Duration) -> f64 {
        if elapsed.is_zero() {
            0.0
        } else {
            100.0 * spent.as_secs_f64() / elapsed.as_secs_f64()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn the_first_window_is_recorded_whole() {
        let b = Budget::new(5.0);
        assert_eq!(
            b.next_window(S(0), S(0), S(10), S(600)),
            NextWindow::Record(S(10))
        );
    }

    #[test]
    fn a_cheap_window_is_recorded_whole() {
        let mut b = Budget::new(5.0);
        b.observe(S(10), Duration::from_millis(500));
        // 5 % of 1,200 s is 60 s; 2 s spent; the window costs 0.5 s.
        assert_eq!(
            b.next_window(S(2), S(600), S(10), S(600)),
            NextWindow::Record(S(10))
        );
    }

    #[test]
    fn a_costly_window_is_shortened_to_fit() {
        let mut b = Budget::new(5.0);
        b.observe(S(10), S(10)); // a CPU-second per second of recording
                                 // 5 % of (100 + 100) s = 10 s allowed, 6 s spent: 4 s of recording fit.
        let p = b.next_window(S(6), S(100), S(10), S(100));
        assert_eq!(p, NextWindow::Shorten(S(4)));
    }

    #[test]
    fn no_headroom_skips_the_window() {
        let mut b = Budget::new(5.0);
        b.observe(S(10), S(10));
        assert_eq!(
            b.next_window(S(10), S(100), S(10), S(100)),
            NextWindow::Skip
        );
    }

    #[test]
    fn our_own_cpu_time_is_counted() {
        let before = usage().cpu;
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed() < Duration::from_millis(50) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        assert!(usage().cpu > before);
    }
}
