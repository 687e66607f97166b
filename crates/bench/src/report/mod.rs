//! Reports of a results store: static HTML (no network, no script; plots
//! as inline SVG, heat maps as data URIs) and Markdown for mailing lists and
//! pull requests. One file per format, as hyperfine's `export/`.
//!
//! Every string that comes from a command line, a binary or a profile goes
//! through [`escape_html`] (or [`escape_markdown`]) on its way out.

pub mod html;
pub mod markdown;
pub mod metrics;
pub mod plot;
pub mod profiles;
pub mod text;
pub mod write;

/// Escapes text for HTML and SVG/XML, in element content and in quoted
/// attribute values alike.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than tab/newline are not allowed in XML.
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Escapes text for a Markdown table cell: Markdown punctuation gets a
/// backslash, HTML specials become entities, newlines become spaces.
pub fn escape_markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Standard base64 (RFC 4648, with padding), for data URIs.
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            T[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            T[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

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
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 {
        out.insert(0, '-');
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(fmt_utc(0.0), "1970-01-01 00:00 UTC");
        assert_eq!(fmt_utc(1_795_765_260.0), "2026-11-27 07:41 UTC");
    }

    #[test]
    fn escaping() {
        assert_eq!(
            escape_html(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(escape_markdown("a|b <c> *d*"), "a\\|b &lt;c&gt; \\*d\\*");
    }

    #[test]
    fn base64_rfc4648_vectors() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o);
        }
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
