//! Unit tests of reading, writing and merging, on small files written here.

use crate::error::RawError;
use crate::merge::{merge, parse_weight, MergeOptions};
use crate::read;
use crate::schema::{FileInfo, Row, RowKind};
use crate::write::{write_file, write_with_footer, FileKind};
use std::path::{Path, PathBuf};

fn info(host: &str, class: &str, samples: i64, window: (i64, i64)) -> FileInfo {
    FileInfo {
        build_id: "ab12".into(),
        binary_path: "/usr/bin/app".into(),
        host: host.into(),
        host_class: class.into(),
        recorder: "lbr".into(),
        window_start_ns: window.0,
        window_end_ns: window.1,
        samples,
    }
}

fn row(kind: RowKind, from: i64, to: i64, count: i64) -> Row {
    Row {
        kind,
        from,
        to,
        count,
    }
}

fn host_file(dir: &Path, name: &str, info: &FileInfo, rows: Vec<Row>) -> PathBuf {
    let p = dir.join(name);
    write_file(&p, &FileKind::Host, info, rows).unwrap();
    p
}

/// The footer keys of a host file of schema `version`, for files written by hand.
fn host_footer(version: &str) -> [(String, String); 2] {
    [
        ("kfdo.raw.schema_version".to_string(), version.to_string()),
        ("kfdo.raw.kind".to_string(), "host".to_string()),
    ]
}

fn all_rows(p: &Path) -> (FileInfo, Vec<Row>, read::Footer) {
    let mut rows = Vec::new();
    let s = read::scan(p, |_, b| {
        rows.extend_from_slice(b);
        Ok(())
    })
    .unwrap();
    (s.info, rows, s.footer)
}

/// Three files of two hosts; the expected numbers are worked by hand in the test.
fn fleet(dir: &Path) -> Vec<PathBuf> {
    use RowKind::*;
    vec![
        host_file(
            dir,
            "a1.parquet",
            &info("a", "web", 600, (100, 200)),
            vec![row(Range, 0x10, 0x20, 300), row(Branch, 0x20, 0x10, 7)],
        ),
        host_file(
            dir,
            "a2.parquet",
            &info("a", "web", 400, (150, 300)),
            vec![row(Range, 0x10, 0x20, 100), row(Branch, 1, 0x10, 3)],
        ),
        host_file(
            dir,
            "b.parquet",
            &FileInfo {
                binary_path: "/opt/app".into(),
                ..info("b", "db", 200, (50, 250))
            },
            vec![row(Range, 0x10, 0x20, 50), row(Branch, 0x20, 0x10, 1)],
        ),
    ]
}

#[test]
fn write_then_read_is_sorted_and_keeps_every_column() {
    let d = tempfile::tempdir().unwrap();
    let i = info("h", "c", 9, (1, 2));
    let p = host_file(
        d.path(),
        "h.parquet",
        &i,
        vec![
            row(RowKind::Range, 5, 6, 1),
            row(RowKind::Branch, 9, 5, 2),
            row(RowKind::Ip, 3, 3, 4),
        ],
    );
    let (got, rows, footer) = all_rows(&p);
    assert_eq!(got, i);
    assert_eq!(footer.kind, "host");
    assert_eq!(footer.schema_version, 1);
    let kinds: Vec<_> = rows.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [RowKind::Branch, RowKind::Ip, RowKind::Range]);
    let leftovers = std::fs::read_dir(d.path()).unwrap().count();
    assert_eq!(leftovers, 1, "a temporary file was left behind");
}

