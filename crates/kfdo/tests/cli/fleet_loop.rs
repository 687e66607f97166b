//! The production loop end to end, on this machine: three simulated hosts, each a real
//! `kfdo collect` (its own host name, class and spool) sampling the machine in windows
//! (IP-only cpu-clock here: no PMU) while a real program runs a different mix of inputs,
//! upload to a real S3 object store (SeaweedFS, started by `scripts/seaweedfs.sh`); the
//! Spark job and `kfdo merge-raw` both merge the store's `s3://` prefix by build-id with a
//! host cap and class weights and must write the same content; that content must equal
//! the hosts' files merged by hand (the contract's arithmetic, done here); the profile
//! `--from-raw` makes of it must equal the one made from the hand merge, and clang-19
//! must build with it.
//!
//! The bad inputs ride on the same hosts: host 1 starts with the store down (it spools,
//! then uploads once the store is up), host 2's spool is asked for by a second collector
//! (refused), host 3's spool gets a file cut short and a wall clock set back between two
//! runs (the file is kept out of the store and counted, the window keeps a unique name).

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::collect::{can_sample_the_machine, events, num, own_build_id, status, Workload};
use common::{build, kfdo, ok, repo_root, run_ok, Clang};

const BUCKET: &str = "kfdo";
const OWN_BUILD_ID: &str = "-DKFDO_TEST_BINARY=fleet_loop";
const HOST_CAP: &str = "2500";

/// A SeaweedFS server of this test, stopped when dropped.
struct Seaweed {
    dir: PathBuf,
}

impl Seaweed {
    fn start(dir: &Path, port: u16) -> Seaweed {
        run_ok(
            Command::new("bash")
                .arg(repo_root().join("scripts/seaweedfs.sh"))
                .arg("start")
                .arg(dir)
                .arg(port.to_string())
                .arg(BUCKET),
        );
        Seaweed {
            dir: dir.to_path_buf(),
        }
    }
}

impl Drop for Seaweed {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(repo_root().join("scripts/seaweedfs.sh"))
            .arg("stop")
            .arg(&self.dir)
            .output();
    }
}

/// A port P with P..P+3 and their gRPC ports (P+10000..P+10003) free, as the script
/// uses them.
fn free_port_block() -> u16 {
    let free = |p: u16| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
    let seed = std::process::id() as u16;
    for i in 0..2000u16 {
        let p = 20000 + (seed.wrapping_add(i.wrapping_mul(7)) % 9000);
        if (0..4).all(|k| free(p + k) && free(p + 10000 + k)) {
            return p;
        }
    }
    panic!("no free block of ports for SeaweedFS");
}

/// The S3 variables of a store on `port` (the ones `scripts/seaweedfs.sh` writes).
fn s3_env(cmd: &mut Command, port: u16) -> &mut Command {
    cmd.env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"))
        .env("AWS_ACCESS_KEY_ID", "kfdo")
        .env("AWS_SECRET_ACCESS_KEY", "kfdo-local-secret")
        .env("AWS_REGION", "us-east-1")
}

/// `kfdo collect run` for a host: IP samples of `program` only, short windows, no CPU
/// budget to speak of (the test machine is shared: the budget has its unit tests).
fn collect(spool: &Path, host: &str, class: &str, program: &str, windows: u64) -> Command {
    let mut c = kfdo();
    c.args(["collect", "run", "--spool"])
        .arg(spool)
        .args(["--host", host, "--host-class", class, "--program", program])
        .args(["--method", "ip", "--window", "1500ms", "--every", "2s"])
        .args(["--windows", &windows.to_string(), "--max-cpu", "400"]);
    c
}

/// Starts `cmd` with its output in `log` (a file: a pipe could fill and stall it).
fn spawn_logged(cmd: &mut Command, log: &Path) -> Child {
    let f = std::fs::File::create(log).unwrap();
    cmd.stdout(Stdio::null())
        .stderr(Stdio::from(f))
        .spawn()
        .unwrap()
}

