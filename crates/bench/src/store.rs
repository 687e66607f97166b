//! The results store: one SQLite file, appended to. Every run is committed
//! as it finishes, so an interrupted comparison keeps what it measured, and
//! a later `kfdo compare` with the same benchmark and variant names adds
//! runs to the same series.

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};

use crate::counters::Counter;
use crate::metric::{Better, Metric};
use crate::runner::{RunResult, Variant};
use crate::warning::Warning;

/// 2 added `run_metrics`; 3 added `identity` to `runs` and `counters` (what the command
/// ran: see [`crate::identity`]). Older stores are upgraded in place; their runs keep a
/// NULL identity, unknown, which pools only with itself.
const SCHEMA_VERSION: i32 = 3;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("results store {path}: {source} (is it a kfdo store, and writable?)")]
    Sql {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("results store {path} has schema version {found}, this kfdo knows {SCHEMA_VERSION}; use a new --store file")]
    Version { path: String, found: i32 },
    #[error("results store {path}: benchmark '{benchmark}' already has a variant '{name}' running `{stored}`, \
             not `{given}`; give this one another --name, or use another --benchmark")]
    Conflict {
        path: String,
        benchmark: String,
        name: String,
        stored: String,
        given: String,
    },
    #[error("results store {path} does not exist (run `kfdo compare --store {path} ...` first)")]
    Missing { path: String },
}

pub struct Store {
    conn: Connection,
    path: String,
    /// Set when opening upgraded the store from a version without identities: how many
    /// runs it held (their identity is unknown).
    upgraded_runs: Option<usize>,
}

/// The runs of a variant stored with one identity.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// `None`: unknown (stored before identities were, or nothing to identify).
    pub identity: Option<String>,
    pub runs: usize,
    /// The latest session with runs of this identity.
    pub last_session: i64,
}

/// Counters stored for a variant in one session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionCounters {
    pub session: i64,
    pub started_unix: f64,
    pub counters: Vec<Counter>,
}

