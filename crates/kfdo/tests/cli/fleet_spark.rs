//! The fleet Spark job (`fleet/merge_raw.py`, Spark `local[2]`) against `kfdo merge-raw`
//! on a simulated fleet of real recordings: two real programs (shapes and lz, clang-19
//! -O2) recorded under kfdo's QEMU plugin, each cut by `kfdo raw split` into hundreds of
//! perturbed host files (seeded). Both mergers, given the same options, must write the
//! same content: `kfdo raw dump` of both outputs byte-identical, once plainly over one
//! program's 500+ files and once over the whole fleet with --build-id, --host-cap,
//! --weight and a time window. Bad inputs (a truncated file, a newer schema version,
//! mixed build-ids without --build-id, an empty directory) fail the job with the file
//! named and no output written.
//!
//! Needs the pyspark venv of `scripts/install-pyspark.sh` (install-deps.sh runs it);
//! without it the test is skipped here and fails where tests must run (testkit).

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::{build, kfdo, ok, record_emulated, repo_root, run_ok};

/// Hosts per program: shapes' fleet alone is over 500 files (some hosts have two).
const MAIN_HOSTS: usize = 520;
const OTHER_HOSTS: usize = 160;

/// The venv's python when it can run the job (pyspark and pyarrow import).
pub(crate) fn spark_python() -> Option<PathBuf> {
    let venv = std::env::var_os("KFDO_PYSPARK_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/kfdo/pyspark-venv"))
        })?;
    let python = venv.join("bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import pyspark, pyarrow"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(python)
}

fn have_tools() -> Option<PathBuf> {
    if !kfdo_testkit::require_tools(&["clang-19", "qemu-x86_64", "java"]) {
        return None;
    }
    let python = spark_python();
    let ok = kfdo_testkit::require(
        python.is_some(),
        "no pyspark venv at ~/.cache/kfdo/pyspark-venv (or $KFDO_PYSPARK_VENV)",
        "bash scripts/install-pyspark.sh creates it; scripts/install-deps.sh runs it",
    );
    if ok {
        python
    } else {
        None
    }
}

/// One host file's per-file columns, from the first row of its dump.
#[derive(Clone, Debug)]
struct HostFile {
    path: PathBuf,
    build_id: String,
    host: String,
    start: i64,
    end: i64,
    samples: i64,
}

struct Fleet {
    root: PathBuf,
    /// shapes' files only (one build-id).
    main: PathBuf,
    files: Vec<HostFile>,
    main_build_id: String,
}

/// Records both programs and splits them into the fleet, once for all tests.
fn fleet() -> &'static Fleet {
    static FLEET: OnceLock<Fleet> = OnceLock::new();
    FLEET.get_or_init(|| {
        // Under cargo's per-target temp dir, replaced by each run (as profile_tools does).
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fleet_spark");
        let _ = std::fs::remove_dir_all(&root);
        let bins = root.join("bin");
        std::fs::create_dir_all(&bins).unwrap();
        let plan: [(&str, &str, &str, usize, u64); 2] = [
            ("shapes", "shapes.cpp", "60000", MAIN_HOSTS, 16),
            ("lz", "lz.c", "2000000", OTHER_HOSTS, 17),
        ];
        for (name, src, arg, hosts, seed) in plan {
            let bin = build(src, &bins, &[]);
            let data = bins.join(format!("{name}.data"));
            record_emulated(&bin, &[arg], &data);
            run_ok(
                kfdo()
                    .args(["-q", "raw", "split", "--binary"])
                    .arg(&bin)
                    .arg("--perf-data")
                    .arg(&data)
                    .args(["--hosts", &hosts.to_string(), "--seed", &seed.to_string()])
                    .args(["--host-prefix", name, "--classes", "web,db,batch", "-o"])
                    .arg(root.join("hosts").join(name)),
            );
        }
        let mut files = Vec::new();
        for entry in walk(&root.join("hosts")) {
            files.push(host_file(&entry));
        }
        let main = root.join("hosts/shapes");
        let main_build_id = files
            .iter()
            .find(|f| f.path.starts_with(&main))
            .expect("the split of shapes wrote no file")
            .build_id
            .clone();
        Fleet {
            root,
            main,
            files,
            main_build_id,
        }
    })
}

/// Every *.parquet under `dir`, sorted.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "parquet") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn dump(file: &Path) -> String {
    let out = run_ok(kfdo().args(["raw", "dump"]).arg(file));
    String::from_utf8(out.stdout).unwrap()
}

fn host_file(path: &Path) -> HostFile {
    let text = dump(path);
    let row = text
        .lines()
        .find(|l| l.starts_with("row\t"))
        .unwrap_or_else(|| panic!("{}: no row in its dump", path.display()));
    let f: Vec<&str> = row.split('\t').collect();
    HostFile {
        path: path.to_path_buf(),
        build_id: f[1].to_string(),
        host: f[3].to_string(),
        start: f[6].parse().unwrap(),
        end: f[7].parse().unwrap(),
        samples: f[8].parse().unwrap(),
    }
}

