//! `kfdo compare` end to end with cheap commands: failures name the variant,
//! the run and the command's stderr; SIGINT keeps finished runs in the store
//! and the next report shows them; --json writes the verdict.

use crate::common::Clang;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn kfdo() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kfdo"))
}

fn stored_runs(db: &Path) -> usize {
    if !db.exists() {
        return 0;
    }
    let Ok(store) = kfdo_bench::store::Store::open_existing(db) else {
        return 0;
    };
    store
        .load()
        .map(|c| {
            c.benchmarks
                .iter()
                .flat_map(|b| b.variants.iter())
                .map(|v| v.runs.len())
                .sum()
        })
        .unwrap_or(0)
}

/// The state of each session in the store, oldest first.
fn session_states(db: &Path) -> Vec<String> {
    let c = kfdo_bench::store::Store::open_existing(db)
        .unwrap()
        .load()
        .unwrap();
    c.benchmarks
        .iter()
        .flat_map(|b| &b.sessions)
        .map(|s| s.status.clone())
        .collect()
}

/// `kfdo compare ARGS` in its own process group with stderr piped, as a terminal's
/// Ctrl-C would reach it: kfdo and the running command both get the SIGINT.
fn spawn_in_own_group(args: &[&str], db: &Path) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    kfdo()
        .arg("compare")
        .args(["--store"])
        .arg(db)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap()
}

/// SIGINT to the child's process group, as a terminal's Ctrl-C.
fn ctrl_c(child: &std::process::Child) {
    // SAFETY: kill takes plain integers; the group is the one the child leads.
    let rc = unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    assert_eq!(rc, 0, "kill: {}", std::io::Error::last_os_error());
}

#[test]
fn sigint_while_counting_says_what_was_kept_and_marks_the_session() {
    if !kfdo_testkit::require_tools(&["valgrind"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    // A counts its own runs: the three timed ones are short, the fourth (counted under
    // cachegrind) spins in the shell itself (a child would let the shell wait out the
    // SIGINT, as shells do), so the SIGINT lands while A is counted.
    let count = dir.path().join("count");
    let a = format!(
        "n=$(cat {0} 2>/dev/null || echo 0); echo $((n+1)) > {0}; \
         if [ $n -ge 3 ]; then i=0; while [ $i -lt 100000000 ]; do i=$((i+1)); done; fi",
        count.display()
    );
    let mut child = spawn_in_own_group(
        &[
            "--counters",
            "cachegrind",
            "--warmup",
            "0",
            "--runs",
            "3",
            "--benchmark",
            "sleepy",
            "--name",
            "A",
            &a,
            "--name",
            "B",
            "sleep 0.02",
        ],
        &db,
    );
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let n = std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
        assert!(n > 0, "kfdo ended before counting:\n{seen}");
        seen.push_str(&line);
        if line.contains("counting 'A' with cachegrind") {
            break;
        }
    }
    // Once the counted run of A has begun (it wrote its count), Ctrl-C.
    wait_until("A's counted run did not start", || {
        std::fs::read_to_string(&count).unwrap_or_default().trim() == "4"
    });
    ctrl_c(&child);
    let status = exit_within(
        &mut child,
        60,
        "kfdo compare went on counting 60 s after SIGINT",
    );
    std::io::Read::read_to_string(&mut stderr, &mut seen).unwrap();
    assert_eq!(status.code(), Some(130), "{seen}");
    assert!(
        seen.contains(&format!(
            "kfdo compare: interrupted during the counter runs; kept 6 timed run(s) of 2 \
             command(s) in {} session 1 (marked interrupted); counters not taken",
            db.display()
        )),
        "{seen}"
    );
    assert_eq!(stored_runs(&db), 6);
    assert_eq!(session_states(&db), ["interrupted"]);
}

#[test]
fn a_second_sigint_leaves_at_once_and_marks_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    // A command that ignores SIGINT, as one busy in a shell's wait can: its first three
    // runs are short, the fourth sleeps, so only a second Ctrl-C ends kfdo in time.
    let count = dir.path().join("count");
    let a = format!(
        "trap '' INT; n=$(cat {0} 2>/dev/null || echo 0); echo $((n+1)) > {0}; \
         if [ $n -ge 3 ]; then sleep 30; fi",
        count.display()
    );
    let mut child = spawn_in_own_group(
        &[
            "--counters",
            "none",
            "--warmup",
            "0",
            "--runs",
            "10",
            "--benchmark",
            "stubborn",
            "--name",
            "A",
            &a,
        ],
        &db,
    );
    wait_until("run 4 did not start", || {
        std::fs::read_to_string(&count).unwrap_or_default().trim() == "4"
    });
    ctrl_c(&child);
    std::thread::sleep(Duration::from_millis(300));
    ctrl_c(&child);
    let status = exit_within(&mut child, 20, "a second SIGINT did not end kfdo compare");
    // The sleeping command is left behind in the group: end it.
    // SAFETY: kill takes plain integers; the group is the one the child led.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        err.contains(&format!(
            "kfdo compare: stopped at once by a second Ctrl-C; kept 3 timed run(s) in {} \
             session 1 (marked interrupted)",
            db.display()
        )),
        "{err}"
    );
    assert_eq!(session_states(&db), ["interrupted"]);
}