#[test]
fn cap_then_weight_by_hand() {
    let d = tempfile::tempdir().unwrap();
    let files = fleet(d.path());
    let out = d.path().join("out/merged.parquet");
    std::fs::create_dir(d.path().join("out")).unwrap();
    let opts = MergeOptions {
        host_cap: Some(500),
        weights: vec![
            parse_weight("web=1.5").unwrap(),
            parse_weight("db=0.5").unwrap(),
        ],
        ..Default::default()
    };
    let r = merge(&files, &opts, &out).unwrap();
    // Host a: S = 1000 > 500, so its counts halve (floor); then web weighs 1.5 (floor).
    //   a1: range 300 -> 150 -> 225, branch 7 -> 3 -> 4, samples 600 -> 300 -> 450
    //   a2: range 100 -> 50 -> 75, branch(1,0x10) 3 -> 1 -> 1, samples 400 -> 200 -> 300
    // Host b: S = 200, not capped; db weighs 0.5:
    //   range 50 -> 25, branch 1 -> 0 (dropped), samples 200 -> 100
    let (i, rows, footer) = all_rows(&out);
    use RowKind::*;
    assert_eq!(
        rows,
        [
            row(Branch, 1, 0x10, 1),
            row(Branch, 0x20, 0x10, 4),
            row(Range, 0x10, 0x20, 325)
        ]
    );
    assert_eq!(i.samples, 850);
    assert_eq!((i.window_start_ns, i.window_end_ns), (50, 300));
    assert_eq!(i.binary_path, "/opt/app");
    assert_eq!((i.host.as_str(), i.host_class.as_str()), ("", ""));
    assert_eq!(footer.kind, "merged");
    let get = |k: &str| {
        footer
            .entries
            .iter()
            .find(|(key, _)| key == k)
            .unwrap()
            .1
            .clone()
    };
    assert_eq!(
        (get("kfdo.raw.hosts"), get("kfdo.raw.files")),
        ("2".into(), "3".into())
    );
    assert_eq!(
        (r.kept, r.hosts, r.capped_hosts, r.rows_in, r.rows_out),
        (3, 2, 1, 6, 3)
    );
}

#[test]
fn selection_by_build_id_and_window_counts_drops() {
    let d = tempfile::tempdir().unwrap();
    let mut files = fleet(d.path());
    files.push(host_file(
        d.path(),
        "other.parquet",
        &FileInfo {
            build_id: "ff".into(),
            ..info("c", "", 10, (0, 10))
        },
        vec![row(RowKind::Range, 1, 2, 1)],
    ));
    let out = d.path().join("m.parquet");
    let e = merge(&files, &MergeOptions::default(), &out)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("mixed build-ids") && e.contains("other.parquet") && e.contains("--build-id"),
        "{e}"
    );
    assert!(!out.exists());
    let opts = MergeOptions {
        build_id: Some("ab12".into()),
        since: Some(100),
        until: Some(300),
        ..Default::default()
    };
    let r = merge(&files, &opts, &out).unwrap();
    assert_eq!((r.kept, r.dropped_build_id, r.dropped_window), (2, 1, 1));
    let (_, rows, _) = all_rows(&out);
    assert_eq!(rows.iter().map(|r| r.count).sum::<i64>(), 300 + 7 + 100 + 3);
}

#[test]
fn bad_files_are_named_and_skippable() {
    let d = tempfile::tempdir().unwrap();
    let files = fleet(d.path());
    let bytes = std::fs::read(&files[0]).unwrap();
    let cut = d.path().join("cut.parquet");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = read::scan(&cut, |_, _| Ok(())).unwrap_err().to_string();
    assert!(e.contains("cut.parquet") && e.contains("truncated"), "{e}");

    let newer = d.path().join("v2.parquet");
    let meta = host_footer("2");
    write_with_footer(
        &newer,
        &meta,
        &info("x", "", 1, (0, 1)),
        &[row(RowKind::Range, 1, 2, 1)],
    )
    .unwrap();
    let e = read::scan(&newer, |_, _| Ok(())).unwrap_err().to_string();
    assert!(
        e.contains("v2.parquet") && e.contains("schema version 2") && e.contains("upgrade"),
        "{e}"
    );

    let out = d.path().join("m.parquet");
    let inputs = [files.clone(), vec![cut.clone(), newer.clone()]].concat();
    let e = merge(&inputs, &MergeOptions::default(), &out).unwrap_err();
    assert!(matches!(e, RawError::BadFile { .. }), "{e}");
    assert!(!out.exists());
    let opts = MergeOptions {
        skip_bad: true,
        ..Default::default()
    };
    let r = merge(&inputs, &opts, &out).unwrap();
    assert_eq!((r.kept, r.dropped_bad.len()), (3, 2));
}

