//! Numbers for people: moments, durations, counts, p-values, percentages
//! and speed-ups as the reports write them.

/// A moment (seconds since the Unix epoch) as `YYYY-MM-DD HH:MM UTC`.
pub fn fmt_utc(unix: f64) -> String {
    let t = unix as libc::time_t;
    // SAFETY: gmtime_r reads `t` and writes only the struct we pass; all-zero bytes are
    // a valid `tm`.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    if unsafe { libc::gmtime_r(&t, &mut tm) }.is_null() {
        return format!("{unix:.0} s after the epoch");
    }
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min
    )
}

/// A duration for people: µs, ms or s with 3-4 significant digits.
pub fn fmt_time(s: f64) -> String {
    if !s.is_finite() {
        return "–".into();
    }
    let a = s.abs();
    if a >= 1.0 {
        format!("{s:.3} s")
    } else if a >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

/// A count with thousands separators, as the seeds' perf-stat table.
pub fn fmt_count(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let n = v.round() as i128;
    let out = fmt_count_int(n.unsigned_abs());
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// A whole count with thousands separators (`71,349,910`), exact at any size: the one
/// place digits are grouped, for counts that are integers already (samples, branches).
pub fn fmt_count_int(n: impl Into<u128>) -> String {
    let digits = n.into().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

pub fn fmt_p(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

/// "+3.2 %" / "−12.5 %" (a real minus sign).
pub fn fmt_pct(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    if x < 0.0 {
        format!("\u{2212}{:.1} %", -x)
    } else {
        format!("+{x:.1} %")
    }
}

/// One cell of a counters table: the count of variant `index`, and after the baseline's
/// (index 0) its change against the baseline, e.g. "15,000,332,421 (−9.7 %)".
pub fn fmt_counter_cell(index: usize, base: Option<f64>, value: Option<f64>) -> String {
    match (index, base, value) {
        (0, _, Some(x)) => fmt_count(x),
        (_, Some(b), Some(x)) if b != 0.0 => {
            format!("{} ({})", fmt_count(x), fmt_pct((x / b - 1.0) * 100.0))
        }
        (_, _, Some(x)) => fmt_count(x),
        _ => "–".into(),
    }
}

/// "2.01× faster" / "1.05× slower" for a time ratio new / base.
pub fn fmt_speed(ratio: f64) -> String {
    if ratio.is_nan() || ratio <= 0.0 || !ratio.is_finite() {
        "–".into()
    } else if ratio <= 1.0 {
        format!("{:.2}× faster", 1.0 / ratio)
    } else {
        format!("{ratio:.2}× slower")
    }
}

/// A geometric mean's ratio with its interval, "0.8696 [0.8123, 0.9301]".
pub fn geomean_ratio(g: &crate::analysis::GeoMean) -> String {
    match &g.interval {
        Some(i) => format!("{:.4} [{:.4}, {:.4}]", g.ratio, i.lo, i.hi),
        None => format!("{:.4}", g.ratio),
    }
}

/// A geometric mean's verdict, worded as a benchmark's: a speed-up only when it is
/// significant, else "no significant difference".
pub fn geomean_verdict(g: &crate::analysis::GeoMean) -> String {
    if g.significant {
        fmt_speed(g.ratio)
    } else {
        "no significant difference".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_thousands_exactly() {
        assert_eq!(fmt_count_int(71_349_910u64), "71,349,910");
        assert_eq!(fmt_count_int(999u64), "999");
        assert_eq!(fmt_count_int(u64::MAX), "18,446,744,073,709,551,615");
        assert_eq!(fmt_count(-1234.4), "-1,234");
        assert_eq!(fmt_count(f64::NAN), "–");
    }

    #[test]
    fn utc_dates() {
        assert_eq!(fmt_utc(0.0), "1970-01-01 00:00 UTC");
        assert_eq!(fmt_utc(1_795_765_260.0), "2026-11-27 07:41 UTC");
    }

    #[test]
    fn formats() {
        assert_eq!(fmt_count(295987538935.0), "295,987,538,935");
        assert_eq!(fmt_count(12.0), "12");
        assert_eq!(fmt_time(0.0123), "12.30 ms");
        assert_eq!(fmt_pct(-3.24), "\u{2212}3.2 %");
        assert_eq!(fmt_speed(0.5), "2.00× faster");
    }
}