fn spark(python: &Path, args: &[String]) -> Output {
    Command::new(python)
        .arg(repo_root().join("fleet/merge_raw.py"))
        .args(["--master", "local[2]"])
        .args(args)
        .output()
        .expect("cannot run the Spark job")
}

fn merge_raw(args: &[String]) -> Output {
    kfdo().arg("merge-raw").args(args).output().unwrap()
}

/// The footer key `key` of a dump.
fn meta(dump: &str, key: &str) -> String {
    dump.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in the dump"))
        .to_string()
}

/// Runs both mergers with `opts` over `inputs`; asserts equal dumps; returns the dump.
fn both(python: &Path, name: &str, inputs: &[&Path], opts: &[String]) -> String {
    let dir = fleet().root.join("out");
    std::fs::create_dir_all(&dir).unwrap();
    let (ours, theirs) = (
        dir.join(format!("{name}.kfdo.parquet")),
        dir.join(format!("{name}.spark.parquet")),
    );
    let args = |out: &Path| -> Vec<String> {
        let mut v: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
        v.extend(opts.iter().cloned());
        v.push("-o".into());
        v.push(out.display().to_string());
        v
    };
    ok(merge_raw(&args(&ours)), "kfdo merge-raw");
    let started = std::time::Instant::now();
    let out = spark(python, &args(&theirs));
    ok(&out, "the Spark job");
    eprintln!(
        "{name}: Spark job {:.1}s: {}",
        started.elapsed().as_secs_f64(),
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.starts_with("merge-raw:"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let (a, b) = (dump(&ours), dump(&theirs));
    if a != b {
        let first = a
            .lines()
            .zip(b.lines())
            .enumerate()
            .find(|(_, (x, y))| x != y)
            .map(|(i, (x, y))| format!("line {}:\n kfdo:  {x}\n spark: {y}", i + 1));
        panic!(
            "{name}: dumps differ ({} vs {} lines); first difference: {}",
            a.lines().count(),
            b.lines().count(),
            first.unwrap_or_else(|| "one is a prefix of the other".into())
        );
    }
    a
}

fn rows(dump: &str) -> usize {
    dump.lines().filter(|l| l.starts_with("row\t")).count()
}

#[test]
fn spark_job_equals_merge_raw_on_a_fleet_of_real_recordings() {
    let Some(_one_at_a_time) = common::heavy_test("the fleet Spark job over real recordings")
    else {
        return;
    };
    let Some(python) = have_tools() else { return };
    let f = fleet();
    let main_files: Vec<&HostFile> = f
        .files
        .iter()
        .filter(|h| h.path.starts_with(&f.main))
        .collect();
    assert!(
        main_files.len() >= 500,
        "shapes' fleet has {} files",
        main_files.len()
    );
    assert!(f.files.len() > main_files.len(), "lz's fleet is missing");

    // Plain: every file of shapes, summed.
    let plain = both(&python, "plain", &[&f.main], &[]);
    assert_eq!(meta(&plain, "kfdo.raw.files"), main_files.len().to_string());
    // Small programs: their hot code has a few hundred distinct ranges and branches.
    assert!(rows(&plain) > 100, "only {} merged rows", rows(&plain));

    // The whole fleet, shapes selected by build-id, the middle half of its time, hosts capped
    // at their median samples, classes weighted.
    let (lo, hi) = (
        main_files.iter().map(|h| h.start).min().unwrap(),
        main_files.iter().map(|h| h.end).max().unwrap(),
    );
    let (since, until) = (lo + (hi - lo) / 4, hi - (hi - lo) / 4);
    let in_window: Vec<&&HostFile> = main_files
        .iter()
        .filter(|h| h.start >= since && h.end <= until)
        .collect();
    let mut per_host: BTreeMap<&str, i64> = BTreeMap::new();
    for h in &in_window {
        *per_host.entry(&h.host).or_default() += h.samples;
    }
    let mut totals: Vec<i64> = per_host.values().copied().collect();
    totals.sort();
    let cap = totals[totals.len() / 2];
    let opts: Vec<String> = [
        "--build-id",
        &f.main_build_id,
        "--since",
        &since.to_string(),
        "--until",
        &until.to_string(),
        "--host-cap",
        &cap.to_string(),
        "--weight",
        "web=2",
        "--weight",
        "db=0.333",
        "--weight",
        "batch=1.5",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let hosts_dir = f.root.join("hosts");
    let filtered = both(&python, "filtered", &[&hosts_dir], &opts);
    assert_eq!(
        meta(&filtered, "kfdo.raw.files"),
        in_window.len().to_string()
    );
    assert_eq!(
        meta(&filtered, "kfdo.raw.hosts"),
        per_host.len().to_string()
    );
    assert!(
        in_window.len() >= 100,
        "{} files in the window",
        in_window.len()
    );
    assert!(rows(&filtered) > 50, "only {} merged rows", rows(&filtered));
    assert_ne!(plain, filtered);
}

/// A directory of a few good files of shapes plus `extra`, made by `make` from a good file.
fn bad_dir(name: &str, make: impl FnOnce(&Path, &Path)) -> (PathBuf, PathBuf) {
    let f = fleet();
    let dir = f.root.join("bad").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let good: Vec<&HostFile> = f
        .files
        .iter()
        .filter(|h| h.path.starts_with(&f.main))
        .take(3)
        .collect();
    for h in &good {
        std::fs::copy(&h.path, dir.join(h.path.file_name().unwrap())).unwrap();
    }
    let bad = dir.join("zz-bad.parquet");
    make(&good[0].path, &bad);
    (dir, bad)
}

/// `bad` made from `good` by `edit`, Python run with the table as `t` and the footer's
/// key-value metadata as `m` (kfdo keeps its keys there, not in the Arrow schema).
fn rewrite(python: &Path, good: &Path, bad: &Path, edit: &str) {
    let script = format!(
        "import sys, pyarrow as pa, pyarrow.parquet as pq\n\
         t = pq.read_table(sys.argv[1])\n\
         m = dict(pq.ParquetFile(sys.argv[1]).metadata.metadata)\n\
         m.pop(b'ARROW:schema', None)\n\
         {edit}\
         pq.write_table(t.replace_schema_metadata(m), sys.argv[2])\n"
    );
    run_ok(
        Command::new(python)
            .args(["-c", &script])
            .arg(good)
            .arg(bad),
    );
}

/// Both mergers fail on `inputs`, naming `named` and saying `why`; no output is left.
fn both_fail(python: &Path, inputs: &[&Path], named: &Path, why: &str) {
    let out_dir = fleet().root.join("out-bad");
    std::fs::create_dir_all(&out_dir).unwrap();
    for (who, result) in [("kfdo merge-raw", None), ("spark", Some(python))] {
        let out = out_dir.join(format!(
            "{}.parquet",
            named.file_name().unwrap().to_string_lossy()
        ));
        let mut args: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
        args.extend(["-o".to_string(), out.display().to_string()]);
        let o = match result {
            None => merge_raw(&args),
            Some(py) => spark(py, &args),
        };
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{who} accepted {}", named.display());
        assert!(
            stderr.contains(&named.display().to_string()) && stderr.to_lowercase().contains(why),
            "{who}: the error names neither {} nor `{why}`:\n{stderr}",
            named.display()
        );
        assert!(!out.exists(), "{who} wrote {} on bad input", out.display());
        let leftovers: Vec<_> = std::fs::read_dir(&out_dir).unwrap().collect();
        assert!(leftovers.is_empty(), "{who} left {leftovers:?}");
    }
}

#[test]
fn spark_job_rejects_bad_inputs_naming_the_file() {
    let Some(_one_at_a_time) = common::heavy_test("the fleet Spark job over real recordings")
    else {
        return;
    };
    let Some(python) = have_tools() else { return };
    let f = fleet();

    let (dir, bad) = bad_dir("truncated", |good, bad| {
        let bytes = std::fs::read(good).unwrap();
        std::fs::write(bad, &bytes[..bytes.len() / 2]).unwrap();
    });
    both_fail(&python, &[&dir], &bad, "parquet");

    // The same table with the footer saying schema version 2.
    let (dir, bad) = bad_dir("newer", |good, bad| {
        rewrite(&python, good, bad, "m[b'kfdo.raw.schema_version'] = b'2'\n")
    });
    both_fail(&python, &[&dir], &bad, "schema version 2");

    // A row past the first that breaks the contract (its count 0): the footer and first
    // row are fine, so each merger's data pass must find it and name the file.
    let (dir, bad) = bad_dir("late-row", |good, bad| {
        rewrite(
            &python,
            good,
            bad,
            "c = t.column('count').to_pylist()\n\
             c[-1] = 0\n\
             i = t.schema.get_field_index('count')\n\
             t = t.set_column(i, t.schema.field(i), pa.array(c, pa.int64()))\n",
        )
    });
    both_fail(&python, &[&dir], &bad, "count");

    // Mixed build-ids: the first file of each program is named.
    let other = f
        .files
        .iter()
        .find(|h| !h.path.starts_with(&f.main))
        .unwrap();
    both_fail(&python, &[&f.main, &other.path], &other.path, "--build-id");

    let empty = f.root.join("bad/empty");
    std::fs::create_dir_all(&empty).unwrap();
    both_fail(&python, &[&empty], &empty, "no *.parquet");

    // The output inside an input directory: a later merge would count it as a host.
    let out_dir = f.root.join("out-bad");
    std::fs::create_dir_all(&out_dir).unwrap();
    both_fail(
        &python,
        &[&out_dir],
        &out_dir,
        "lies inside the input directory",
    );
}