#[test]
fn without_a_terminal_finished_runs_are_plain_lines_and_quiet_silences_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let compare = |quiet: bool| {
        let mut cmd = kfdo();
        if quiet {
            cmd.arg("--quiet");
        }
        cmd.args(["compare", "--counters", "none", "--runs", "2", "--store"])
            .arg(&db)
            .args(["--name", "A", "sleep 0.01"])
            .output()
            .unwrap()
    };
    // stderr is a pipe here, as under `2>&1 | tee log`: no spinner, so plain lines.
    let out = compare(false);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warm-up run 1 of 'A' done\n"), "{err}");
    assert!(err.contains("timed run 1 of 'A': "), "{err}");
    assert!(
        !err.contains('\r') && !err.contains('\u{1b}'),
        "no terminal control in a log: {err:?}"
    );
    let out = compare(true);
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn failing_command_names_variant_run_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = kfdo()
        .args(["compare", "--counters", "none", "--runs", "3", "--store"])
        .arg(&db)
        .args(["--name", "good", "true", "--name", "broken build"])
        .arg("echo 'speedtest1: no such table: t1' >&2; exit 4")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("variant 'broken build', warm-up run 1"),
        "{err}"
    );
    assert!(err.contains("exited with status 4"), "{err}");
    assert!(err.contains("speedtest1: no such table: t1"), "{err}");

    // Without warm-up it is timed run 1, and the good variant's finished run is kept.
    let out = kfdo()
        .args([
            "compare",
            "--counters",
            "none",
            "--warmup",
            "0",
            "--runs",
            "3",
            "--benchmark",
            "b2",
            "--store",
        ])
        .arg(&db)
        .args(["--name", "good", "true", "--name", "crash"])
        .arg("echo 'Segmentation fault' >&2; kill -SEGV $$")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("variant 'crash', timed run 1"), "{err}");
    assert!(err.contains("killed by signal 11 (SIGSEGV)"), "{err}");
    assert!(err.contains("1 finished run(s) are kept"), "{err}");
}

#[test]
fn sigint_keeps_finished_runs_and_report_shows_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut child = spawn_in_own_group(
        &[
            "--counters",
            "none",
            "--warmup",
            "0",
            "--runs",
            "200",
            "--benchmark",
            "sleepy",
            "--name",
            "A",
            "sleep 0.05",
            "--name",
            "B",
            "sleep 0.06",
        ],
        &db,
    );
    wait_until("no runs stored in 60 s", || stored_runs(&db) >= 6);
    ctrl_c(&child);
    let out = {
        let mut stderr = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        let st = child.wait().unwrap();
        (st, stderr)
    };
    assert_eq!(out.0.code(), Some(130), "{}", out.1);
    let kept = stored_runs(&db);
    assert!((6..400).contains(&kept), "{kept} runs kept");
    assert!(
        out.1.contains(&format!(
            "kfdo compare: interrupted during the timed runs; kept {kept} timed run(s) of 2 \
             command(s) in {} session 1 (marked interrupted)",
            db.display()
        )),
        "{}",
        out.1
    );
    assert!(
        !out.1.contains("counters"),
        "no counters were asked for: {}",
        out.1
    );
    assert_eq!(session_states(&db), ["interrupted"]);

    let rep = dir.path().join("rep");
    let st = kfdo()
        .args(["report", "--store"])
        .arg(&db)
        .arg("-o")
        .arg(&rep)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let html = std::fs::read_to_string(rep.join("index.html")).unwrap();
    assert!(
        html.contains(&format!("{kept} timed run(s)")),
        "report does not count the kept runs"
    );
    assert!(
        html.contains("was interrupted"),
        "report does not say the session was interrupted"
    );
    let md = std::fs::read_to_string(rep.join("report.md")).unwrap();
    assert!(md.contains("| A |") && md.contains("| B |"), "{md}");
}

