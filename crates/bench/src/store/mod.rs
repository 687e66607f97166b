//! The results store: one SQLite file, appended to. Every run is committed
//! as it finishes, so an interrupted comparison keeps what it measured, and
//! a later `kfdo compare` with the same benchmark and variant names adds
//! runs to the same series.

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};

use crate::counters::Counter;
use crate::metric::{Better, Metric};
use crate::runner::{Arm, RunResult};
use crate::warning::Warning;

/// 2 added `run_metrics`; 3 added `identity` to `runs` and `counters` (what the command
/// ran: see [`crate::identity`]). Older stores are upgraded in place; their runs keep a
/// NULL identity, unknown, which pools only with itself. 4 added to `counters` the
/// threads the counted program ran and the spread of several counts
/// ([`crate::counters::determinism`]); older counters keep NULLs there, unknown.
const SCHEMA_VERSION: i32 = 4;

/// The columns of `counters` that make a [`Counter`], in [`counter_of_row`]'s order.
const COUNTER_COLUMNS: &str = "name, value, source, threads, spread_min, spread_max, spread_counts";

/// A [`Counter`] from a row selected as [`COUNTER_COLUMNS`].
fn counter_of_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Counter> {
    let spread = match (r.get(4)?, r.get(5)?, r.get(6)?) {
        (Some(min), Some(max), Some(counts)) => Some(crate::counters::Spread { min, max, counts }),
        _ => None,
    };
    Ok(Counter {
        name: r.get(0)?,
        value: r.get(1)?,
        source: r.get(2)?,
        threads: r.get(3)?,
        spread,
    })
}

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
    pub variant: Arm,
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
                    identity TEXT,
                    threads INTEGER,
                    spread_min REAL,
                    spread_max REAL,
                    spread_counts INTEGER);
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
        if version != 0 && version < 4 {
            for (column, kind) in [
                ("threads", "INTEGER"),
                ("spread_min", "REAL"),
                ("spread_max", "REAL"),
                ("spread_counts", "INTEGER"),
            ] {
                if !self.has_column("counters", column)? {
                    self.conn
                        .execute_batch(&format!("ALTER TABLE counters ADD COLUMN {column} {kind}"))
                        .map_err(self.err())?;
                }
            }
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
    pub fn variant(&self, benchmark: &str, v: &Arm) -> Result<i64, StoreError> {
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
            .prepare(&format!(
                "SELECT {COUNTER_COLUMNS} FROM counters WHERE variant = ?1 AND session = ?2
                 AND (identity IS ?3 OR NOT ?4) ORDER BY id"
            ))
            .map_err(&e)?;
        let counters = st
            .query_map(
                params![variant_id, session, identity, match_identity],
                counter_of_row,
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
            let spread = c.spread.as_ref();
            self.conn
                .execute(
                    "INSERT INTO counters (session, variant, name, value, source, identity, threads, \
                     spread_min, spread_max, spread_counts) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                    params![
                        session,
                        variant_id,
                        c.name,
                        c.value,
                        c.source,
                        identity,
                        c.threads,
                        spread.map(|s| s.min),
                        spread.map(|s| s.max),
                        spread.map(|s| s.counts)
                    ],
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

    /// Replaces a session's description of a counter source: once its counts are in, what
    /// holds of them in particular (whether they are deterministic).
    pub fn set_counter_source(
        &self,
        session: i64,
        source: &str,
        description: &str,
    ) -> Result<(), StoreError> {
        let e = self.err();
        let tx = self.conn.unchecked_transaction().map_err(&e)?;
        tx.execute(
            "DELETE FROM counter_sources WHERE session = ?1 AND source = ?2",
            params![session, source],
        )
        .map_err(&e)?;
        tx.execute(
            "INSERT INTO counter_sources (session, source, description) VALUES (?1, ?2, ?3)",
            params![session, source, description],
        )
        .map_err(&e)?;
        tx.commit().map_err(&e)
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
}

mod load;

#[cfg(test)]
mod tests;
