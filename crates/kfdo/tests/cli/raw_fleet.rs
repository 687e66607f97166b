//! Fleet raw profiles end to end on a real recording (lz under kfdo's emulated LBR):
//! `profile --raw-out` then `--from-raw` gives the direct conversion's bytes; a split
//! of the recording merged back gives the whole recording's counts; cap and weight
//! arithmetic on hand-written files; and bad inputs fail cleanly, naming the file.

use crate::common;

use common::*;
use kfdo_rawfleet::schema::{FileInfo, Row, RowKind};
use kfdo_rawfleet::write::{write_file, write_with_footer, FileKind};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// lz's recording, and `profile --raw-out` of all of it (host "whole").
struct Fixture {
    rec: &'static LzRecording,
    host_file: PathBuf,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let rec = lz();
        let host_file = rec.dir.join("whole.parquet");
        run_ok(
            kfdo()
                .args([
                    "profile",
                    "-q",
                    "--host",
                    "whole",
                    "--host-class",
                    "web",
                    "--binary",
                ])
                .arg(&rec.bin)
                .arg("--perf-data")
                .arg(&rec.data)
                .arg("--raw-out")
                .arg(&host_file),
        );
        Fixture { rec, host_file }
    })
}

fn dump(file: &Path) -> String {
    let o = run_ok(kfdo().args(["raw", "dump"]).arg(file));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn raw_out_then_from_raw_gives_the_direct_profile() {
    let f = fixture();
    let d = tempfile::tempdir().unwrap();
    for format in ["text", "extbinary"] {
        let direct = d.path().join(format!("direct.{format}"));
        let via = d.path().join(format!("via.{format}"));
        profile_perf_data(&f.rec.bin, &f.rec.data, &direct, format);
        run_ok(
            kfdo()
                .args(["profile", "-q", "--format", format, "--binary"])
                .arg(&f.rec.bin)
                .arg("--from-raw")
                .arg(&f.host_file)
                .arg("-o")
                .arg(&via),
        );
        let (a, b) = (
            std::fs::read(&direct).unwrap(),
            std::fs::read(&via).unwrap(),
        );
        assert!(!a.is_empty());
        assert!(
            a == b,
            "{format}: --from-raw differs from the direct conversion"
        );
    }
    let text = dump(&f.host_file);
    assert!(
        text.contains("kfdo.raw.kind=host\nkfdo.raw.schema_version=1\n"),
        "{text}"
    );
    let first = text.lines().find(|l| l.starts_with("row\t")).unwrap();
    let cols: Vec<_> = first.split('\t').collect();
    assert_eq!(cols.len(), 13, "{first}");
    assert_eq!(
        (cols[3], cols[4], cols[5]),
        ("whole", "web", "emulated"),
        "{first}"
    );
    let (start, end): (i64, i64) = (cols[6].parse().unwrap(), cols[7].parse().unwrap());
    assert!(0 < start && start < end, "window {start}..{end}");
}

/// IP-only counts are rows of kind `ip`, recorder `ip`; `--from-raw` converts them as
/// `--ip-only` without being told, to the direct conversion's bytes.
#[test]
fn ip_only_round_trip() {
    let f = fixture();
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("ip.parquet");
    let (direct, via) = (d.path().join("direct.txt"), d.path().join("via.txt"));
    let profile = |extra: &[&str], out: &Path, input: (&str, &Path)| {
        run_ok(
            kfdo()
                .args(["profile", "-q", "--binary"])
                .arg(&f.rec.bin)
                .args(extra)
                .arg(input.0)
                .arg(input.1)
                .arg(if out.extension().is_some_and(|x| x == "parquet") {
                    "--raw-out"
                } else {
                    "-o"
                })
                .arg(out),
        );
    };
    profile(
        &["--ip-only", "--host", "h"],
        &file,
        ("--perf-data", &f.rec.data),
    );
    profile(
        &["--ip-only", "--format", "text"],
        &direct,
        ("--perf-data", &f.rec.data),
    );
    profile(&["--format", "text"], &via, ("--from-raw", &file));
    assert_eq!(
        std::fs::read(&direct).unwrap(),
        std::fs::read(&via).unwrap()
    );
    let text = dump(&file);
    let rows: Vec<_> = text.lines().filter(|l| l.starts_with("row\t")).collect();
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|l| l.contains("\tip\t") && l.split('\t').nth(5) == Some("ip")),
        "{text}"
    );
}

