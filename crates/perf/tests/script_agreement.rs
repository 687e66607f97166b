//! The `perf script` text reader agrees with the perf.data reader on files perf records
//! here: the same samples (pid, ip) and the same mappings, through `perf script -F pid,ip`,
//! `-F pid,tid,ip`, `-F ip` and `--show-mmap-events`.

mod common;

use common::*;
use kfdo_perf::{OwnedMmap, PerfData, Record, ScriptFile, ScriptItem};

fn read_text(text: String) -> (Vec<(Option<u32>, u64)>, Vec<OwnedMmap>) {
    let f = ScriptFile::from_bytes("perf-script.txt", text.into_bytes());
    let (mut samples, mut mmaps) = (Vec::new(), Vec::new());
    let mut r = f.items();
    while let Some(item) = r.next_item() {
        match item.unwrap() {
            ScriptItem::Sample { pid, ip, branches } => {
                assert!(branches.is_empty());
                samples.push((pid, ip));
            }
            ScriptItem::Mmap(m) => mmaps.push(m),
        }
    }
    (samples, mmaps)
}

#[test]
fn script_text_matches_perf_data() {
    let Some((ev, _)) = perf_events() else { return };
    let dir = tempfile::tempdir().unwrap();
    for pipe in [false, true] {
        let f = record(dir.path(), &format!("s-{pipe}.data"), &["-e", ev], pipe);
        let pd = PerfData::open(&f).unwrap();
        let mut want: Vec<(u32, u64)> = Vec::new();
        let mut want_maps: Vec<OwnedMmap> = Vec::new();
        for r in pd.records() {
            match r.unwrap() {
                Record::Sample(s) => want.push((s.pid, s.ip)),
                Record::Mmap(m) => {
                    let mut o = m.to_owned();
                    o.misc &= kfdo_perf::consts::misc::MMAP_DATA; // text has no cpumode; compared apart
                    want_maps.push(o);
                }
                _ => {}
            }
        }
        want.sort();
        for fields in ["pid,ip", "pid,tid,ip"] {
            let (got, maps) = read_text(perf_script(&f, &["-F", fields, "--show-mmap-events"]));
            let mut got: Vec<(u32, u64)> = got
                .into_iter()
                .map(|(p, ip)| (p.expect("pid printed"), ip))
                .collect();
            got.sort();
            assert_eq!(got, want, "-F {fields}");
            let mut maps: Vec<OwnedMmap> = maps
                .into_iter()
                .map(|mut m| {
                    m.misc &= kfdo_perf::consts::misc::MMAP_DATA;
                    m
                })
                .collect();
            let key = |m: &OwnedMmap| (m.start, m.pid, m.filename.clone());
            maps.sort_by_key(key);
            let mut w = want_maps.clone();
            w.sort_by_key(key);
            assert_eq!(maps, w);
        }
        let (got, _) = read_text(perf_script(&f, &["-F", "ip"]));
        let mut ips: Vec<u64> = got
            .iter()
            .map(|&(p, ip)| {
                assert_eq!(p, None);
                ip
            })
            .collect();
        ips.sort();
        assert_eq!(ips, want.iter().map(|w| w.1).collect::<Vec<_>>());
    }
}

#[test]
fn callchain_text_is_a_clear_error() {
    let Some((ev, _)) = perf_events() else { return };
    let dir = tempfile::tempdir().unwrap();
    let f = record(dir.path(), "g.data", &["-e", ev, "-g"], false);
    let text = perf_script(&f, &["-F", "ip"]);
    let sf = ScriptFile::from_bytes("g.txt", text.into_bytes());
    let mut r = sf.items();
    let e = loop {
        match r.next_item() {
            Some(Ok(_)) => continue,
            Some(Err(e)) => break e,
            None => panic!("callchain text read without error"),
        }
    };
    assert!(e.to_string().contains("--hide-call-graph"), "{e}");
    assert!(e.line().is_some());
    // With the suggested flag it reads.
    let (s, _) = read_text(perf_script(&f, &["-F", "ip", "--hide-call-graph"]));
    assert!(!s.is_empty());
}
