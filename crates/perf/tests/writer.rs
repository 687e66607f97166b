//! Files written by `PerfWriter` / `PipeWriter` are read back identically by kfdo-perf and
//! read by this machine's perf: `perf script` (samples, branch stacks with and without
//! HW_INDEX, mmap events), `perf buildid-list` and `perf report`.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use kfdo_perf::consts::{br_type, branch, misc, perf_type, sample};
use kfdo_perf::{
    BranchEntry, BuildIdEntry, EventAttr, FeatureId, Fork, Mode, OwnedMmap, PerfData, PerfWriter,
    PipeWriter, Record, SampleOut, ScriptFile, ScriptItem,
};

const PID: u32 = 4242;
const BASE: u64 = 0x400000;

fn attr(hw_idx: bool, name: &str) -> EventAttr {
    let mut a = EventAttr::new(perf_type::HARDWARE, 0, 100_003);
    a.sample_type = sample::IP
        | sample::TID
        | sample::TIME
        | sample::PERIOD
        | sample::BRANCH_STACK
        | sample::CPU;
    a.branch_sample_type =
        branch::USER | branch::ANY | branch::TYPE_SAVE | if hw_idx { branch::HW_INDEX } else { 0 };
    a.exclude_kernel = true;
    a.name = Some(name.into());
    a
}

fn mmap(build_id: bool) -> OwnedMmap {
    OwnedMmap {
        pid: PID,
        tid: PID,
        start: BASE,
        len: 0x20000,
        pgoff: 0x1000,
        filename: "/usr/bin/synthetic program".into(),
        misc: misc::USER,
        is_mmap2: true,
        build_id: build_id.then(|| (1..=20).collect()),
        time: 5,
        ..Default::default()
    }
}

/// Deterministic branch stacks of varying depth (0..=32) and flags.
fn stack(i: u64) -> Vec<BranchEntry> {
    let n = (i * 7 % 33) as usize;
    (0..n)
        .map(|k| {
            let from = BASE + 0x1000 + (i * 97 + k as u64 * 13) % 0x10000;
            let to = BASE + 0x1000 + (i * 31 + k as u64 * 61) % 0x10000;
            let ty = [
                br_type::COND,
                br_type::UNCOND,
                br_type::CALL,
                br_type::RET,
                br_type::UNKNOWN,
            ][k % 5];
            BranchEntry {
                from,
                to,
                flags: BranchEntry::make_flags(
                    k % 3 == 0,
                    k % 3 == 1,
                    false,
                    false,
                    (k * 5 + i as usize) as u16,
                    ty,
                ),
            }
        })
        .collect()
}

const N: u64 = 300;

/// Writes the same content through either writer.
macro_rules! fill {
    ($w:expr, $nattrs:expr, $build_id_in_mmap:expr) => {{
        let w = &mut $w;
        w.set_feature_string(FeatureId::HOSTNAME, "kfdo-test");
        w.set_feature_string(FeatureId::OSRELEASE, "6.1.0");
        w.set_feature_string(FeatureId::ARCH, "x86_64");
        w.set_feature_string(FeatureId::CMDLINE, "kfdo vlbr -- synthetic");
        w.add_build_id(BuildIdEntry {
            pid: -1,
            misc: misc::USER,
            build_id: (1..=20).collect(),
            filename: "/usr/bin/synthetic program".into(),
        });
        w.write_fork(&Fork {
            pid: PID,
            ppid: 1,
            tid: PID,
            ptid: 1,
            time: 2,
        })
        .unwrap();
        w.write_comm(PID, PID, "synthetic", true).unwrap();
        w.write_mmap2(&mmap($build_id_in_mmap)).unwrap();
        for i in 0..N {
            let br = stack(i);
            let s = SampleOut {
                ip: BASE + 0x1000 + i * 3,
                pid: PID,
                tid: PID + (i % 2) as u32,
                time: 100 + i * 10,
                cpu: (i % 2) as u32,
                period: 100_003,
                branches: &br,
                hw_idx: Some(i % 32),
                ..Default::default()
            };
            w.write_sample((i % $nattrs) as usize, &s).unwrap();
        }
        w.write_exit(&Fork {
            pid: PID,
            ppid: 1,
            tid: PID,
            ptid: 1,
            time: 100 + N * 10,
        })
        .unwrap();
    }};
}

