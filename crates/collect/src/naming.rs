//! Names of windows, spool files and stored objects.
//!
//! A window is named by the collector's own sequence number (kept in the status file
//! across restarts, so it only grows) and the wall-clock time it started. The object
//! key of a host file is fixed when the file enters the spool, so an upload retried
//! after a failure or a restart writes the same key: the store ends with one copy. The
//! sequence keeps names unique and ordered even when the wall clock goes backwards.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `00000042-20261129T052600Z`: sequence, then the UTC start, to the second.
pub fn window_id(seq: u64, start: SystemTime) -> String {
    let stamp = humantime::format_rfc3339_seconds(start).to_string();
    let compact: String = stamp.chars().filter(|c| *c != '-' && *c != ':').collect();
    format!("{seq:08}-{compact}")
}

/// The spool's name of a window's host file: `WINDOW.BUILD_ID.parquet`.
pub fn spool_name(window: &str, build_id: &str) -> String {
    format!("{window}.{build_id}.parquet")
}

/// A spool file's window and build-id, or None for a name the collector did not give.
pub fn parse_spool_name(name: &str) -> Option<(&str, &str)> {
    let stem = name.strip_suffix(".parquet")?;
    let (window, build_id) = stem.split_once('.')?;
    let (seq, stamp) = window.split_once('-')?;
    let ok = seq.len() >= 8
        && seq.bytes().all(|b| b.is_ascii_digit())
        && stamp.ends_with('Z')
        && !build_id.is_empty()
        && build_id.bytes().all(|b| b.is_ascii_hexdigit());
    ok.then_some((window, build_id))
}

/// The object key under the upload prefix: `HOST/BUILD_ID/WINDOW.parquet`, so that a
/// release's files are one listing per host and a merge can take a prefix.
pub fn object_key(host: &str, window: &str, build_id: &str) -> String {
    format!("{host}/{build_id}/{window}.parquet")
}

/// Nanoseconds since the Unix epoch (negative before it), saturating in 2262.
pub fn unix_ns(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_nanos()).map_or(i64::MIN, |n| -n),
    }
}

/// How far `now` lies before `previous`, if it does.
pub fn went_back(previous_ns: i64, now: SystemTime) -> Option<Duration> {
    let now_ns = unix_ns(now);
    (now_ns < previous_ns).then(|| Duration::from_nanos(previous_ns.abs_diff(now_ns)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let t = UNIX_EPOCH + Duration::from_secs(1_796_000_000);
        let w = window_id(42, t);
        assert_eq!(w, "00000042-20261130T005320Z");
        let n = spool_name(&w, "abc123");
        assert_eq!(parse_spool_name(&n), Some((w.as_str(), "abc123")));
        assert_eq!(
            object_key("h1", &w, "abc123"),
            "h1/abc123/00000042-20261130T005320Z.parquet"
        );
    }

    #[test]
    fn foreign_names_are_not_spool_files() {
        for n in [
            "x.parquet",
            "00000001-20261130T005320Z.parquet",
            "a.b.parquet.tmp",
        ] {
            assert_eq!(parse_spool_name(n), None, "{n}");
        }
    }

    #[test]
    fn a_clock_set_back_is_seen() {
        let t = UNIX_EPOCH + Duration::from_secs(100);
        assert_eq!(
            went_back(unix_ns(t) + 5_000_000_000, t),
            Some(Duration::from_secs(5))
        );
        assert_eq!(went_back(unix_ns(t), t), None);
    }
}