fn wait_exit(mut child: Child, log: &Path, limit: Duration, what: &str) {
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!(
                "{what} still running after {limit:?}: {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        status.success(),
        "{what} failed ({status}): {}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

/// Every row of a raw file as (kind, from, to) -> count, and its per-file columns.
struct Dumped {
    host: String,
    class: String,
    samples: u64,
    rows: BTreeMap<(String, i64, i64), u64>,
}

fn dump(path: &Path) -> Dumped {
    let text = String::from_utf8(run_ok(kfdo().args(["raw", "dump"]).arg(path)).stdout).unwrap();
    let mut d = Dumped {
        host: String::new(),
        class: String::new(),
        samples: 0,
        rows: BTreeMap::new(),
    };
    for l in text.lines().filter_map(|l| l.strip_prefix("row\t")) {
        let f: Vec<&str> = l.split('\t').collect();
        d.host = f[2].to_string();
        d.class = f[3].to_string();
        d.samples = f[7].parse().unwrap();
        let key = (
            f[8].to_string(),
            f[9].parse().unwrap(),
            f[10].parse().unwrap(),
        );
        *d.rows.entry(key).or_default() += f[11].parse::<u64>().unwrap();
    }
    d
}

fn dump_text(path: &Path) -> String {
    String::from_utf8(run_ok(kfdo().args(["raw", "dump"]).arg(path)).stdout).unwrap()
}

/// The merge contract by hand: a host's counts scaled by cap/S when its samples S pass
/// the cap, then by its class weight (thousandths), floors at each step, zeros dropped.
fn merge_by_hand(
    files: &[Dumped],
    cap: u64,
    weights: &[(&str, u64)],
) -> BTreeMap<(String, i64, i64), u64> {
    let mut host_samples: BTreeMap<&str, u64> = BTreeMap::new();
    for f in files {
        *host_samples.entry(&f.host).or_default() += f.samples;
    }
    let mut sum = BTreeMap::new();
    for f in files {
        let s = host_samples[f.host.as_str()];
        let w = weights
            .iter()
            .find(|(c, _)| *c == f.class)
            .map_or(1000, |(_, w)| *w);
        for (k, &c) in &f.rows {
            let capped = if s > cap {
                (c as u128 * cap as u128 / s as u128) as u64
            } else {
                c
            };
            let weighted = (capped as u128 * w as u128 / 1000) as u64;
            if weighted > 0 {
                *sum.entry(k.clone()).or_default() += weighted;
            }
        }
    }
    sum
}

#[test]
fn three_collectors_upload_and_both_mergers_make_the_hand_merged_profile() {
    let Some(_one_at_a_time) = common::heavy_test("the fleet loop: collect, object store, Spark")
    else {
        return;
    };
    let python = crate::fleet_spark::spark_python();
    let tools = can_sample_the_machine(&["clang-19", "perf", "java", "curl"])
        && kfdo_testkit::require(
            python.is_some(),
            "no pyspark venv at ~/.cache/kfdo/pyspark-venv",
            "bash scripts/install-pyspark.sh",
        );
    if !tools {
        return;
    }
    let python = python.unwrap();
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fleet_loop");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    // A build-id of this test's own, so that other tests' lz never counts.
    let lz = build("lz.c", &root, &own_build_id(OWN_BUILD_ID));
    let build_id = common::build_id_hex(&lz);
    let port = free_port_block();
    let upload = format!("s3://{BUCKET}/fleet/");
    // Each host runs its own copy (same bytes, same build-id) so that its --program picks
    // its own workload by name; hosts run one after another, on a machine of their own.
    let host_bin = |name: &str| {
        let p = root.join(name);
        std::fs::copy(&lz, &p).unwrap();
        p
    };

    // Host 1 (web): the store is down when it starts; it spools, then uploads.
    let spool1 = root.join("spool-web-1");
    let _work = Workload::start(&host_bin("lz-web"), "2000000");
    let log1 = root.join("collect-web-1.log");
    let c1 = spawn_logged(
        s3_env(&mut collect(&spool1, "web-1", "web", "lz-web", 3), port).args([
            "--upload",
            &upload,
            "--drain-timeout",
            "180s",
        ]),
        &log1,
    );
    let started = Instant::now();
    // Until the status file says the store was tried and files wait (0 before it exists).
    let now = |path: &str| {
        let st = status(&spool1);
        path.split('.')
            .fold(&st, |v, k| &v[k])
            .as_u64()
            .unwrap_or(0)
    };
    while !(now("store.consecutive_failures") >= 1 && now("files.waiting") >= 1) {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "host 1 never tried the store: {}",
            events(&status(&spool1))
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let down = status(&spool1);
    assert!(
        down["store"]["last_error"]
            .as_str()
            .unwrap()
            .contains("unreachable"),
        "{down}"
    );
    let _store = Seaweed::start(&root.join("store"), port);
    wait_exit(c1, &log1, Duration::from_secs(300), "host 1's collector");
    drop(_work);
    let s1 = status(&spool1);
    assert_eq!(num(&s1, "windows.recorded"), 3, "{}", events(&s1));
    assert!(num(&s1, "files.spooled") >= 3, "{}", events(&s1));
    assert_eq!(
        num(&s1, "files.uploaded"),
        num(&s1, "files.spooled"),
        "{}",
        events(&s1)
    );
    assert_eq!(num(&s1, "files.waiting"), 0);
    assert_eq!(num(&s1, "store.consecutive_failures"), 0);

    // Host 2 (db): a second collector on its spool is refused while it runs.
    let spool2 = root.join("spool-db-1");
    let _work = Workload::start(&host_bin("lz-db"), "600000");
    let log2 = root.join("collect-db-1.log");
    let c2 = spawn_logged(
        s3_env(&mut collect(&spool2, "db-1", "db", "lz-db", 3), port).args(["--upload", &upload]),
        &log2,
    );
    let started = Instant::now();
    while status(&spool2)["pid"].as_u64().is_none() {
        assert!(started.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(100));
    }
    let before = std::fs::read_dir(spool2.join("ready")).unwrap().count();
    let second = collect(&spool2, "db-1", "db", "lz-db", 1).output().unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "a second collector ran: {err}");
    assert!(
        err.contains("another kfdo collect (pid") && err.contains("--spool"),
        "{err}"
    );
    assert!(std::fs::read_dir(spool2.join("ready")).unwrap().count() >= before);
    wait_exit(c2, &log2, Duration::from_secs(300), "host 2's collector");
    drop(_work);
    let s2 = status(&spool2);
    assert_eq!(
        num(&s2, "files.uploaded"),
        num(&s2, "files.spooled"),
        "{}",
        events(&s2)
    );

    // Host 3 (batch): two windows spooled without a store; one file cut short and the
    // wall clock set back before the run that uploads.
    let spool3 = root.join("spool-batch-1");
    let work = Workload::start(&host_bin("lz-batch"), "4000000");
    run_ok(&mut collect(&spool3, "batch-1", "batch", "lz-batch", 2));
    let mut ready: Vec<PathBuf> = std::fs::read_dir(spool3.join("ready"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    ready.sort();
    assert!(ready.len() >= 2, "host 3 spooled {ready:?}");
    let cut = ready.last().unwrap().clone();
    let bytes = std::fs::read(&cut).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let mut st: serde_json::Value = status(&spool3);
    let future = std::time::SystemTime::now() + Duration::from_secs(3600);
    let future_ns = future
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    st["last_window_unix_ns"] = serde_json::json!(future_ns);
    std::fs::write(spool3.join("status.json"), st.to_string()).unwrap();
    run_ok(
        s3_env(
            &mut collect(&spool3, "batch-1", "batch", "lz-batch", 1),
            port,
        )
        .args(["--upload", &upload]),
    );
    drop(work);
    let s3 = status(&spool3);
    assert_eq!(num(&s3, "windows.clock_went_back"), 1, "{}", events(&s3));
    assert_eq!(num(&s3, "windows.recorded"), 3);
    assert_eq!(
        num(&s3, "next_seq"),
        3,
        "sequence numbers go on across runs"
    );
    assert_eq!(num(&s3, "files.dropped_unreadable"), 1, "{}", events(&s3));
    let cut_name = cut.file_name().unwrap().to_str().unwrap();
    assert!(spool3.join("bad").join(cut_name).exists());
    assert!(events(&s3).contains(cut_name), "{}", events(&s3));
    assert_eq!(num(&s3, "files.waiting"), 0);

    // The store holds every uploaded file, under HOST/BUILD_ID/WINDOW.parquet.
    let listing = list_objects(port, "fleet/");
    let uploaded =
        num(&s1, "files.uploaded") + num(&s2, "files.uploaded") + num(&s3, "files.uploaded");
    assert_eq!(listing.len() as u64, uploaded, "{listing:?}");
    for key in &listing {
        assert!(key.contains(&format!("/{build_id}/")), "{key}");
    }
    let window_of_cut = cut_name.split('.').next().unwrap();
    assert!(
        !listing
            .iter()
            .any(|k| k.starts_with("fleet/batch-1/") && k.contains(window_of_cut)),
        "the file cut short reached the store: {listing:?}"
    );

    // Both mergers over the store's prefix: the same content.
    let opts = |out: &Path| -> Vec<String> {
        let mut v = vec![
            upload.clone(),
            "--build-id".into(),
            build_id.clone(),
            "--host-cap".into(),
            HOST_CAP.into(),
            "--weight".into(),
            "web=1.5".into(),
            "--weight".into(),
            "batch=0.25".into(),
            "-o".into(),
        ];
        v.push(out.display().to_string());
        v
    };
    let ours = root.join("merged.kfdo.parquet");
    let theirs = root.join("merged.spark.parquet");
    ok(
        s3_env(&mut kfdo(), port)
            .arg("merge-raw")
            .args(opts(&ours))
            .output()
            .unwrap(),
        "kfdo merge-raw over s3://",
    );
    ok(
        s3_env(&mut Command::new(&python), port)
            .arg(repo_root().join("fleet/merge_raw.py"))
            .args(["--master", "local[2]"])
            .args(opts(&theirs))
            .output()
            .unwrap(),
        "the Spark job over s3://",
    );
    let merged = dump_text(&ours);
    assert_eq!(merged, dump_text(&theirs), "the two mergers differ");

    // The hosts' files merged by hand (downloaded from the store) give the same counts.
    let local = root.join("downloaded");
    let mut files = Vec::new();
    for key in &listing {
        let dest = local.join(key);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        get_object(port, key, &dest);
        files.push(dump(&dest));
    }
    let cap: u64 = HOST_CAP.parse().unwrap();
    assert!(
        {
            let mut per_host: BTreeMap<&str, u64> = BTreeMap::new();
            for f in &files {
                *per_host.entry(&f.host).or_default() += f.samples;
            }
            per_host.values().any(|&s| s > cap)
        },
        "no host passed the cap: the test would not exercise it"
    );
    let hand = merge_by_hand(&files, cap, &[("web", 1500), ("batch", 250)]);
    let merged_rows = dump(&ours).rows;
    assert_eq!(
        merged_rows, hand,
        "merge-raw's rows differ from the hand merge"
    );

    // The profile from the merged file equals the one from the hand merge (as raw text).
    let hand_raw = root.join("hand.raw");
    std::fs::write(&hand_raw, raw_text(&hand)).unwrap();
    let from_merged = root.join("fleet.txt");
    let from_hand = root.join("hand.txt");
    profile(&lz, &["--from-raw"], &ours, "text", &from_merged);
    profile(
        &lz,
        &["--ip-only", "--unsymbolized-in"],
        &hand_raw,
        "text",
        &from_hand,
    );
    let a = std::fs::read_to_string(&from_merged).unwrap();
    assert!(a.contains("main"), "the fleet profile has no main: {a}");
    assert_eq!(a, std::fs::read_to_string(&from_hand).unwrap());

    // clang builds with it, and the program still does its job.
    let afdo = root.join("fleet.afdo");
    profile(&lz, &["--from-raw"], &ours, "extbinary", &afdo);
    let fdo = root.join("lz.fdo");
    Clang::new()
        .cflags()
        .flags(own_build_id(OWN_BUILD_ID))
        .flag(format!("-fprofile-sample-use={}", afdo.display()))
        .out(&fdo)
        .program("lz.c")
        .run();
    assert_eq!(
        run_ok(Command::new(&fdo).arg("300000")).stdout,
        run_ok(Command::new(&lz).arg("300000")).stdout
    );
    assert_ne!(std::fs::read(&fdo).unwrap(), std::fs::read(&lz).unwrap());
}

/// `kfdo profile --binary BIN FLAGS INPUT --format FORMAT -o OUT`.
fn profile(bin: &Path, flags: &[&str], input: &Path, format: &str, out: &Path) {
    run_ok(
        kfdo()
            .args(["profile", "--binary"])
            .arg(bin)
            .args(flags)
            .arg(input)
            .args(["--format", format, "-o"])
            .arg(out),
    );
}

/// llvm-profgen's unsymbolized text of IP counts: one-instruction ranges, no branches.
fn raw_text(rows: &BTreeMap<(String, i64, i64), u64>) -> String {
    let ranges: Vec<String> = rows
        .iter()
        .map(|((kind, from, to), n)| {
            assert_eq!(kind, "ip", "an IP-only fleet has ip rows only");
            format!("{from:x}-{to:x}:{n}")
        })
        .collect();
    format!("{}\n{}\n0\n", ranges.len(), ranges.join("\n"))
}

fn list_objects(port: u16, prefix: &str) -> Vec<String> {
    // SigV4 signs the query as sent: keys in order, the prefix's '/' percent-encoded.
    let prefix = prefix.replace('/', "%2F");
    let out = curl(
        port,
        &format!("{BUCKET}?list-type=2&max-keys=1000&prefix={prefix}"),
        None,
    );
    let text = String::from_utf8(out).unwrap();
    let mut keys: Vec<String> = text
        .split("<Key>")
        .skip(1)
        .map(|s| s.split("</Key>").next().unwrap().to_string())
        .collect();
    keys.sort();
    keys
}

fn get_object(port: u16, key: &str, dest: &Path) {
    let bytes = curl(port, &format!("{BUCKET}/{key}"), Some(dest));
    assert!(bytes.is_empty());
}

/// A signed GET with curl's SigV4 (an S3 client apart from kfdo's own).
fn curl(port: u16, path: &str, dest: Option<&Path>) -> Vec<u8> {
    let mut c = Command::new("curl");
    c.args(["-sS", "--fail", "--aws-sigv4", "aws:amz:us-east-1:s3"])
        .args(["--user", "kfdo:kfdo-local-secret"]);
    if let Some(d) = dest {
        c.arg("-o").arg(d);
    }
    c.arg(format!("http://127.0.0.1:{port}/{path}"));
    run_ok(&mut c).stdout
}