fn write_file(path: &Path, attrs: Vec<EventAttr>, build_id_in_mmap: bool) {
    let n = attrs.len() as u64;
    let mut w = PerfWriter::create(path, attrs).unwrap();
    fill!(w, n, build_id_in_mmap);
    w.finish().unwrap();
}

fn write_pipe(path: &Path, attrs: Vec<EventAttr>, build_id_in_mmap: bool) {
    let n = attrs.len() as u64;
    let mut w = PipeWriter::new(std::fs::File::create(path).unwrap(), attrs).unwrap();
    fill!(w, n, build_id_in_mmap);
    w.finish().unwrap();
}

/// Our own reader gets back exactly what was written.
fn roundtrip(path: &Path, hw_idx: bool, nattrs: u64) -> PerfData {
    let pd = PerfData::open(path).unwrap();
    assert_eq!(pd.hostname().as_deref(), Some("kfdo-test"));
    assert_eq!(pd.cmdline().unwrap(), ["kfdo", "vlbr", "--", "synthetic"]);
    assert_eq!(pd.build_ids().len(), 1);
    assert_eq!(pd.build_ids()[0].build_id, (1..=20).collect::<Vec<u8>>());
    let mut i = 0;
    let mut kinds = Vec::new();
    for r in pd.records() {
        match r.unwrap() {
            Record::Sample(s) => {
                assert_eq!(s.attr as u64, i % nattrs);
                assert_eq!(
                    (s.ip, s.pid, s.tid, s.time, s.cpu, s.period),
                    (
                        BASE + 0x1000 + i * 3,
                        PID,
                        PID + (i % 2) as u32,
                        100 + i * 10,
                        (i % 2) as u32,
                        100_003
                    )
                );
                assert_eq!(s.branch_stack.iter().collect::<Vec<_>>(), stack(i));
                assert_eq!(s.branch_stack.hw_idx, hw_idx.then_some(i % 32));
                assert_eq!(s.cpumode(), kfdo_perf::CpuMode::User);
                i += 1;
            }
            Record::Mmap(m) => {
                let mut want = mmap(m.build_id.is_some());
                want.time = 0;
                want.prot = kfdo_perf::consts::PROT_READ | kfdo_perf::consts::PROT_EXEC;
                want.flags = kfdo_perf::consts::MAP_PRIVATE;
                let mut got = m.to_owned();
                got.misc &= !misc::MMAP_BUILD_ID;
                assert_eq!(got, want);
                kinds.push("mmap");
            }
            Record::Comm(c) => {
                assert_eq!(
                    (c.pid, c.tid, c.comm, c.exec),
                    (PID, PID, "synthetic", true)
                );
                kinds.push("comm");
            }
            Record::Fork(_) => kinds.push("fork"),
            Record::Exit(f) => {
                assert_eq!(f.time, 100 + N * 10);
                kinds.push("exit");
            }
            Record::BuildId(_) => kinds.push("buildid"),
            Record::Other { .. } => {}
            r => panic!("unexpected {r:?}"),
        }
    }
    assert_eq!(i, N);
    assert_eq!(&kinds[..4], ["fork", "comm", "mmap", "exit"]);
    pd
}

/// `perf script --show-mmap-events -F ip,brstack`, read by our script reader, gives back
/// the mapping and the samples.
fn script_text_roundtrip(path: &Path, build_id_in_mmap: bool) {
    let text = perf_script(path, &["--show-mmap-events", "-F", "ip,brstack"]);
    let f = ScriptFile::from_bytes("perf-script.txt", text.into_bytes());
    let mut r = f.items();
    let mut i = 0;
    let mut mmaps = 0;
    while let Some(item) = r.next_item() {
        match item.unwrap() {
            ScriptItem::Mmap(m) => {
                assert_eq!(
                    (m.pid, m.start, m.len, m.pgoff, m.filename.as_str()),
                    (PID, BASE, 0x20000, 0x1000, "/usr/bin/synthetic program")
                );
                assert!(m.is_executable());
                if build_id_in_mmap {
                    assert_eq!(m.build_id, Some((1..=20).collect()));
                }
                mmaps += 1;
            }
            ScriptItem::Sample { pid, ip, branches } => {
                assert_eq!(pid, None);
                assert_eq!(ip, BASE + 0x1000 + i * 3);
                assert_eq!(branches, stack(i).as_slice(), "sample {i}");
                i += 1;
            }
        }
    }
    assert_eq!((mmaps, i), (1, N));
}