/// A stored timed run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StoredRun {
    pub session: i64,
    pub seq: i64,
    pub wall_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    pub started_unix: f64,
    pub metrics: Vec<Metric>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StoredVariant {
    pub id: i64,
    pub variant: Variant,
    pub runs: Vec<StoredRun>,
    pub counters: Vec<Counter>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Session {
    pub id: i64,
    pub benchmark: String,
    pub started_unix: f64,
    /// "running" (still going, or the process died), "complete",
    /// "interrupted", "failed".
    pub status: String,
    pub environment: serde_json::Value,
    pub settings: serde_json::Value,
    /// Warnings the runner recorded (setup, other load, counters, ...).
    pub notes: Vec<Warning>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Benchmark {
    pub name: String,
    /// In order of first appearance; the first is the baseline.
    pub variants: Vec<StoredVariant>,
    pub sessions: Vec<Session>,
    /// One line per counter source used: what the numbers are.
    pub counter_sources: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Heatmap {
    pub id: i64,
    pub label: String,
    pub binary: String,
    pub created_unix: f64,
    #[serde(skip)]
    pub png: Vec<u8>,
    pub svg: String,
    pub summary: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Contents {
    pub benchmarks: Vec<Benchmark>,
    pub heatmaps: Vec<Heatmap>,
}

pub fn now_unix() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl Store {
    fn err(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |source| StoreError::Sql {
            path: self.path.clone(),
            source,
        }
    }

    /// Opens (creating if needed) a store for writing.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let p = path.display().to_string();
        let conn = Connection::open(path).map_err(|source| StoreError::Sql {
            path: p.clone(),
            source,
        })?;
        let mut s = Store {
            conn,
            path: p,
            upgraded_runs: None,
        };
        s.upgraded_runs = s.init()?;
        Ok(s)
    }

    /// Opens an existing store for reading. A current store is opened read-only: even
    /// setting `user_version` to its own value is a write that changes the file's bytes,
    /// and callers (kfdo optimize's step cache) take the file's hash as the results'
    /// identity. An older schema is opened for writing, to migrate it.
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        if !path.exists() {
            return Err(StoreError::Missing {
                path: path.display().to_string(),
            });
        }
        let p = path.display().to_string();
        let sql = |source| StoreError::Sql {
            path: p.clone(),
            source,
        };
        let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(sql)?;
        let version: i32 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql)?;
        if version == SCHEMA_VERSION {
            conn.busy_timeout(std::time::Duration::from_secs(10))
                .map_err(sql)?;
            return Ok(Store {
                conn,
                path: p,
                upgraded_runs: None,
            });
        }
        drop(conn);
        Store::open(path)
    }

    /// Creates or upgrades the tables; `Some(runs)` when it upgraded a store from a
    /// version without identities.
    fn init(&self) -> Result<Option<usize>, StoreError> {
        let e = self.err();
        self.conn
            .busy_timeout(std::time::Duration::from_secs(10))
            .map_err(&e)?;
        let version: i32 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(&e)?;
        if !(0..=SCHEMA_VERSION).contains(&version) {
            return Err(StoreError::Version {
                path: self.path.clone(),
                found: version,
            });
        }
        self.conn
            .execute_batch(
                "PRAGMA synchronous = NORMAL;
                 CREATE TABLE IF NOT EXISTS sessions (
                    id INTEGER PRIMARY KEY,
                    benchmark TEXT NOT NULL,
                    started REAL NOT NULL,
                    finished REAL,
                    status TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    settings TEXT NOT NULL,
                    notes TEXT NOT NULL DEFAULT '[]');
                 CREATE TABLE IF NOT EXISTS variants (
                    id INTEGER PRIMARY KEY,
                    benchmark TEXT NOT NULL,
                    name TEXT NOT NULL,
                    command TEXT NOT NULL,
                    flags TEXT,
                    UNIQUE (benchmark, name));
                 CREATE TABLE IF NOT EXISTS runs (
                    id INTEGER PRIMARY KEY,
                    session INTEGER NOT NULL REFERENCES sessions(id),
                    variant INTEGER NOT NULL REFERENCES variants(id),
                    seq INTEGER NOT NULL,
                    wall_s REAL NOT NULL,
                    user_s REAL NOT NULL,
                    sys_s REAL NOT NULL,
                    started REAL NOT NULL,
                    identity TEXT);
                 CREATE TABLE IF NOT EXISTS counters (
                    id INTEGER PRIMARY KEY,
                    session INTEGER NOT NULL REFERENCES sessions(id),
                    variant INTEGER NOT NULL REFERENCES variants(id),
                    name TEXT NOT NULL,
                    value REAL NOT NULL,
                    source TEXT NOT NULL,
                    identity TEXT);
                 CREATE TABLE IF NOT EXISTS counter_sources (
                    session INTEGER NOT NULL REFERENCES sessions(id),
                    source TEXT NOT NULL,
                    description TEXT NOT NULL);
                 CREATE TABLE IF NOT EXISTS run_metrics (
                    run INTEGER NOT NULL REFERENCES runs(id),
                    name TEXT NOT NULL,
                    value REAL NOT NULL,
                    unit TEXT NOT NULL,
                    better TEXT NOT NULL,
                    source TEXT NOT NULL);
                 CREATE TABLE IF NOT EXISTS heatmaps (
                    id INTEGER PRIMARY KEY,
                    label TEXT NOT NULL,
                    binary TEXT NOT NULL,
                    created REAL NOT NULL,
                    png BLOB NOT NULL,
                    svg TEXT NOT NULL,
                    summary TEXT NOT NULL);",
            )
            .map_err(&e)?;
        let mut upgraded = None;
        if version != 0 && version < 3 {
            for table in ["runs", "counters"] {
                if !self.has_column(table, "identity")? {
                    self.conn
                        .execute_batch(&format!("ALTER TABLE {table} ADD COLUMN identity TEXT"))
                        .map_err(self.err())?;
                }
            }
            let runs: i64 = self
                .conn
                .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
                .map_err(self.err())?;
            upgraded = Some(runs as usize);
        }
        self.conn
            .execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))
            .map_err(self.err())?;
        Ok(upgraded)
    }

    fn has_column(&self, table: &str, column: &str) -> Result<bool, StoreError> {
        let mut st = self
            .conn
            .prepare(&format!("PRAGMA table_info({table})"))
            .map_err(self.err())?;
        let names = st
            .query_map([], |r| r.get::<_, String>(1))
            .map_err(self.err())?
            .collect::<Result<Vec<_>, _>>()
            .map_err(self.err())?;
        Ok(names.iter().any(|n| n == column))
    }

    /// When opening upgraded an older store: how many runs it held, whose program is
    /// unknown (stored before kfdo recorded it).
    pub fn upgraded_runs(&self) -> Option<usize> {
        self.upgraded_runs
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn begin_session(
        &self,
        benchmark: &str,
        environment: &impl serde::Serialize,
        settings: &impl serde::Serialize,
    ) -> Result<i64, StoreError> {
        let env = serde_json::to_string(environment).unwrap_or_else(|_| "{}".into());
        let set = serde_json::to_string(settings).unwrap_or_else(|_| "{}".into());
        self.conn
            .execute(
                "INSERT INTO sessions (benchmark, started, status, environment, settings) VALUES (?1, ?2, 'running', ?3, ?4)",
                params![benchmark, now_unix(), env, set],
            )
            .map_err(self.err())?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The id of variant `v` of `benchmark`, registering it on first use.
    /// The same name with another command is a conflict.
    pub fn variant(&self, benchmark: &str, v: &Variant) -> Result<i64, StoreError> {
        let e = self.err();
        let found: Option<(i64, String)> = self
            .conn
            .query_row(
                "SELECT id, command FROM variants WHERE benchmark = ?1 AND name = ?2",
                params![benchmark, v.name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(&e)?;
        match found {
            Some((id, cmd)) if cmd == v.command => {
                if v.flags.is_some() {
                    self.conn
                        .execute(
                            "UPDATE variants SET flags = ?1 WHERE id = ?2",
                            params![v.flags, id],
                        )
                        .map_err(&e)?;
                }
                Ok(id)
            }
            Some((_, cmd)) => Err(StoreError::Conflict {
                path: self.path.clone(),
                benchmark: benchmark.into(),
                name: v.name.clone(),
                stored: cmd,
                given: v.command.clone(),
            }),
            None => {
                self.conn
                    .execute(
                        "INSERT INTO variants (benchmark, name, command, flags) VALUES (?1, ?2, ?3, ?4)",
                        params![benchmark, v.name, v.command, v.flags],
                    )
                    .map_err(&e)?;
                Ok(self.conn.last_insert_rowid())
            }
        }
    }

    /// Timings already stored for a variant (all sessions).
    pub fn wall_times(&self, variant_id: i64) -> Result<Vec<f64>, StoreError> {
        let e = self.err();
        let mut st = self
            .conn
            .prepare("SELECT wall_s FROM runs WHERE variant = ?1 ORDER BY id")
            .map_err(&e)?;
        let rows = st.query_map([variant_id], |r| r.get(0)).map_err(&e)?;
        rows.collect::<Result<Vec<f64>, _>>().map_err(&e)
    }

    /// Timings stored for a variant with this identity (all sessions, or only those
    /// after `after_session`).
    pub fn wall_times_of(
        &self,
        variant_id: i64,
        identity: Option<&str>,
        after_session: i64,
    ) -> Result<Vec<f64>, StoreError> {
        let e = self.err();
        let mut st = self
            .conn
            .prepare(
                "SELECT wall_s FROM runs WHERE variant = ?1 AND identity IS ?2 AND session > ?3
                 ORDER BY id",
            )
            .map_err(&e)?;
        let rows = st
            .query_map(params![variant_id, identity, after_session], |r| r.get(0))
            .map_err(&e)?;
        rows.collect::<Result<Vec<f64>, _>>().map_err(&e)
    }

    /// The identities of a variant's stored runs, the most recently used first.
    pub fn series(&self, variant_id: i64) -> Result<Vec<Series>, StoreError> {
        let e = self.err();
        let mut st = self
            .conn
            .prepare(
                "SELECT identity, COUNT(*), MAX(session) FROM runs WHERE variant = ?1
                 GROUP BY identity ORDER BY MAX(session) DESC",
            )
            .map_err(&e)?;
        let rows = st
            .query_map([variant_id], |r| {
                Ok(Series {
                    identity: r.get(0)?,
                    runs: r.get::<_, i64>(1)? as usize,
                    last_session: r.get(2)?,
                })
            })
            .map_err(&e)?;
        rows.collect::<Result<_, _>>().map_err(&e)
    }

    /// The identity of each stored run of a variant, by (session, seq).
    pub fn run_identities(
        &self,
        variant_id: i64,
    ) -> Result<std::collections::HashMap<(i64, i64), Option<String>>, StoreError> {
        let e = self.err();
        let mut st = self
            .conn
            .prepare("SELECT session, seq, identity FROM runs WHERE variant = ?1")
            .map_err(&e)?;
        let rows = st
            .query_map([variant_id], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))
            .map_err(&e)?;
        rows.collect::<Result<_, _>>().map_err(&e)
    }

    /// The counters of a variant from the latest session that counted it.
    pub fn latest_counters(&self, variant_id: i64) -> Result<Option<SessionCounters>, StoreError> {
        self.counters_where(variant_id, None, false)
    }

    /// The counters of a variant from the latest session that counted this identity.
    pub fn counters_of(
        &self,
        variant_id: i64,
        identity: Option<&str>,
    ) -> Result<Option<SessionCounters>, StoreError> {
        self.counters_where(variant_id, identity, true)
    }

    /// The latest session's counters of a variant, of `identity` if `match_identity`.
    fn counters_where(
        &self,
        variant_id: i64,
        identity: Option<&str>,
        match_identity: bool,
    ) -> Result<Option<SessionCounters>, StoreError> {
        let e = self.err();
        let found: Option<(i64, f64)> = self
            .conn
            .query_row(
                "SELECT c.session, s.started FROM counters c JOIN sessions s ON s.id = c.session
                 WHERE c.variant = ?1 AND (c.identity IS ?2 OR NOT ?3)
                 ORDER BY c.session DESC LIMIT 1",
                params![variant_id, identity, match_identity],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(&e)?;
        let Some((session, started_unix)) = found else {
            return Ok(None);
        };
        let mut st = self
            .conn
            .prepare(
                "SELECT name, value, source FROM counters WHERE variant = ?1 AND session = ?2
                 AND (identity IS ?3 OR NOT ?4) ORDER BY id",
            )
            .map_err(&e)?;
        let counters = st
            .query_map(
                params![variant_id, session, identity, match_identity],
                |r| {
                    Ok(Counter {
                        name: r.get(0)?,
                        value: r.get(1)?,
                        source: r.get(2)?,
                    })
                },
            )
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?;
        Ok(Some(SessionCounters {
            session,
            started_unix,
            counters,
        }))
    }

    /// Commits one finished run and its metrics (one transaction: durable at once), its
    /// program's identity unknown.
    pub fn add_run(&self, session: i64, variant_id: i64, r: &RunResult) -> Result<(), StoreError> {
        self.add_run_of(session, variant_id, r, None)
    }

    /// [`Store::add_run`], with the identity of what the run ran.
    pub fn add_run_of(
        &self,
        session: i64,
        variant_id: i64,
        r: &RunResult,
        identity: Option<&str>,
    ) -> Result<(), StoreError> {
        let e = self.err();
        let tx = self.conn.unchecked_transaction().map_err(&e)?;
        tx.execute(
            "INSERT INTO runs (session, variant, seq, wall_s, user_s, sys_s, started, identity) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![session, variant_id, r.seq as i64, r.wall_s, r.user_s, r.sys_s, r.started_unix, identity],
        )
        .map_err(&e)?;
        let run = tx.last_insert_rowid();
        for m in &r.metrics {
            tx.execute(
                "INSERT INTO run_metrics (run, name, value, unit, better, source) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![run, m.name, m.value, m.unit, m.better.name(), m.source],
            )
            .map_err(&e)?;
        }
        tx.commit().map_err(&e)
    }

    pub fn add_counters(
        &self,
        session: i64,
        variant_id: i64,
        counters: &[Counter],
    ) -> Result<(), StoreError> {
        self.add_counters_of(session, variant_id, counters, None)
    }

    /// [`Store::add_counters`], with the identity of what the counted run ran.
    pub fn add_counters_of(
        &self,
        session: i64,
        variant_id: i64,
        counters: &[Counter],
        identity: Option<&str>,
    ) -> Result<(), StoreError> {
        let e = self.err();
        for c in counters {
            self.conn
                .execute(
                    "INSERT INTO counters (session, variant, name, value, source, identity) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![session, variant_id, c.name, c.value, c.source, identity],
                )
                .map_err(&e)?;
        }
        Ok(())
    }

    pub fn add_counter_source(
        &self,
        session: i64,
        source: &str,
        description: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO counter_sources (session, source, description) VALUES (?1, ?2, ?3)",
                params![session, source, description],
            )
            .map_err(self.err())?;
        Ok(())
    }

    pub fn set_notes(&self, session: i64, notes: &[Warning]) -> Result<(), StoreError> {
        let n = serde_json::to_string(notes).unwrap_or_else(|_| "[]".into());
        self.conn
            .execute(
                "UPDATE sessions SET notes = ?1 WHERE id = ?2",
                params![n, session],
            )
            .map_err(self.err())?;
        Ok(())
    }

    /// How many timed runs a session holds.
    pub fn session_runs(&self, session: i64) -> Result<usize, StoreError> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM runs WHERE session = ?1",
                [session],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as usize)
            .map_err(self.err())
    }

    pub fn finish_session(&self, session: i64, status: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE sessions SET status = ?1, finished = ?2 WHERE id = ?3",
                params![status, now_unix(), session],
            )
            .map_err(self.err())?;
        Ok(())
    }

    pub fn add_heatmap(
        &self,
        label: &str,
        binary: &str,
        png: &[u8],
        svg: &str,
        summary: &impl serde::Serialize,
    ) -> Result<i64, StoreError> {
        let s = serde_json::to_string(summary).unwrap_or_else(|_| "{}".into());
        self.conn
            .execute(
                "INSERT INTO heatmaps (label, binary, created, png, svg, summary) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![label, binary, now_unix(), png, svg, s],
            )
            .map_err(self.err())?;
        Ok(self.conn.last_insert_rowid())
    }

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
                    .prepare(
                        "SELECT name, value, source FROM counters WHERE variant = ?1 AND session =
                           (SELECT MAX(session) FROM counters WHERE variant = ?1) ORDER BY id",
                    )
                    .map_err(&e)?;
                let counters = cs
                    .query_map([id], |r| {
                        Ok(Counter {
                            name: r.get(0)?,
                            value: r.get(1)?,
                            source: r.get(2)?,
                        })
                    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run(seq: usize, wall: f64) -> RunResult {
        RunResult {
            metrics: Vec::new(),
            variant: 0,
            index: seq,
            seq,
            wall_s: wall,
            user_s: wall,
            sys_s: 0.0,
            started_unix: 1.0,
        }
    }

    #[test]
    fn append_reopen_and_conflict() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let a = Variant {
            flags: Some("-O0".into()),
            ..Variant::new("A", "./a")
        };
        let b = Variant::new("B <&>", "./b");
        {
            let s = Store::open(&path).unwrap();
            let sess = s
                .begin_session("bench", &serde_json::json!({"cpu": "x"}), &())
                .unwrap();
            let (ia, ib) = (
                s.variant("bench", &a).unwrap(),
                s.variant("bench", &b).unwrap(),
            );
            s.add_run(sess, ia, &run(0, 1.0)).unwrap();
            s.add_run(sess, ib, &run(1, 0.5)).unwrap();
            s.add_counters(
                sess,
                ia,
                &[Counter {
                    name: "instructions".into(),
                    value: 10.0,
                    source: "cachegrind".into(),
                }],
            )
            .unwrap();
            // No finish_session: as if the process was killed.
        }
        let s = Store::open(&path).unwrap();
        let sess = s.begin_session("bench", &(), &()).unwrap();
        let ia = s.variant("bench", &a).unwrap();
        assert_eq!(s.wall_times(ia).unwrap(), vec![1.0]);
        s.add_run(sess, ia, &run(0, 1.1)).unwrap();
        s.finish_session(sess, "complete").unwrap();
        let conflict = Variant {
            command: "./other".into(),
            ..a.clone()
        };
        let e = s.variant("bench", &conflict).unwrap_err().to_string();
        assert!(e.contains("already has a variant 'A'"), "{e}");

        let c = s.load().unwrap();
        assert_eq!(c.benchmarks.len(), 1);
        let bm = &c.benchmarks[0];
        assert_eq!(bm.variants[0].variant, a);
        assert_eq!(bm.variants[1].variant.name, "B <&>");
        assert_eq!(bm.variants[0].runs.len(), 2);
        assert_eq!(bm.variants[0].counters.len(), 1);
        assert_eq!(bm.sessions.len(), 2);
        assert_eq!(bm.sessions[0].status, "running");
        assert_eq!(bm.sessions[1].status, "complete");
    }

    #[test]
    fn a_version_2_store_gains_identities_its_runs_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2.db");
        let v = Variant::new("P", "./prog");
        {
            // A store as version 2 wrote it: runs and counters without an identity.
            let s = Store::open(&path).unwrap();
            s.conn
                .execute_batch(
                    "DROP TABLE runs; DROP TABLE counters;
                     CREATE TABLE runs (id INTEGER PRIMARY KEY, session INTEGER NOT NULL,
                       variant INTEGER NOT NULL, seq INTEGER NOT NULL, wall_s REAL NOT NULL,
                       user_s REAL NOT NULL, sys_s REAL NOT NULL, started REAL NOT NULL);
                     CREATE TABLE counters (id INTEGER PRIMARY KEY, session INTEGER NOT NULL,
                       variant INTEGER NOT NULL, name TEXT NOT NULL, value REAL NOT NULL,
                       source TEXT NOT NULL);
                     PRAGMA user_version = 2;",
                )
                .unwrap();
            let sess = s.begin_session("b", &(), &()).unwrap();
            let id = s.variant("b", &v).unwrap();
            for i in 0..2 {
                s.conn
                    .execute(
                        "INSERT INTO runs (session, variant, seq, wall_s, user_s, sys_s, started)
                         VALUES (?1, ?2, ?3, 1.0, 1.0, 0.0, 1.0)",
                        params![sess, id, i],
                    )
                    .unwrap();
            }
        }
        let s = Store::open(&path).unwrap();
        assert_eq!(s.upgraded_runs(), Some(2));
        let sess = s.begin_session("b", &(), &()).unwrap();
        let id = s.variant("b", &v).unwrap();
        s.add_run_of(sess, id, &run(0, 2.0), Some("build-id:aa"))
            .unwrap();
        let series = s.series(id).unwrap();
        assert_eq!(
            series
                .iter()
                .map(|x| (x.identity.as_deref(), x.runs, x.last_session))
                .collect::<Vec<_>>(),
            [(Some("build-id:aa"), 1, sess), (None, 2, 1)]
        );
        assert_eq!(s.wall_times_of(id, None, 0).unwrap(), [1.0, 1.0]);
        assert_eq!(s.wall_times_of(id, Some("build-id:aa"), 0).unwrap(), [2.0]);
        // Opened again, it is current: nothing more to say.
        drop(s);
        assert_eq!(Store::open(&path).unwrap().upgraded_runs(), None);
    }

    #[test]
    fn missing_store_says_what_to_run() {
        let e = Store::open_existing(Path::new("/nonexistent/x.db"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("kfdo compare --store"), "{e}");
    }

    #[test]
    fn metrics_round_trip_and_a_version_1_store_is_upgraded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.db");
        {
            // A store as version 1 wrote it: no run_metrics table.
            let c = Connection::open(&path).unwrap();
            c.execute_batch(
                "CREATE TABLE runs (id INTEGER PRIMARY KEY, session INTEGER NOT NULL,
                   variant INTEGER NOT NULL, seq INTEGER NOT NULL, wall_s REAL NOT NULL,
                   user_s REAL NOT NULL, sys_s REAL NOT NULL, started REAL NOT NULL);
                 PRAGMA user_version = 1;",
            )
            .unwrap();
        }
        let s = Store::open(&path).unwrap();
        let sess = s.begin_session("k", &(), &()).unwrap();
        let v = s.variant("k", &Variant::new("base", "boot base")).unwrap();
        let mut r = run(0, 1.5);
        r.metrics = vec![
            Metric::new("ops/s", 1234.5, "ops/s", Better::Higher, "workload"),
            Metric::new("kernel L1i misses", 9.0e6, "", Better::Lower, "emulated"),
        ];
        s.add_run(sess, v, &r).unwrap();
        s.add_run(sess, v, &run(1, 1.6)).unwrap();
        let c = s.load().unwrap();
        let runs = &c.benchmarks[0].variants[0].runs;
        assert_eq!(runs[0].metrics, r.metrics);
        assert!(runs[1].metrics.is_empty());
        let version: i32 = s
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
    }
}