/// The dump less the lines that count hosts and files (a split has many, the whole one).
fn content(dump: &str) -> String {
    dump.lines()
        .filter(|l| !l.starts_with("kfdo.raw.hosts=") && !l.starts_with("kfdo.raw.files="))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn split_then_merge_equals_the_whole_recording() {
    let f = fixture();
    let d = tempfile::tempdir().unwrap();
    let hosts = d.path().join("hosts");
    run_ok(
        kfdo()
            .args([
                "raw",
                "split",
                "-q",
                "--hosts",
                "9",
                "--seed",
                "7",
                "--no-perturb",
            ])
            .args(["--classes", "web,db", "--binary"])
            .arg(&f.rec.bin)
            .arg("--perf-data")
            .arg(&f.rec.data)
            .arg("--out")
            .arg(&hosts),
    );
    let merged = d.path().join("merged.parquet");
    let o = run_ok(kfdo().arg("merge-raw").arg(&hosts).arg("-o").arg(&merged));
    let msg = String::from_utf8_lossy(&o.stderr);
    assert!(msg.contains("kept from 9 host(s)"), "{msg}");
    let whole = d.path().join("whole-merged.parquet");
    run_ok(
        kfdo()
            .arg("merge-raw")
            .arg(&f.host_file)
            .arg("-o")
            .arg(&whole),
    );
    let (a, b) = (content(&dump(&merged)), content(&dump(&whole)));
    assert!(a.lines().count() > 20, "{a}");
    assert!(a == b, "split+merge differs from the whole recording");
}

#[test]
fn split_is_seeded_and_caps_hosts() {
    let f = fixture();
    let d = tempfile::tempdir().unwrap();
    let split = |out: &Path| {
        run_ok(
            kfdo()
                .args(["raw", "split", "-q", "--hosts", "200", "--seed", "11"])
                .args([
                    "--classes",
                    "web,batch,db",
                    "--host-prefix",
                    "web",
                    "--binary",
                ])
                .arg(&f.rec.bin)
                .arg("--perf-data")
                .arg(&f.rec.data)
                .arg("--out")
                .arg(out),
        );
    };
    let (x, y) = (d.path().join("x"), d.path().join("y"));
    split(&x);
    split(&y);
    let mut names: Vec<_> = std::fs::read_dir(&x)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert!(
        names
            .iter()
            .any(|n| n.to_string_lossy().ends_with("-2.parquet")),
        "{names:?}"
    );
    for n in &names {
        assert_eq!(
            dump(&x.join(n)),
            dump(&y.join(n)),
            "{n:?} differs between runs"
        );
    }
    let capped = d.path().join("capped.parquet");
    let o = run_ok(
        kfdo()
            .arg("merge-raw")
            .arg(&x)
            .args(["--host-cap", "5", "--weight", "db=0.5", "-o"])
            .arg(&capped),
    );
    let msg = String::from_utf8_lossy(&o.stderr);
    assert!(msg.contains("capped"), "{msg}");
    assert!(capped.exists());
}

fn info(host: &str, class: &str, samples: i64) -> FileInfo {
    FileInfo {
        build_id: "0a0b".into(),
        binary_path: "/srv/app".into(),
        host: host.into(),
        host_class: class.into(),
        recorder: "lbr".into(),
        window_start_ns: 1000,
        window_end_ns: 2000,
        samples,
    }
}

fn rows(v: &[(RowKind, i64, i64, i64)]) -> Vec<Row> {
    v.iter()
        .map(|&(kind, from, to, count)| Row {
            kind,
            from,
            to,
            count,
        })
        .collect()
}

#[test]
fn merge_raw_caps_then_weighs_exactly() {
    use RowKind::*;
    let d = tempfile::tempdir().unwrap();
    let put = |name: &str, i: FileInfo, r: &[(RowKind, i64, i64, i64)]| {
        write_file(&d.path().join(name), &FileKind::Host, &i, rows(r)).unwrap();
    };
    put(
        "a1.parquet",
        info("a", "web", 900),
        &[(Range, 16, 32, 700), (Branch, 32, 16, 9)],
    );
    put(
        "a2.parquet",
        info("a", "web", 300),
        &[(Range, 16, 32, 200), (Ip, 40, 40, 5)],
    );
    put(
        "b.parquet",
        info("b", "batch", 100),
        &[(Range, 16, 32, 99), (Branch, 32, 16, 2)],
    );
    // The merged file goes elsewhere: merge-raw refuses an output inside an input directory.
    let o = tempfile::tempdir().unwrap();
    let out = o.path().join("m.parquet");
    run_ok(
        kfdo()
            .arg("merge-raw")
            .arg(d.path())
            .args([
                "--host-cap",
                "400",
                "--weight",
                "web=2",
                "--weight",
                "batch=0.333",
            ])
            .arg("-o")
            .arg(&out),
    );
    // a: S = 1200 > 400, counts scale by 400/1200 (floor), then web doubles:
    //   a1: 700 -> 233 -> 466, 9 -> 3 -> 6, samples 900 -> 300 -> 600
    //   a2: 200 -> 66 -> 132, ip 5 -> 1 -> 2, samples 300 -> 100 -> 200
    // b: 100 <= 400, batch weighs 0.333: 99 -> 32, 2 -> 0 (dropped), samples 100 -> 33
    let prefix = "row\t0a0b\t/srv/app\t\t\tlbr\t1000\t2000\t833";
    let expect = format!(
        "kfdo.raw.files=3\nkfdo.raw.hosts=2\nkfdo.raw.kind=merged\nkfdo.raw.schema_version=1\n\
         {}{prefix}\tbranch\t32\t16\t6\n{prefix}\tip\t40\t40\t2\n{prefix}\trange\t16\t32\t630\n",
        [
            "build_id utf8",
            "binary_path utf8",
            "host utf8",
            "host_class utf8",
            "recorder utf8",
            "window_start_ns int64",
            "window_end_ns int64",
            "samples int64",
            "kind utf8",
            "from int64",
            "to int64",
            "count int64",
        ]
        .iter()
        .map(|c| format!("column {c} not null\n"))
        .collect::<String>()
    );
    assert_eq!(dump(&out), expect);
}

/// Runs kfdo expecting failure: stderr, after checking that `out` was not written.
fn fails(args: &[&std::ffi::OsStr], out: &Path) -> String {
    let o = kfdo().args(args).output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.starts_with("kfdo: error: ") && !e.contains("panicked"),
        "{e}"
    );
    assert!(!out.exists(), "{} was written: {e}", out.display());
    let dir = out.parent().unwrap();
    let tmp: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".kfdo-tmp"))
        .collect();
    assert!(tmp.is_empty(), "temporary files left: {tmp:?}");
    e
}