#[test]
fn json_verdict_and_pooling_across_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let json = dir.path().join("v.json");
    for _ in 0..2 {
        let out = kfdo()
            .args([
                "--quiet",
                "compare",
                "--counters",
                "none",
                "--runs",
                "3",
                "--benchmark",
                "pool",
                "--store",
            ])
            .arg(&db)
            .arg("--json")
            .arg(&json)
            .args(["--name", "fast", "true", "--name", "slow", "sleep 0.1"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "--quiet printed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let vars = &v["benchmark"]["variants"];
    assert_eq!(vars[0]["name"], "fast");
    // Two sessions of three runs each, pooled.
    assert_eq!(vars[1]["wall"]["n"], 6);
    // Only the direction: `sleep 0.1` takes at least 0.1 s whatever the load, which
    // `true` would need a stalled machine to reach on average (significance of wall
    // times depends on the machine being quiet; stats' own tests judge synthetic samples).
    let ratio = vars[1]["vs_baseline"]["ratio"]["estimate"]
        .as_f64()
        .unwrap();
    assert!(ratio > 1.0, "sleep 0.1 measured faster than true: {ratio}");
    assert!(vars[1]["wall"]["min"].as_f64().unwrap() >= 0.1, "{vars}");

    // A name reused for another command is refused, not mixed in.
    let out = kfdo()
        .args([
            "compare",
            "--counters",
            "none",
            "--runs",
            "1",
            "--benchmark",
            "pool",
            "--store",
        ])
        .arg(&db)
        .args(["--name", "fast", "sleep 0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already has a variant 'fast'"));
}

#[test]
fn adaptive_run_count_stops_at_target_or_max() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let json = dir.path().join("v.json");
    // A target every interval meets (±1,000,000 %: a run would have to take 10,000
    // times the other's), so load cannot keep it from stopping at the minimum.
    let out = kfdo()
        .args([
            "compare",
            "--counters",
            "none",
            "--ci-target",
            "1000000",
            "--min-runs",
            "3",
            "--max-runs",
            "20",
            "--store",
        ])
        .arg(&db)
        .arg("--json")
        .arg(&json)
        .args(["sleep 0.01", "sleep 0.012"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["ending"], "TargetReached");
    assert_eq!(v["benchmark"]["variants"][0]["wall"]["n"], 3);

    // An impossible target stops at --max-runs and says so.
    let out = kfdo()
        .args([
            "compare",
            "--counters",
            "none",
            "--ci-target",
            "0.0001",
            "--max-runs",
            "4",
            "--benchmark",
            "tight",
            "--store",
        ])
        .arg(&db)
        .arg("--json")
        .arg(&json)
        .args(["true", "sleep 0.001"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["benchmark"]["variants"][1]["wall"]["n"], 4);
    assert!(v["ending"]["TargetMissed"].is_object(), "{}", v["ending"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("target was not reached"));
}

/// A tiny C program built with clang-19 at `opt` into `exe` (the same path each time,
/// as a rebuild leaves it).
fn build_tiny(exe: &Path, opt: &str) {
    let src = exe.with_extension("c");
    std::fs::write(
        &src,
        "int main(void) { volatile unsigned long s = 0;\n\
         for (unsigned long i = 0; i < 300000; i++) s += i * i;\n\
         return 0; }\n",
    )
    .unwrap();
    Clang::new().flag(opt).out(exe).input(&src).run();
}

/// `kfdo compare` of the one command `exe` as variant P; its stdout, stderr and verdict.
fn compare_p(db: &Path, exe: &Path, extra: &[&str]) -> (String, String, serde_json::Value) {
    let json = db.with_extension("json");
    let out = kfdo()
        .args(["compare", "--warmup", "0", "--benchmark", "tiny", "--store"])
        .arg(db)
        .arg("--json")
        .arg(&json)
        .args(extra)
        .args(["--name", "P"])
        .arg(exe)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let v = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (stdout, stderr, v)
}

#[test]
fn a_rebuilt_program_starts_a_new_series_and_counters_say_where_they_come_from() {
    if !kfdo_testkit::require_tools(&["clang-19", "valgrind"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let exe = dir.path().join("prog");
    let runs = |v: &serde_json::Value| v["benchmark"]["variants"][0]["wall"]["n"].as_u64();
    let counters = |v: &serde_json::Value| v["benchmark"]["counters"].as_array().unwrap().len();

    build_tiny(&exe, "-O2");
    let o2 = kfdo_bench::identity::of_file(&exe).unwrap();
    // Session 1 counts; session 2 does not, and shows session 1's counters, labelled.
    let (_, _, v) = compare_p(&db, &exe, &["--runs", "3", "--counters", "cachegrind"]);
    assert_eq!(
        (runs(&v), v["counters_from"].as_array().unwrap().len()),
        (Some(3), 0)
    );
    assert!(counters(&v) > 0, "{v}");
    let (stdout, stderr, v) = compare_p(&db, &exe, &["--runs", "3", "--counters", "none"]);
    assert_eq!(runs(&v), Some(6), "the same program pools: {stderr}");
    assert!(!stderr.contains("now runs"), "{stderr}");
    assert!(counters(&v) > 0, "{v}");
    assert_eq!(v["counters_from"][0]["session"], 1, "{v}");
    assert!(
        stdout.contains("(counters of 'P' are from session 1, 20"),
        "counters of another session unlabelled:\n{stdout}"
    );

    // Rebuilt at -O0 under the same path and command: a new series, said loudly, and
    // none of the old program's counters beside it.
    build_tiny(&exe, "-O0");
    let o0 = kfdo_bench::identity::of_file(&exe).unwrap();
    assert_ne!(o0, o2);
    let (stdout, stderr, v) = compare_p(&db, &exe, &["--runs", "3", "--counters", "none"]);
    assert!(
        stderr.contains(&format!(
            "kfdo compare: 'P' (`{}`) now runs {o0}, but 6 earlier run(s) ran {o2} (latest in \
             session 2); they are set aside and a new series starts",
            exe.display()
        )),
        "{stderr}"
    );
    assert_eq!(runs(&v), Some(3), "the -O2 runs were pooled: {v}");
    assert_eq!(counters(&v), 0, "the -O2 build's counters shown: {stdout}");
    assert!(!stdout.contains("counters of"), "{stdout}");

    // --pool pools them anyway (and labels session 1's counters); --fresh ignores them.
    let (stdout, stderr, v) =
        compare_p(&db, &exe, &["--runs", "2", "--counters", "none", "--pool"]);
    assert!(
        stderr.contains("pooled with them anyway, as --pool asks"),
        "{stderr}"
    );
    assert_eq!(runs(&v), Some(11));
    assert!(
        stdout.contains("(counters of 'P' are from session 1, "),
        "{stdout}"
    );
    let (_, _, v) = compare_p(&db, &exe, &["--runs", "2", "--counters", "none", "--fresh"]);
    assert_eq!((runs(&v), counters(&v)), (Some(2), 0));

    // The store holds both series, each run with its program.
    let store = kfdo_bench::store::Store::open_existing(&db).unwrap();
    let contents = store.load().unwrap();
    let id = contents.benchmarks[0].variants[0].id;
    let series: Vec<(Option<String>, usize)> = store
        .series(id)
        .unwrap()
        .into_iter()
        .map(|s| (s.identity, s.runs))
        .collect();
    assert_eq!(series, [(Some(o0), 7), (Some(o2), 6)]);

    // `kfdo report` judges the same series: the -O0 build's 7 runs, none of its counters
    // (it was never counted), and says the -O2 runs were left out.
    let report = dir.path().join("report");
    let json = dir.path().join("report.json");
    kfdo_testkit::run_ok(
        kfdo()
            .args(["report", "--store"])
            .arg(&db)
            .arg("-o")
            .arg(&report)
            .arg("--json-out")
            .arg(&json),
    );
    let a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let b = &a["benchmarks"][0];
    assert_eq!(b["variants"][0]["wall"]["n"], 7, "{b}");
    assert_eq!(b["counters"].as_array().map(Vec::len), Some(0), "{b}");
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(
        md.contains(
            "'P': 6 earlier run(s) ran another build of its program (the binary changed \
             since); only the latest build's 7 run(s) and its counters are shown"
        ),
        "{md}"
    );
}

/// Polls `cond` every 20 ms; fails the test with `what` if it is not true within 60 s.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < Duration::from_secs(60), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The child's exit status once it ends; killed, and the test failed with `what`, if it
/// is still running after `secs`.
fn exit_within(child: &mut std::process::Child, secs: u64, what: &str) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if t0.elapsed() > Duration::from_secs(secs) {
            child.kill().unwrap();
            panic!("{what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