#[test]
fn mixed_rows_inside_a_file_name_the_row() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("mixed.parquet");
    // Two batches' worth is not needed: the writer repeats `info`, so write two files'
    // rows by hand through the footer writer, then check the reader sees one build-id.
    write_with_footer(
        &p,
        &[
            ("kfdo.raw.schema_version".into(), "1".into()),
            ("kfdo.raw.kind".into(), "host".into()),
        ],
        &info("h", "", 1, (0, 1)),
        &[row(RowKind::Range, 1, 2, 0)],
    )
    .unwrap();
    let e = read::scan(&p, |_, _| Ok(())).unwrap_err().to_string();
    assert!(
        e.contains("mixed.parquet") && e.contains("row 0") && e.contains("`count`"),
        "{e}"
    );
}

#[test]
fn empty_directory_is_an_error_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let e = merge(
        std::slice::from_ref(&empty),
        &MergeOptions::default(),
        &d.path().join("m.parquet"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("empty") && e.contains("no *.parquet"), "{e}");
}

#[test]
fn weights_parse_as_thousandths() {
    assert_eq!(parse_weight("web=1.5").unwrap(), ("web".into(), 1500));
    assert_eq!(parse_weight("db=2").unwrap(), ("db".into(), 2000));
    assert_eq!(parse_weight("=0.001").unwrap(), ("".into(), 1));
    assert_eq!(parse_weight("x=.25").unwrap(), ("x".into(), 250));
    for bad in ["web", "web=1.2345", "web=-1", "web=abc", "web="] {
        assert!(parse_weight(bad).is_err(), "{bad}");
    }
}

#[test]
fn two_build_ids_inside_one_file_name_the_row_and_column() {
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("two.parquet");
    let props = WriterProperties::builder()
        .set_key_value_metadata(Some(vec![
            KeyValue::new("kfdo.raw.schema_version".into(), "1".to_string()),
            KeyValue::new("kfdo.raw.kind".into(), "host".to_string()),
        ]))
        .build();
    let file = std::fs::File::create(&p).unwrap();
    let mut w = ArrowWriter::try_new(file, crate::schema::arrow_schema(), Some(props)).unwrap();
    let a = info("h", "", 5, (0, 1));
    let b = FileInfo {
        build_id: "cd34".into(),
        ..a.clone()
    };
    let r = [row(RowKind::Range, 1, 2, 3)];
    w.write(&crate::write::batch(&a, &r).unwrap()).unwrap();
    w.write(&crate::write::batch(&b, &r).unwrap()).unwrap();
    w.close().unwrap();
    let e = read::scan(&p, |_, _| Ok(())).unwrap_err().to_string();
    assert!(
        e.contains("two.parquet")
            && e.contains("row 1")
            && e.contains("`build_id`")
            && e.contains("cd34"),
        "{e}"
    );
}

