//! Reading a whole store back: sessions, benchmarks, variants, runs, counters and heat
//! maps, as `kfdo report` shows them.

use super::*;

impl Store {
    /// Everything in the store, grouped by benchmark (in order of first
    /// session), variants in order of registration.
    pub fn load(&self) -> Result<Contents, StoreError> {
        let e = self.err();
        let json = |s: String| serde_json::from_str(&s).unwrap_or(serde_json::Value::Null);
        let mut st = self
            .conn
            .prepare("SELECT id, benchmark, started, status, environment, settings, notes FROM sessions ORDER BY id")
            .map_err(&e)?;
        let sessions: Vec<Session> = st
            .query_map([], |r| {
                let notes: String = r.get(6)?;
                Ok(Session {
                    id: r.get(0)?,
                    benchmark: r.get(1)?,
                    started_unix: r.get(2)?,
                    status: r.get(3)?,
                    environment: json(r.get(4)?),
                    settings: json(r.get(5)?),
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

        let mut benchmarks: Vec<Benchmark> = Vec::new();
        let mut names: Vec<String> = sessions.iter().map(|s| s.benchmark.clone()).collect();
        // Benchmarks in the order of their first session.
        let mut seen = std::collections::HashSet::new();
        names.retain(|n| seen.insert(n.clone()));
        for name in names {
            let mut vs = self
                .conn
                .prepare("SELECT id, name, command, flags FROM variants WHERE benchmark = ?1 ORDER BY id")
                .map_err(&e)?;
            let variants: Vec<(i64, Variant)> = vs
                .query_map([&name], |r| {
                    Ok((
                        r.get(0)?,
                        Variant {
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
            let mut out = Vec::new();
            for (id, variant) in variants {
                let mut rs = self
                    .conn
                    .prepare("SELECT session, seq, wall_s, user_s, sys_s, started, id FROM runs WHERE variant = ?1 ORDER BY session, seq")
                    .map_err(&e)?;
                let mut runs = rs
                    .query_map([id], |r| {
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
                    .query_map([id], |r| {
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
                let runs: Vec<StoredRun> = runs.into_iter().map(|(_, r)| r).collect();
                // The latest session's counters for this variant.
                let mut cs = self
                    .conn
                    .prepare(&format!(
                        "SELECT {COUNTER_COLUMNS} FROM counters WHERE variant = ?1 AND session =
                           (SELECT MAX(session) FROM counters WHERE variant = ?1) ORDER BY id"
                    ))
                    .map_err(&e)?;
                let counters = cs
                    .query_map([id], counter_of_row)
                    .map_err(&e)?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(&e)?;
                out.push(StoredVariant {
                    id,
                    variant,
                    runs,
                    counters,
                });
            }
            let mut ss = self
                .conn
                .prepare(
                    "SELECT DISTINCT c.source, c.description FROM counter_sources c JOIN sessions s ON s.id = c.session
                     WHERE s.benchmark = ?1 ORDER BY c.source",
                )
                .map_err(&e)?;
            let counter_sources = ss
                .query_map([&name], |r| {
                    let s: String = r.get(0)?;
                    let d: String = r.get(1)?;
                    Ok(format!("{s}: {d}"))
                })
                .map_err(&e)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(&e)?;
            benchmarks.push(Benchmark {
                sessions: sessions
                    .iter()
                    .filter(|s| s.benchmark == name)
                    .cloned()
                    .collect(),
                name,
                variants: out,
                counter_sources,
            });
        }

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
                    summary: json(r.get(6)?),
                })
            })
            .map_err(&e)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&e)?;
        Ok(Contents {
            benchmarks,
            heatmaps,
        })
    }
}