#[test]
fn bad_inputs_name_the_file_and_write_nothing() {
    let f = fixture();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out.parquet");
    let os = |p: &Path| p.as_os_str().to_owned();
    let merge = |inputs: &[&Path], extra: &[&str]| {
        let mut args = vec![std::ffi::OsString::from("merge-raw")];
        args.extend(inputs.iter().map(|p| os(p)));
        args.extend(extra.iter().map(std::ffi::OsString::from));
        args.push("-o".into());
        args.push(os(&out));
        let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        fails(&refs, &out)
    };
    // Truncated: a real host file cut in half.
    let bytes = std::fs::read(&f.host_file).unwrap();
    let cut = d.path().join("cut.parquet");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = merge(&[&f.host_file, &cut], &[]);
    assert!(e.contains("cut.parquet") && e.contains("truncated"), "{e}");
    // A newer schema.
    let v2 = d.path().join("v2.parquet");
    let meta = [
        ("kfdo.raw.schema_version".to_string(), "2".to_string()),
        ("kfdo.raw.kind".to_string(), "host".to_string()),
    ];
    let r = rows(&[(RowKind::Range, 16, 32, 1)]);
    write_with_footer(&v2, &meta, &info("h", "", 1), &r).unwrap();
    let e = merge(&[&v2], &[]);
    assert!(
        e.contains("v2.parquet") && e.contains("schema version 2"),
        "{e}"
    );
    // --skip-bad drops both and says so; nothing left is an error too.
    let e = merge(&[&cut, &v2], &["--skip-bad"]);
    assert!(
        e.contains("no input file left") && e.contains("2 were unreadable"),
        "{e}"
    );
    // Mixed build-ids without --build-id.
    let other = d.path().join("other.parquet");
    write_file(&other, &FileKind::Host, &info("h", "", 1), r.clone()).unwrap();
    let e = merge(&[&f.host_file, &other], &[]);
    assert!(
        e.contains("mixed build-ids") && e.contains("other.parquet") && e.contains("--build-id"),
        "{e}"
    );
    // An empty directory.
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let e = merge(&[&empty], &[]);
    assert!(e.contains("empty") && e.contains("no *.parquet"), "{e}");
    // The output inside an input directory: a later merge would count it as a host.
    let e = merge(&[d.path()], &[]);
    assert!(
        e.contains("lies inside the input directory") && e.contains("out.parquet"),
        "{e}"
    );
    // --from-raw against another binary: both build-ids named.
    let other_dir = tempfile::tempdir().unwrap();
    let other_bin = build("lz.c", other_dir.path(), &["-O1"]);
    let prof = d.path().join("out.prof");
    let e = fails(
        &[
            "profile".as_ref(),
            "--binary".as_ref(),
            other_bin.as_os_str(),
            "--from-raw".as_ref(),
            f.host_file.as_os_str(),
            "-o".as_ref(),
            prof.as_os_str(),
        ],
        &prof,
    );
    assert!(
        e.contains("whole.parquet")
            && e.contains(&build_id_hex(&f.rec.bin))
            && e.contains(&build_id_hex(&other_bin)),
        "{e}"
    );
}
