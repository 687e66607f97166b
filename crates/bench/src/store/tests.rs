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
    let a = Arm {
        flags: Some("-O0".into()),
        ..Arm::new("A", "./a")
    };
    let b = Arm::new("B <&>", "./b");
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
            &[Counter::new("instructions", 10.0, "cachegrind")],
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
    let conflict = Arm {
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
    let v = Arm::new("P", "./prog");
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
fn a_version_3_stores_counters_stay_readable_and_new_ones_keep_threads_and_spread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.db");
    let v = Arm::new("P", "./prog");
    let (sess, id) = {
        // A store as version 3 wrote it: counters without threads or spread.
        let s = Store::open(&path).unwrap();
        s.conn
            .execute_batch(
                "DROP TABLE counters;
                 CREATE TABLE counters (id INTEGER PRIMARY KEY, session INTEGER NOT NULL,
                   variant INTEGER NOT NULL, name TEXT NOT NULL, value REAL NOT NULL,
                   source TEXT NOT NULL, identity TEXT);
                 PRAGMA user_version = 3;",
            )
            .unwrap();
        let sess = s.begin_session("b", &(), &()).unwrap();
        let id = s.variant("b", &v).unwrap();
        s.conn
            .execute(
                "INSERT INTO counters (session, variant, name, value, source)
                 VALUES (?1, ?2, 'instructions', 7.0, 'emulated')",
                params![sess, id],
            )
            .unwrap();
        (sess, id)
    };
    let s = Store::open_existing(&path).unwrap();
    let old = s.latest_counters(id).unwrap().unwrap();
    assert_eq!(old.session, sess);
    assert_eq!(
        old.counters,
        [Counter::new("instructions", 7.0, "emulated")]
    );
    assert_eq!(old.counters[0].determinism_label(), None);
    drop(s);

    let s = Store::open(&path).unwrap();
    let sess2 = s.begin_session("b", &(), &()).unwrap();
    let threaded = Counter {
        threads: Some(4),
        spread: Some(crate::counters::Spread {
            min: 9.0,
            max: 12.0,
            counts: 3,
        }),
        ..Counter::new("instructions", 10.0, "emulated")
    };
    s.add_counters(sess2, id, std::slice::from_ref(&threaded))
        .unwrap();
    s.add_counter_source(sess2, "emulated", "before counting")
        .unwrap();
    s.set_counter_source(sess2, "emulated", "after counting")
        .unwrap();
    let c = s.load().unwrap();
    assert_eq!(c.benchmarks[0].variants[0].counters, [threaded]);
    assert_eq!(
        c.benchmarks[0].counter_sources,
        ["emulated: after counting"]
    );
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
    let v = s.variant("k", &Arm::new("base", "boot base")).unwrap();
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
