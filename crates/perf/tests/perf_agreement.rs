//! kfdo-perf agrees with this machine's `perf` on files perf records here: every record's
//! offset and type (against `perf script -D`), every sample's fields (pid, tid, time, ip,
//! period, callchain), and the samples `perf script -F pid,tid,time,ip` prints.

mod common;

use common::*;
use kfdo_perf::{Mode, Record};

#[test]
fn cpu_clock() {
    let Some((ev, _)) = perf_events() else { return };
    let dir = tempfile::tempdir().unwrap();
    let f = record(dir.path(), "plain.data", &["-e", ev], false);
    let pd = check(&f, false, 1, false);
    assert_eq!(pd.mode(), Mode::File);
    assert_eq!(pd.attrs()[0].name.as_deref(), Some(ev));
    assert_eq!(pd.arch().as_deref(), Some(std::env::consts::ARCH));
    assert!(pd.cmdline().unwrap().iter().any(|a| a == "record"));
    // Build-ids agree with `perf buildid-list`.
    let listed = String::from_utf8(
        std::process::Command::new("perf")
            .args(["buildid-list", "-i"])
            .arg(&f)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let ours: Vec<String> = pd
        .build_ids()
        .iter()
        .map(|b| format!("{} {}", b.build_id_hex(), b.filename))
        .collect();
    let theirs: Vec<String> = listed.lines().map(str::to_string).collect();
    assert_eq!(ours, theirs);
    assert!(!ours.is_empty());
}

#[test]
fn cpu_clock_with_callchains() {
    let Some((ev, _)) = perf_events() else { return };
    let dir = tempfile::tempdir().unwrap();
    let f = record(dir.path(), "g.data", &["-e", ev, "-g"], false);
    let pd = check(&f, false, 1, false);
    let mut with_chain = 0;
    for r in pd.records() {
        if let Record::Sample(s) = r.unwrap() {
            with_chain += usize::from(s.callchain.len() > 1);
        }
    }
    assert!(with_chain > 0);
}

#[test]
fn pipe_mode() {
    let Some((ev, _)) = perf_events() else { return };
    let dir = tempfile::tempdir().unwrap();
    let f = record(dir.path(), "pipe.data", &["-e", ev], true);
    let pd = check(&f, false, 1, false);
    assert_eq!(pd.mode(), Mode::Pipe);
    assert_eq!(pd.attrs()[0].name.as_deref(), Some(ev));
    assert!(pd.hostname().is_some());
}

#[test]
fn several_events() {
    let Some((_, evs)) = perf_events() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let f = record(dir.path(), "multi.data", &["-e", evs], false);
    let pd = check(&f, false, 2, true);
    let mut per_attr = [0usize; 2];
    for r in pd.records() {
        if let Record::Sample(s) = r.unwrap() {
            per_attr[s.attr] += 1;
        }
    }
    assert!(per_attr[0] > 0 && per_attr[1] > 0, "{per_attr:?}");
}

#[test]
fn several_events_pipe_mode() {
    let Some((_, evs)) = perf_events() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let f = record(dir.path(), "multi-pipe.data", &["-e", evs], true);
    check(&f, false, 2, true);
}
