//! Reading a whole store back: sessions, benchmarks, variants, runs, counters and heat
//! maps, as `kfdo report` shows them.

use super::*;

/// A JSON column, Null where it does not parse.
fn json_or_null(s: String) -> serde_json::Value {
    serde_json::from_str(&s).unwrap_or(serde_json::Value::Null)
}

impl Store {
    /// Everything in the store, grouped by benchmark (in order of first
    /// session), variants in order of registration.
    pub fn load(&self) -> Result<Contents, StoreError> {
        let sessions = self.load_sessions()?;
        let mut names: Vec<String> = sessions.iter().map(|s| s.benchmark.clone()).collect();
        // Benchmarks in the order of their first session.
        let mut seen = std::collections::HashSet::new();
        names.retain(|n| seen.insert(n.clone()));
        let benchmarks = names
            .into_iter()
            .map(|name| self.load_benchmark(name, &sessions))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Contents {
            benchmarks,
            heatmaps: self.load_heatmaps()?,
        })
    }

    /// Every session, oldest first.
    fn load_sessions(&self) -> Result<Vec<Session>, StoreError> {
        let e = self.err();
        let mut st = self
            .conn
            .prepare("SELECT id, benchmark, started, status, environment, settings, notes FROM sessions ORDER BY id")
            .map_err(&e)?;
        let sessions = st
            .query_map([], |r| {
                let notes: String = r.get(6)?;
                Ok(Session {
                    id: r.get(0)?,
                    benchmark: r.get(1)?,
                    started_unix: r.get(2)?,
                    status: r.get(3)?,
                    environment: json_or_null(r.get(4)?),
                    settings: json_or_null(r.get(5)?),
                    notes: serde_json::from_str::<Vec<serde_json::Value>>(&notes)
                        .unwrap_or_default()
                        .into_iter()
                        .map(Warning::from_stored)
                        .collect(),
                })
            })
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok(sessions)
    }

    /// Benchmark `name`: its sessions (of `sessions`), its variants in order of
    /// registration with their runs and counters, and the counter sources it used.
    fn load_benchmark(&self, name: String, sessions: &[Session]) -> Result<Benchmark, StoreError> {
        let e = self.err();
        let mut vs = self
            .conn
            .prepare(
                "SELECT id, name, command, flags FROM variants WHERE benchmark = ?1 ORDER BY id",
            )
            .map_err(&e)?;
        let rows: Vec<(i64, Arm)> = vs
            .query_map([&name], |r| {
                Ok((
                    r.get(0)?,
                    Arm {
                        name: r.get(1)?,
                        command: r.get(2)?,
                        flags: r.get(3)?,
                        program: None,
                    },
                ))
            })
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        let variants = rows
            .into_iter()
            .map(|(id, variant)| {
                Ok(StoredVariant {
                    id,
                    variant,
                    runs: self.load_runs(id)?,
                    counters: self.load_latest_counters(id)?,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(Benchmark {
            sessions: sessions
                .iter()
                .filter(|s| s.benchmark == name)
                .cloned()
                .collect(),
            counter_sources: self.load_counter_sources(&name)?,
            name,
            variants,
        })
    }

    /// The runs of variant row `variant`, by session and order, with their metrics.
    fn load_runs(&self, variant: i64) -> Result<Vec<StoredRun>, StoreError> {
        let e = self.err();
        let mut rs = self
            .conn
            .prepare("SELECT session, seq, wall_s, user_s, sys_s, started, id FROM runs WHERE variant = ?1 ORDER BY session, seq")
            .map_err(&e)?;
        let mut runs = rs
            .query_map([variant], |r| {
                Ok((
                    r.get::<_, i64>(6)?,
                    StoredRun {
                        session: r.get(0)?,
                        seq: r.get(1)?,
                        wall_s: r.get(2)?,
                        user_s: r.get(3)?,
                        sys_s: r.get(4)?,
                        started_unix: r.get(5)?,
                        metrics: Vec::new(),
                    },
                ))
            })
            .map_err(&e)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&e)?;
        let mut ms = self
            .conn
            .prepare(
                "SELECT run, name, value, unit, better, source FROM run_metrics
                   WHERE run IN (SELECT id FROM runs WHERE variant = ?1) ORDER BY rowid",
            )
            .map_err(&e)?;
        let metrics = ms
            .query_map([variant], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    Metric {
                        name: r.get(1)?,
                        value: r.get(2)?,
                        unit: r.get(3)?,
                        better: Better::parse(&r.get::<_, String>(4)?),
                        source: r.get(5)?,
                    },
                ))
            })
            .map_err(&e)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&e)?;
        for (run, m) in metrics {
            if let Some((_, r)) = runs.iter_mut().find(|(id, _)| *id == run) {
                r.metrics.push(m);
            }
        }
        Ok(runs.into_iter().map(|(_, r)| r).collect())
    }

    /// The counters of the latest session that counted variant row `variant`.
    fn load_latest_counters(&self, variant: i64) -> Result<Vec<Counter>, StoreError> {
        let e = self.err();
        let mut cs = self
            .conn
            .prepare(&format!(
                "SELECT {COUNTER_COLUMNS} FROM counters WHERE variant = ?1 AND session =
                   (SELECT MAX(session) FROM counters WHERE variant = ?1) ORDER BY id"
            ))
            .map_err(&e)?;
        let counters = cs
            .query_map([variant], counter_of_row)
            .map_err(&e)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&e)?;
        Ok(counters)
    }

    /// The counter sources benchmark `name` used, as "source: description" lines.
    fn load_counter_sources(&self, name: &str) -> Result<Vec<String>, StoreError> {
        let e = self.err();
        let mut ss = self
            .conn
            .prepare(
                "SELECT DISTINCT c.source, c.description FROM counter_sources c JOIN sessions s ON s.id = c.session
                 WHERE s.benchmark = ?1 ORDER BY c.source",
            )
            .map_err(&e)?;
        let sources = ss
            .query_map([name], |r| {
                let s: String = r.get(0)?;
                let d: String = r.get(1)?;
                Ok(format!("{s}: {d}"))
            })
            .map_err(&e)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&e)?;
        Ok(sources)
    }

    /// Every heat map, oldest first.
    fn load_heatmaps(&self) -> Result<Vec<Heatmap>, StoreError> {
        let e = self.err();
        let mut hs = self
            .conn
            .prepare(
                "SELECT id, label, binary, created, png, svg, summary FROM heatmaps ORDER BY id",
            )
            .map_err(&e)?;
        let heatmaps = hs
            .query_map([], |r| {
                Ok(Heatmap {
                    id: r.get(0)?,
                    label: r.get(1)?,
                    binary: r.get(2)?,
                    created_unix: r.get(3)?,
                    png: r.get(4)?,
                    svg: r.get(5)?,
                    summary: json_or_null(r.get(6)?),
                })
            })
            .map_err(&e)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&e)?;
        Ok(heatmaps)
    }
}
