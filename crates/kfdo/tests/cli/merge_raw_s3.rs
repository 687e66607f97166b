//! `kfdo merge-raw s3://...` against a real S3 store (SeaweedFS): host files uploaded
//! under a prefix merge to the same bytes as the local copies; a prefix is a folder (a
//! sibling prefix that starts alike is not taken), objects that are not `*.parquet` are
//! left out, a single object and local files mix with prefixes; a truncated object, an
//! empty prefix, missing credentials and a store that is down fail, naming the s3:// URL
//! or the endpoint, never a temporary path; the downloads' folder is always removed.

use crate::common;

use common::*;
use kfdo_objstore::{Settings, Store};
use kfdo_rawfleet::schema::{FileInfo, Row, RowKind};
use kfdo_rawfleet::write::{write_file, FileKind};
use kfdo_testkit::seaweedfs::SeaweedFs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BUILD_ID: &str = "0a0b";

fn info(host: &str, class: &str, build_id: &str, samples: i64) -> FileInfo {
    FileInfo {
        build_id: build_id.into(),
        binary_path: "/srv/app".into(),
        host: host.into(),
        host_class: class.into(),
        recorder: "lbr".into(),
        window_start_ns: 1000,
        window_end_ns: 2000,
        samples,
    }
}

/// A host's rows: overlapping keys across hosts, so the merge sums.
fn rows(seed: i64) -> Vec<Row> {
    (0..40)
        .map(|i| Row {
            kind: [RowKind::Range, RowKind::Branch, RowKind::Ip][(i % 3) as usize],
            from: 16 * (i + seed % 7),
            to: 16 * (i + seed % 7) + 8,
            count: 1 + (i * seed) % 97,
        })
        .collect()
}

/// Host files in `dir` (one of another build-id), by name.
fn hosts(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for i in 0..6i64 {
        let name = format!("h{i}.parquet");
        let build_id = if i == 5 { "ffff" } else { BUILD_ID };
        let class = ["web", "db"][(i % 2) as usize];
        let p = dir.join(&name);
        write_file(
            &p,
            &FileKind::Host,
            &info(&format!("host{i}"), class, build_id, 500 + i),
            rows(i + 1),
        )
        .unwrap();
        out.push((name, p));
    }
    out
}

/// kfdo with the store's variables, downloads under `tmp` (TMPDIR).
fn kfdo_s3(store: &SeaweedFs, tmp: &Path) -> Command {
    let mut c = kfdo();
    for v in [
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_S3",
        "AWS_SESSION_TOKEN",
        "AWS_DEFAULT_REGION",
    ] {
        c.env_remove(v);
    }
    c.envs(store.vars()).env("TMPDIR", tmp);
    c
}

fn dump(file: &Path) -> String {
    let o = run_ok(kfdo().args(["raw", "dump"]).arg(file));
    String::from_utf8(o.stdout).unwrap()
}

/// A failed run: its stderr, after checking that it failed cleanly, wrote no output
/// and left no download folder.
fn failed(o: Output, out: &Path, tmp: &Path) -> String {
    let e = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("kfdo: error: ") && !e.contains("panicked"),
        "{e}"
    );
    assert!(!out.exists(), "{} was written: {e}", out.display());
    no_download_left(tmp);
    assert!(
        !e.contains("kfdo-merge-raw-") && !e.contains(&tmp.display().to_string()),
        "a temporary path is named: {e}"
    );
    e
}

