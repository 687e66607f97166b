//! Bad input is a typed error naming the file and the offset, never a panic: every
//! truncation of a valid file, foreign files, wrong magic, absurd sizes and counts.

mod common;

use kfdo_perf::consts::{branch, record as rt, sample};
use kfdo_perf::{
    BranchEntry, EventAttr, Fork, OwnedMmap, PerfData, PerfError, PerfWriter, PipeWriter, Record,
    SampleOut,
};

fn attr() -> EventAttr {
    let mut a = EventAttr::new(0, 0, 1000);
    a.sample_type =
        sample::IP | sample::TID | sample::TIME | sample::CALLCHAIN | sample::BRANCH_STACK;
    a.branch_sample_type = branch::ANY | branch::HW_INDEX;
    a.name = Some("cycles".into());
    a
}

/// A small valid file exercising every structure: attrs, ids, records of each kind,
/// features and build-ids.
fn valid(pipe: bool, nattrs: usize) -> Vec<u8> {
    let attrs = vec![attr(); nattrs];
    let br = [BranchEntry::new(1, 2), BranchEntry::new(3, 4)];
    let m = OwnedMmap {
        pid: 1,
        tid: 1,
        start: 0x1000,
        len: 0x1000,
        filename: "/bin/x".into(),
        is_mmap2: true,
        ..Default::default()
    };
    macro_rules! fill {
        ($w:expr) => {{
            $w.set_feature_string(kfdo_perf::FeatureId::HOSTNAME, "h");
            $w.set_feature_string(kfdo_perf::FeatureId::CMDLINE, "a b");
            $w.add_build_id(kfdo_perf::BuildIdEntry {
                pid: -1,
                misc: 2,
                build_id: vec![7; 20],
                filename: "/bin/x".into(),
            });
            $w.write_comm(1, 1, "x", true).unwrap();
            $w.write_mmap2(&m).unwrap();
            for i in 0..4 {
                $w.write_sample(
                    i % nattrs,
                    &SampleOut {
                        ip: 0x1000 + i as u64,
                        pid: 1,
                        tid: 1,
                        time: 5,
                        callchain: &[1, 2],
                        branches: &br,
                        ..Default::default()
                    },
                )
                .unwrap();
            }
            $w.write_exit(&Fork {
                pid: 1,
                ppid: 0,
                tid: 1,
                ptid: 0,
                time: 9,
            })
            .unwrap();
        }};
    }
    if pipe {
        let mut w = PipeWriter::new(Vec::new(), attrs).unwrap();
        fill!(w);
        w.finish().unwrap()
    } else {
        let mut w = PerfWriter::new(std::io::Cursor::new(Vec::new()), attrs).unwrap();
        fill!(w);
        w.finish().unwrap().into_inner()
    }
}

/// Opens and reads everything; returns the first error, if any. Panics are the bug.
fn read_all(bytes: Vec<u8>) -> Result<usize, PerfError> {
    let pd = PerfData::from_bytes("mem.data", bytes)?;
    let _ = (pd.hostname(), pd.cmdline(), pd.build_ids().len());
    let mut n = 0;
    for r in pd.records() {
        if let Record::Sample(s) = r? {
            n += s.branch_stack.iter().count() + s.callchain.iter().count();
        }
    }
    for c in pd.record_chunks(3) {
        for r in c {
            r?;
        }
    }
    Ok(n)
}

fn assert_names_file(e: &PerfError) {
    let msg = e.to_string();
    assert!(msg.starts_with("mem.data: "), "{msg}");
}

#[test]
fn every_truncation_of_a_file_mode_file_is_an_error() {
    for nattrs in [1, 2] {
        let full = valid(false, nattrs);
        assert!(read_all(full.clone()).is_ok());
        for len in 0..full.len() {
            let e = read_all(full[..len].to_vec()).expect_err(&format!(
                "truncated at {len} of {} read as valid",
                full.len()
            ));
            assert_names_file(&e);
            assert!(e.offset().is_some(), "no offset in {e}");
            assert!(
                e.offset().unwrap() <= len as u64 || len < 104,
                "offset {:?} past the end {len}: {e}",
                e.offset()
            );
        }
    }
}

