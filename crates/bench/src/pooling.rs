//! Which earlier runs of a command a comparison pools with its own: by default only
//! those of the same program ([`crate::identity`]), so that a rebuilt binary starts a
//! new series and says so; and where counters shown beside a verdict come from when
//! they were not taken in this session.

use std::fmt;

use crate::runner::Arm;
use crate::store::Series;

/// Which earlier runs count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Pooling {
    /// Earlier runs of the same program; runs of another program are set aside, and
    /// [`SeriesChange`] says so.
    #[default]
    NewSeries,
    /// All earlier runs of the command's name, whatever program they ran (`--pool`).
    Pool,
    /// None: this session's runs and counters only (`--fresh`).
    Fresh,
}

/// A command whose program is not the one of (some of) its earlier runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesChange {
    pub variant: String,
    pub command: String,
    /// The program of the latest other series (`None`: unknown).
    pub old: Option<String>,
    pub old_last_session: i64,
    /// The program of this run (`None`: nothing kfdo can identify).
    pub new: Option<String>,
    /// Earlier runs of other programs.
    pub runs: usize,
    /// They are pooled anyway (`--pool`).
    pub pooled: bool,
}

impl SeriesChange {
    /// The change between `series` (a variant's stored runs by identity, latest first)
    /// and `identity`, if any earlier run ran another program; `None` with `--fresh`,
    /// which sets every earlier run aside anyway.
    pub fn find(
        v: &Arm,
        identity: Option<&str>,
        series: &[Series],
        pooling: Pooling,
    ) -> Option<SeriesChange> {
        if pooling == Pooling::Fresh {
            return None;
        }
        let others: Vec<&Series> = series
            .iter()
            .filter(|s| s.identity.as_deref() != identity)
            .collect();
        let latest = others.first()?;
        Some(SeriesChange {
            variant: v.name.clone(),
            command: v.command.clone(),
            old: latest.identity.clone(),
            old_last_session: latest.last_session,
            new: identity.map(String::from),
            runs: others.iter().map(|s| s.runs).sum(),
            pooled: pooling == Pooling::Pool,
        })
    }
}

fn program(id: &Option<String>, unknown: &str) -> String {
    id.clone().unwrap_or_else(|| unknown.to_string())
}

impl fmt::Display for SeriesChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "'{}' (`{}`) now runs {}, but {} earlier run(s) ran {} (latest in session {})",
            self.variant,
            self.command,
            program(&self.new, "no program kfdo can identify"),
            self.runs,
            program(
                &self.old,
                "a program of unknown identity (stored before kfdo recorded it)"
            ),
            self.old_last_session
        )?;
        if self.pooled {
            write!(f, "; pooled with them anyway, as --pool asks")
        } else {
            write!(
                f,
                "; they are set aside and a new series starts (--pool pools them anyway, \
                 --fresh ignores every earlier run)"
            )
        }
    }
}

/// Counters shown beside a verdict that were taken in an earlier session.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CountersOrigin {
    pub variant: String,
    pub session: i64,
    pub started_unix: f64,
}

impl fmt::Display for CountersOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "counters of '{}' are from session {}, {}, not from this run",
            self.variant,
            self.session,
            crate::report::fmt_utc(self.started_unix)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(id: Option<&str>, runs: usize, last: i64) -> Series {
        Series {
            identity: id.map(String::from),
            runs,
            last_session: last,
        }
    }

    #[test]
    fn another_program_is_a_change_unless_fresh() {
        let v = Arm::new("O2", "./prog 5");
        let stored = [
            series(Some("build-id:bb"), 3, 4),
            series(Some("build-id:aa"), 10, 2),
            series(None, 7, 1),
        ];
        assert_eq!(
            SeriesChange::find(&v, Some("build-id:bb"), &stored[..1], Pooling::NewSeries),
            None
        );
        let c = SeriesChange::find(&v, Some("build-id:bb"), &stored, Pooling::NewSeries).unwrap();
        assert_eq!((c.runs, c.old.as_deref()), (17, Some("build-id:aa")));
        assert_eq!(
            c.to_string(),
            "'O2' (`./prog 5`) now runs build-id:bb, but 17 earlier run(s) ran build-id:aa \
             (latest in session 2); they are set aside and a new series starts (--pool pools \
             them anyway, --fresh ignores every earlier run)"
        );
        let c = SeriesChange::find(&v, Some("build-id:cc"), &stored, Pooling::Pool).unwrap();
        assert_eq!(c.runs, 20);
        assert!(c
            .to_string()
            .ends_with("pooled with them anyway, as --pool asks"));
        assert_eq!(
            SeriesChange::find(&v, Some("build-id:cc"), &stored, Pooling::Fresh),
            None
        );
        let unknown = SeriesChange::find(&v, Some("build-id:aa"), &stored[2..], Pooling::NewSeries)
            .unwrap()
            .to_string();
        assert!(
            unknown.contains("7 earlier run(s) ran a program of unknown identity"),
            "{unknown}"
        );
    }
}