fn no_download_left(tmp: &Path) {
    let left: Vec<_> = std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

#[test]
fn merge_raw_reads_s3_prefixes_and_names_objects_by_url() {
    let Some(store) = SeaweedFs::start(&["kfdo"]) else {
        return;
    };
    let settings = Settings::from_lookup("kfdo", |k| store.var(k)).unwrap();
    let st = Store::new("kfdo", settings).unwrap();
    let d = tempfile::tempdir().unwrap();
    let local = d.path().join("hosts");
    std::fs::create_dir(&local).unwrap();
    let files = hosts(&local);
    let day = "fleet/2026-11-29";
    for (name, p) in &files {
        st.put_file(&format!("{day}/{name}"), p).unwrap();
    }
    // Left out: not *.parquet; under a sibling prefix that starts alike.
    st.put_bytes(&format!("{day}/README.txt"), b"not a raw file")
        .unwrap();
    st.put_file(&format!("{day}0/stray.parquet"), &files[0].1)
        .unwrap();
    let tmp = d.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = |n: &str| d.path().join(n);

    // The local copies, merged as merge-raw always has.
    run_ok(
        kfdo()
            .arg("merge-raw")
            .arg(&local)
            .args(["--build-id", BUILD_ID, "-o"])
            .arg(out("local.parquet")),
    );
    let want = dump(&out("local.parquet"));
    assert!(want.contains("kfdo.raw.files=5\n"), "{want}");

    // The prefix, with and without its final slash, and as s3a://.
    for (i, url) in [
        format!("s3://kfdo/{day}/"),
        format!("s3://kfdo/{day}"),
        format!("s3a://kfdo/{day}/"),
    ]
    .iter()
    .enumerate()
    {
        let o = out(&format!("s3-{i}.parquet"));
        let r = run_ok(
            kfdo_s3(&store, &tmp)
                .arg("merge-raw")
                .arg(url)
                .args(["--build-id", BUILD_ID, "--json", "-o"])
                .arg(&o),
        );
        assert_eq!(dump(&o), want, "{url}");
        let json: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
        assert_eq!(
            (json["files_in"].as_u64(), json["dropped_build_id"].as_u64()),
            (Some(6), Some(1)),
            "{url}: {json}"
        );
        no_download_left(&tmp);
    }

    // A single object mixes with local files.
    let mixed = out("mixed.parquet");
    run_ok(
        kfdo_s3(&store, &tmp)
            .arg("merge-raw")
            .arg(format!("s3://kfdo/{day}/h0.parquet"))
            .args(files[1..].iter().map(|(_, p)| p))
            .args(["--build-id", BUILD_ID, "-o"])
            .arg(&mixed),
    );
    assert_eq!(dump(&mixed), want);

    // A truncated object is named by its URL; --skip-bad drops it, by its URL too.
    let bytes = std::fs::read(&files[0].1).unwrap();
    st.put_bytes("fleet/bad/h-cut.parquet", &bytes[..bytes.len() / 2])
        .unwrap();
    st.put_file("fleet/bad/h1.parquet", &files[1].1).unwrap();
    let bad = out("bad.parquet");
    let e = failed(
        kfdo_s3(&store, &tmp)
            .args(["merge-raw", "s3://kfdo/fleet/bad/", "-o"])
            .arg(&bad)
            .output()
            .unwrap(),
        &bad,
        &tmp,
    );
    assert!(
        e.contains("s3://kfdo/fleet/bad/h-cut.parquet: not a readable Parquet file")
            && e.contains("truncated"),
        "{e}"
    );
    let r = run_ok(
        kfdo_s3(&store, &tmp)
            .args([
                "merge-raw",
                "s3://kfdo/fleet/bad/",
                "--skip-bad",
                "--json",
                "-o",
            ])
            .arg(&bad),
    );
    let json: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let dropped = json["dropped_bad"].as_array().unwrap();
    assert_eq!(dropped.len(), 1, "{json}");
    assert!(
        dropped[0]
            .as_str()
            .unwrap()
            .starts_with("s3://kfdo/fleet/bad/h-cut.parquet: "),
        "{json}"
    );
    let said = String::from_utf8_lossy(&r.stderr);
    assert!(
        said.contains("dropped (--skip-bad): s3://kfdo/fleet/bad/h-cut.parquet"),
        "{said}"
    );
    no_download_left(&tmp);

    // Nothing under a prefix; an object key that is not there either.
    let none = out("none.parquet");
    for url in [
        "s3://kfdo/fleet/2026-12-01/",
        "s3://kfdo/fleet/2026-11-29/h9.parquet",
    ] {
        let e = failed(
            kfdo_s3(&store, &tmp)
                .args(["merge-raw", url, "-o"])
                .arg(&none)
                .output()
                .unwrap(),
            &none,
            &tmp,
        );
        assert!(
            e.contains(&format!("{url}: no ")) && e.contains("*.parquet object under"),
            "{e}"
        );
    }
    // A bucket that does not exist.
    let e = failed(
        kfdo_s3(&store, &tmp)
            .args(["merge-raw", "s3://nobucket/fleet/", "-o"])
            .arg(&none)
            .output()
            .unwrap(),
        &none,
        &tmp,
    );
    assert!(
        e.contains("s3://nobucket/fleet/") && e.contains("NoSuchBucket"),
        "{e}"
    );

    // No credentials: the variables are named.
    let e = failed(
        kfdo_s3(&store, &tmp)
            .env_remove("AWS_ACCESS_KEY_ID")
            .env_remove("AWS_SECRET_ACCESS_KEY")
            .args(["merge-raw", "s3://kfdo/fleet/bad/", "-o"])
            .arg(&none)
            .output()
            .unwrap(),
        &none,
        &tmp,
    );
    assert!(
        e.contains("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
        "{e}"
    );
    // The output is local only; a bad URL names the form.
    let e = failed(
        kfdo_s3(&store, &tmp)
            .args([
                "merge-raw",
                "s3://kfdo/fleet/bad/",
                "-o",
                "s3://kfdo/m.parquet",
            ])
            .output()
            .unwrap(),
        &none,
        &tmp,
    );
    assert!(e.contains("written to a local path"), "{e}");
    let e = failed(
        kfdo_s3(&store, &tmp)
            .args(["merge-raw", "s3:///fleet/", "-o"])
            .arg(&none)
            .output()
            .unwrap(),
        &none,
        &tmp,
    );
    assert!(e.contains("s3://BUCKET/KEY"), "{e}");

    // The store down: its endpoint is named.
    let endpoint = store.endpoint();
    drop(store);
    let e = failed(
        Command::new(env!("CARGO_BIN_EXE_kfdo"))
            .env("AWS_ENDPOINT_URL", &endpoint)
            .env("AWS_ACCESS_KEY_ID", "kfdo")
            .env("AWS_SECRET_ACCESS_KEY", "x")
            .env("TMPDIR", &tmp)
            .args(["merge-raw", "s3://kfdo/fleet/bad/", "-o"])
            .arg(&none)
            .output()
            .unwrap(),
        &none,
        &tmp,
    );
    assert!(
        e.contains(&format!("cannot reach the object store at {endpoint}")),
        "{e}"
    );
}