#[test]
fn every_truncation_of_a_pipe_mode_file_is_handled() {
    let full = valid(true, 2);
    let mut errors = 0;
    for len in 0..full.len() {
        // A pipe stream cut at a record boundary is a valid shorter stream; cut anywhere
        // else it must be an error with an offset.
        match read_all(full[..len].to_vec()) {
            Ok(_) => {}
            Err(e) => {
                assert_names_file(&e);
                assert!(e.offset().is_some());
                errors += 1;
            }
        }
    }
    assert!(errors > full.len() * 9 / 10, "{errors} of {}", full.len());
}

#[test]
fn every_truncation_of_a_perf_recorded_file() {
    let Some((ev, _)) = common::perf_events() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let f = common::record(dir.path(), "t.data", &["-e", ev, "-g"], false);
    let full = std::fs::read(&f).unwrap();
    assert!(read_all(full.clone()).is_ok());
    for len in (0..full.len())
        .step_by(7)
        .chain(full.len() - 64..full.len())
    {
        assert!(
            read_all(full[..len].to_vec()).is_err(),
            "truncated at {len}"
        );
    }
}

#[test]
fn foreign_files() {
    let e = read_all(Vec::new()).unwrap_err();
    assert!(matches!(e, PerfError::Truncated { offset: 0, .. }), "{e}");
    assert!(e.to_string().contains("magic"));

    let e = read_all(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0more bytes of an ELF file".to_vec())
        .unwrap_err();
    assert!(matches!(e, PerfError::BadMagic { .. }), "{e}");
    assert!(e.to_string().contains("is this a perf.data file?"), "{e}");
    assert_eq!(e.offset(), Some(0));

    let e = read_all(b"1/1 401000 0x1/0x2/P/-/-/0\n".to_vec()).unwrap_err();
    assert!(matches!(e, PerfError::BadMagic { .. }), "{e}");

    let mut be = valid(false, 1);
    be[..8].copy_from_slice(b"2ELIFREP");
    assert!(matches!(
        read_all(be).unwrap_err(),
        PerfError::BigEndian { .. }
    ));
    let mut v1 = valid(false, 1);
    v1[..8].copy_from_slice(b"PERFFILE");
    assert!(matches!(
        read_all(v1).unwrap_err(),
        PerfError::OldVersion { .. }
    ));

    let e = PerfData::open("/nonexistent/perf.data".as_ref()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/perf.data: cannot read"),
        "{e}"
    );
}

fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn absurd_header_fields() {
    let good = valid(false, 1);
    // (offset of the u64 field, value): header size, attr_size, attrs offset/size,
    // data offset/size, and the first attr's ids section.
    for (at, v) in [
        (8, 999),
        (16, u64::MAX),
        (16, 17),
        (24, u64::MAX),
        (32, u64::MAX),
        (32, 8),
        (40, u64::MAX - 3),
        (48, u64::MAX),
        (48, 1 << 40),
    ] {
        let mut b = good.clone();
        put64(&mut b, at, v);
        let e = read_all(b).unwrap_err();
        assert_names_file(&e);
        assert!(e.offset().is_some(), "{e}");
    }
    // The feature bitmap claiming all 256 features: the table is misread (and may run past
    // the end); either way an error with an offset.
    let mut b = good.clone();
    for w in 0..4 {
        put64(&mut b, 72 + 8 * w, u64::MAX);
    }
    let e = read_all(b).unwrap_err();
    assert!(e.offset().is_some(), "{e}");
}

/// Offsets of the records in a valid file, by type.
fn record_offsets(bytes: &[u8]) -> Vec<(u64, u32)> {
    let pd = PerfData::from_bytes("mem.data", bytes.to_vec()).unwrap();
    let mut it = pd.records();
    let mut out = Vec::new();
    while let Some(r) = it.next_with_offset() {
        let (off, _) = r.unwrap();
        out.push((
            off,
            u32::from_le_bytes(bytes[off as usize..off as usize + 4].try_into().unwrap()),
        ));
    }
    out
}

#[test]
fn absurd_record_fields() {
    let good = valid(false, 1);
    let recs = record_offsets(&good);
    let sample_at = recs.iter().find(|r| r.1 == rt::SAMPLE).unwrap().0 as usize;
    let mmap_at = recs.iter().find(|r| r.1 == rt::MMAP2).unwrap().0 as usize;

    // Record size below the header itself (would loop forever if accepted).
    for size in [0u16, 7] {
        let mut b = good.clone();
        b[sample_at + 6..sample_at + 8].copy_from_slice(&size.to_le_bytes());
        let e = read_all(b).unwrap_err();
        assert!(
            matches!(e, PerfError::Malformed { offset, .. } if offset == sample_at as u64),
            "{e}"
        );
    }
    // Record size past the end of the data section.
    let mut b = good.clone();
    b[sample_at + 6..sample_at + 8].copy_from_slice(&u16::MAX.to_le_bytes());
    assert!(matches!(
        read_all(b).unwrap_err(),
        PerfError::Truncated { .. }
    ));

    // Sample body: ip(8) pid/tid(8) time(8) then callchain nr, 2 entries, then branch nr.
    let chain_nr = sample_at + 8 + 24;
    let branch_nr = chain_nr + 8 + 16;
    for (at, v, what) in [
        (chain_nr, u64::MAX, "callchain"),
        (chain_nr, 1 << 40, "callchain"),
        (branch_nr, u64::MAX, "branch stack"),
        (branch_nr, 3, "branch stack"),
    ] {
        let mut b = good.clone();
        put64(&mut b, at, v);
        let e = read_all(b).unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e, PerfError::Malformed { .. }) && msg.contains(what),
            "{msg}"
        );
        assert!(
            msg.contains(&format!("offset {}", at)) || e.offset().unwrap() >= sample_at as u64,
            "{msg}"
        );
    }
    // A MMAP2 record too short for its fixed fields.
    let mut b = good.clone();
    b[mmap_at + 6..mmap_at + 8].copy_from_slice(&40u16.to_le_bytes());
    // The next "record" now starts inside the mmap; any outcome but a panic is fine, and
    // the mmap itself must be reported.
    let e = read_all(b).unwrap_err();
    assert!(e.to_string().contains("mmap"), "{e}");

    // A sample whose id no attr declares (two attrs, IDENTIFIER first in the body).
    let two = valid(false, 2);
    let s2 = record_offsets(&two)
        .into_iter()
        .find(|r| r.1 == rt::SAMPLE)
        .unwrap()
        .0 as usize;
    let mut b = two.clone();
    put64(&mut b, s2 + 8, 0xdead);
    let e = read_all(b).unwrap_err();
    assert!(
        matches!(e, PerfError::UnknownSampleId { id: 0xdead, .. }),
        "{e}"
    );

    // AUXTRACE claiming more trailing data than there is.
    let mut b = good.clone();
    b[sample_at..sample_at + 4].copy_from_slice(&rt::AUXTRACE.to_le_bytes());
    put64(&mut b, sample_at + 8, u64::MAX);
    assert!(read_all(b).is_err());

    // Compressed records are a clear "unsupported" with the fix.
    let mut b = good.clone();
    b[sample_at..sample_at + 4].copy_from_slice(&rt::COMPRESSED.to_le_bytes());
    let e = read_all(b).unwrap_err();
    assert!(e.to_string().contains("perf inject"), "{e}");
}

/// Deterministic byte mutations of valid files (the fuzz target does this at scale).
#[test]
fn mutations_never_panic() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for base in [valid(false, 1), valid(false, 2), valid(true, 2)] {
        for _ in 0..3000 {
            let mut b = base.clone();
            for _ in 0..1 + rnd() % 4 {
                let at = (rnd() % b.len() as u64) as usize;
                b[at] = match rnd() % 4 {
                    0 => 0,
                    1 => 0xff,
                    _ => rnd() as u8,
                };
            }
            let _ = read_all(b);
        }
    }
}