fn perf_ok(args: &[&str], path: &Path) -> String {
    let o = Command::new("perf")
        .args(args)
        .arg("-i")
        .arg(path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "perf {args:?}: {err}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn perf_tools_accept(path: &Path, nattrs: u64) {
    let ids = perf_ok(&["buildid-list"], path);
    assert_eq!(
        ids.trim(),
        "0102030405060708090a0b0c0d0e0f1011121314 /usr/bin/synthetic program"
    );
    let report = perf_ok(&["report", "--stdio"], path);
    assert!(report.contains("of event 'cycles'"), "{report}");
    if nattrs == 1 {
        // In branch mode perf report counts one sample per branch.
        let branches: usize = (0..N).map(|i| stack(i).len()).sum();
        assert!(
            report.contains(&format!("Event count (approx.): {branches}\n")),
            "{report}"
        );
    }
}

#[test]
fn file_mode_branch_stacks() {
    let Some(_) = perf_events() else { return };
    let dir = tempfile::tempdir().unwrap();
    for hw_idx in [false, true] {
        let p = dir.path().join(format!("w-{hw_idx}.data"));
        write_file(&p, vec![attr(hw_idx, "cycles")], false);
        let pd = roundtrip(&p, hw_idx, 1);
        assert_eq!(pd.mode(), Mode::File);
        check(&p, true, 1, false);
        script_text_roundtrip(&p, false);
        perf_tools_accept(&p, 1);
    }
}

#[test]
fn file_mode_build_id_in_mmap2() {
    let Some(_) = perf_events() else { return };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bid.data");
    write_file(&p, vec![attr(true, "cycles")], true);
    roundtrip(&p, true, 1);
    check(&p, true, 1, false);
    script_text_roundtrip(&p, true);
}

#[test]
fn pipe_mode_branch_stacks() {
    let Some(_) = perf_events() else { return };
    let dir = tempfile::tempdir().unwrap();
    for hw_idx in [false, true] {
        let p = dir.path().join(format!("p-{hw_idx}.data"));
        write_pipe(&p, vec![attr(hw_idx, "cycles")], false);
        let pd = roundtrip(&p, hw_idx, 1);
        assert_eq!(pd.mode(), Mode::Pipe);
        check(&p, true, 1, false);
        perf_ok(&["buildid-list"], &p);
    }
}

#[test]
fn several_events_written() {
    let Some(_) = perf_events() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut b = attr(false, "instructions");
    b.config = 1;
    let p = dir.path().join("multi.data");
    write_file(&p, vec![attr(false, "cycles"), b.clone()], false);
    let pd = roundtrip(&p, false, 2);
    assert!(pd
        .attrs()
        .iter()
        .all(|a| a.sample_type & sample::IDENTIFIER != 0));
    check(&p, true, 2, true);
    perf_tools_accept(&p, 2);
    let p = dir.path().join("multi-pipe.data");
    write_pipe(&p, vec![attr(false, "cycles"), b], false);
    roundtrip(&p, false, 2);
    check(&p, true, 2, true);
}

#[test]
fn writer_rejects_bad_input() {
    let mut w = PerfWriter::new(
        std::io::Cursor::new(Vec::new()),
        vec![attr(false, "cycles")],
    )
    .unwrap();
    let huge = vec![BranchEntry::default(); 5000];
    let e = w
        .write_sample(
            0,
            &SampleOut {
                branches: &huge,
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("64 KiB"), "{e}");
    let e = w.write_sample(3, &SampleOut::default()).unwrap_err();
    assert!(e.to_string().contains("only 1 events"), "{e}");
    // The stream is still valid after rejected records.
    w.write_sample(
        0,
        &SampleOut {
            ip: 1,
            ..Default::default()
        },
    )
    .unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let pd = PerfData::from_bytes("mem", bytes).unwrap();
    assert_eq!(
        pd.records()
            .filter(|r| matches!(r, Ok(Record::Sample(_))))
            .count(),
        1
    );
    assert!(PerfWriter::new(std::io::Cursor::new(Vec::new()), vec![]).is_err());
    let mut dup = attr(false, "a");
    dup.ids = vec![7];
    assert!(PerfWriter::new(std::io::Cursor::new(Vec::new()), vec![dup.clone(), dup]).is_err());
}