/// A file whose footer and first row are fine but whose later row breaks the contract
/// is found only by the full pass: --skip-bad drops it there, and the caps are those of
/// the good files alone (the same bytes as merging them without it).
#[test]
fn a_row_broken_after_the_first_is_dropped_and_the_caps_recomputed() {
    use RowKind::*;
    let d = tempfile::tempdir().unwrap();
    let files = fleet(d.path());
    let late = d.path().join("late.parquet");
    let meta = host_footer("1");
    // Host a again: its samples would halve a's other counts under the cap below.
    write_with_footer(
        &late,
        &meta,
        &info("a", "web", 5000, (100, 200)),
        &[row(Branch, 0x20, 0x10, 9), row(Range, 0x10, 0x20, -4)],
    )
    .unwrap();
    let opts = MergeOptions {
        host_cap: Some(1000),
        ..Default::default()
    };
    let out = d.path().join("m.parquet");
    let with_late = [files.clone(), vec![late.clone()]].concat();
    let e = merge(&with_late, &opts, &out).unwrap_err().to_string();
    assert!(
        e.contains("late.parquet") && e.contains("row 1") && e.contains("`count`"),
        "{e}"
    );
    assert!(!out.exists());
    let skip = MergeOptions {
        skip_bad: true,
        ..opts.clone()
    };
    let r = merge(&with_late, &skip, &out).unwrap();
    assert_eq!((r.kept, r.dropped_bad.len(), r.capped_hosts), (3, 1, 0));
    assert!(
        r.dropped_bad[0].contains("late.parquet"),
        "{:?}",
        r.dropped_bad
    );
    let alone = d.path().join("alone.parquet");
    merge(&files, &opts, &alone).unwrap();
    assert_eq!(all_rows(&out), all_rows(&alone));
}

/// Another writer's file that is not sorted, or repeats a key, merges as if it were.
#[test]
fn unsorted_files_with_repeated_keys_merge_exactly() {
    use RowKind::*;
    let d = tempfile::tempdir().unwrap();
    let meta = host_footer("1");
    let messy = d.path().join("messy.parquet");
    write_with_footer(
        &messy,
        &meta,
        &info("a", "", 10, (0, 1)),
        &[
            row(Range, 9, 12, 5),
            row(Branch, 3, 4, 1),
            row(Range, 9, 12, 2),
            row(Ip, 7, 7, 4),
        ],
    )
    .unwrap();
    let tidy = host_file(
        d.path(),
        "tidy.parquet",
        &info("b", "", 10, (0, 1)),
        vec![row(Branch, 3, 4, 10), row(Range, 1, 2, 1)],
    );
    let out = d.path().join("m.parquet");
    let r = merge(&[messy, tidy], &MergeOptions::default(), &out).unwrap();
    assert_eq!((r.rows_in, r.rows_out), (6, 4));
    assert_eq!(
        all_rows(&out).1,
        [
            row(Branch, 3, 4, 11),
            row(Ip, 7, 7, 4),
            row(Range, 1, 2, 1),
            row(Range, 9, 12, 7)
        ]
    );
}

/// Files larger than one batch and one row group: every row is read, checked and
/// summed, and the merged file holds them in order.
#[test]
fn files_of_many_batches_and_row_groups_merge_whole() {
    let d = tempfile::tempdir().unwrap();
    let n = 1_100_000i64;
    let rows = |step: i64, count: i64| {
        (0..n)
            .map(|i| row(RowKind::Range, i * step, i * step + 1, count))
            .collect::<Vec<_>>()
    };
    let a = host_file(d.path(), "a.parquet", &info("a", "", 1, (0, 1)), rows(2, 1));
    let b = host_file(d.path(), "b.parquet", &info("b", "", 1, (0, 1)), rows(3, 2));
    let out = d.path().join("m.parquet");
    let r = merge(&[a, b], &MergeOptions::default(), &out).unwrap();
    // Keys i*6 are in both files (i*2 and i*3 meet at multiples of 6).
    let both = (0..n).filter(|i| i * 2 % 3 == 0).count() as u64;
    assert_eq!(r.rows_in, 2 * n as u64);
    assert_eq!(r.rows_out, 2 * n as u64 - both);
    let (_, merged, _) = all_rows(&out);
    assert_eq!(merged.len() as u64, r.rows_out);
    assert!(merged.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        merged.iter().map(|r| r.count).sum::<i64>(),
        n + 2 * n,
        "every count summed once"
    );
    assert_eq!(merged.iter().find(|r| r.from == 6).unwrap().count, 3);
    // One file per group: the running sum is merged with each in turn.
    let c = host_file(d.path(), "c.parquet", &info("c", "", 1, (0, 1)), rows(5, 4));
    let files = [d.path().join("a.parquet"), d.path().join("b.parquet"), c];
    let (whole, grouped) = (d.path().join("w.parquet"), d.path().join("g.parquet"));
    merge(&files, &MergeOptions::default(), &whole).unwrap();
    let files: Vec<_> = files
        .into_iter()
        .map(crate::input::RawInput::local)
        .collect();
    crate::merge::merge_in_groups(&files, &MergeOptions::default(), &grouped, 1).unwrap();
    assert_eq!(all_rows(&whole), all_rows(&grouped));
    assert_eq!(
        all_rows(&grouped).1.iter().map(|r| r.count).sum::<i64>(),
        7 * n
    );
}

/// Files read from copies (`kfdo merge-raw s3://...` downloads) are named by where they
/// came from in every message and in the report, never by the copy's path.
#[test]
fn named_inputs_are_named_in_errors_and_reports() {
    use crate::input::RawInput;
    use crate::merge::merge_files;
    let d = tempfile::tempdir().unwrap();
    let copies = d.path().join("copies");
    std::fs::create_dir(&copies).unwrap();
    let good = fleet(&copies);
    let bytes = std::fs::read(&good[0]).unwrap();
    let cut = copies.join("00003.parquet");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    // Bad only past its first row: found in the second pass.
    let late = copies.join("00004.parquet");
    write_with_footer(
        &late,
        &host_footer("1"),
        &info("c", "", 2, (100, 200)),
        &[row(RowKind::Range, 1, 2, 1), row(RowKind::Range, 3, 4, 0)],
    )
    .unwrap();
    let url = |i: usize| format!("s3://kfdo/fleet/h{i}.parquet");
    let all: Vec<RawInput> = [good.clone(), vec![cut, late]]
        .concat()
        .into_iter()
        .enumerate()
        .map(|(i, p)| RawInput::named(p, url(i)))
        .collect();
    let local = copies.to_string_lossy().to_string();
    let out = d.path().join("m.parquet");

    let e = merge_files(&all, &MergeOptions::default(), &out)
        .unwrap_err()
        .to_string();
    assert!(e.contains(&url(3)) && e.contains("truncated"), "{e}");
    assert!(!e.contains(&local), "{e}");
    let e = merge_files(
        &[all[0].clone(), all[4].clone()],
        &MergeOptions::default(),
        &out,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains(&url(4)) && e.contains("row 1"), "{e}");
    assert!(!e.contains(&local), "{e}");

    let skip = MergeOptions {
        skip_bad: true,
        ..Default::default()
    };
    let r = merge_files(&all, &skip, &out).unwrap();
    assert_eq!((r.kept, r.dropped_bad.len()), (3, 2), "{:?}", r.dropped_bad);
    assert!(r.dropped_bad[0].starts_with(&url(3)), "{:?}", r.dropped_bad);
    assert!(r.dropped_bad[1].starts_with(&url(4)), "{:?}", r.dropped_bad);
    assert!(r.dropped_bad.iter().all(|b| !b.contains(&local)));
    let plain = d.path().join("plain.parquet");
    merge(&good, &MergeOptions::default(), &plain).unwrap();
    assert_eq!(all_rows(&out), all_rows(&plain));

    let other = copies.join("00005.parquet");
    write_file(
        &other,
        &FileKind::Host,
        &FileInfo {
            build_id: "ffff".into(),
            ..info("d", "", 1, (0, 1))
        },
        vec![row(RowKind::Range, 1, 2, 1)],
    )
    .unwrap();
    let e = merge_files(
        &[all[0].clone(), RawInput::named(&other, url(5))],
        &MergeOptions::default(),
        &out,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("mixed build-ids") && e.contains(&url(0)) && e.contains(&url(5)),
        "{e}"
    );
    assert!(!e.contains(&local), "{e}");
}
