//! GCC's AutoFDO profile format (`kfdo_afdo::gcov`): round trips in both
//! releases' layouts, the exact bytes GCC's reader expects, and the files it
//! must refuse (another release's version, truncation, bad magic).

use kfdo_afdo::gcov::{gcc_view, parse_gcov, write_gcov};
use kfdo_afdo::{parse_profile, Format, GcovVersion, LineLocation, Profile};

const BOTH: [GcovVersion; 2] = [GcovVersion::Gcc11, GcovVersion::Gcc12];

/// A profile already in GCC's shape: names without '.', no discriminators,
/// totals as GCC sums them, no inlinee head counts.
fn gcc_shaped() -> Profile {
    let mut p = Profile::new();
    let f = p.function_mut("compress");
    f.head_samples = 12;
    f.add_body(LineLocation::new(0, 0), 12);
    f.add_body(LineLocation::new(5, 0), 3521);
    f.add_call_target(LineLocation::new(7, 0), "_Z7emit_okPhj", 40);
    f.add_call_target(LineLocation::new(7, 0), "emit_literals", 9);
    let h = f.inlinee_mut(LineLocation::new(6, 0), "hash4");
    h.add_body(LineLocation::new(1, 0), 3504);
    h.inlinee_mut(LineLocation::new(1, 0), "load32")
        .add_body(LineLocation::new(2, 0), 3504);
    let m = p.function_mut("main");
    m.add_body(LineLocation::new(3, 0), 1);
    gcc_view(&p)
}

fn bytes(p: &Profile, v: GcovVersion) -> Vec<u8> {
    let mut out = Vec::new();
    write_gcov(p, v, &mut out).unwrap();
    out
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

#[test]
fn gcc_shaped_profiles_round_trip_in_both_layouts() {
    let p = gcc_shaped();
    assert_eq!(
        p.functions["compress"].total_samples,
        12 + 3521 + 3504 + 3504
    );
    for v in BOTH {
        let b = bytes(&p, v);
        assert_eq!(Format::sniff(&b), Some(Format::Gcov(v)));
        let back = parse_gcov(&b, "t.gcov", Some(v)).unwrap();
        assert_eq!(back, p, "{v:?}");
        // read_profile's path sniffs it too.
        assert_eq!(parse_profile(&b, "t.gcov").unwrap(), p);
        // Written again, byte for byte the same.
        assert_eq!(bytes(&back, v), b);
    }
}

#[test]
fn any_profile_reads_back_as_gcc_sees_it() {
    let mut p = Profile::new();
    let f = p.function_mut("work.constprop.0");
    f.add_body(LineLocation::new(2, 0), 10);
    f.add_body(LineLocation::new(2, 3), 25);
    f.add_call_target(LineLocation::new(4, 1), "g.isra.0", 5);
    f.inlinee_mut(LineLocation::new(6, 2), "h")
        .add_body(LineLocation::new(1, 1), 8);
    p.function_mut("work").add_body(LineLocation::new(2, 0), 1);
    p.function_mut("work").head_samples = 3;
    for v in BOTH {
        let back = parse_gcov(&bytes(&p, v), "t.gcov", Some(v)).unwrap();
        assert_eq!(back, gcc_view(&p));
        let w = &back.functions["work"];
        assert_eq!(w.body_count(LineLocation::new(2, 0)), Some(26));
        assert_eq!(w.body[&LineLocation::new(4, 0)].call_targets["g"], 5);
        assert_eq!(w.total_samples, 26 + 8);
        assert_eq!(w.head_samples, 3);
    }
}

#[test]
fn the_bytes_are_what_each_release_reads() {
    let mut p = Profile::new();
    p.function_mut("main").add_body(LineLocation::new(1, 0), 7);
    let v11 = bytes(&p, GcovVersion::Gcc11);
    let v12 = bytes(&p, GcovVersion::Gcc12);
    for (b, version) in [(&v11, 1), (&v12, 2)] {
        assert_eq!(&b[..4], b"adcg", "GCOV_DATA_MAGIC, little-endian");
        assert_eq!(u32_at(b, 4), version, "AUTO_PROFILE_VERSION");
        assert_eq!(u32_at(b, 8), 0);
        assert_eq!(u32_at(b, 12), 0xaa00_0000);
        assert_eq!(u32_at(b, 20), 2, "the placeholder and main");
    }
    // GCC 11: word counts, NUL-padded: "" is 1 word, "main" 2 words.
    assert_eq!(u32_at(&v11, 24), 1);
    assert_eq!(u32_at(&v11, 28), 0);
    assert_eq!(u32_at(&v11, 32), 2);
    assert_eq!(&v11[36..44], b"main\0\0\0\0");
    assert_eq!(u32_at(&v11, 16), 6, "GCC 11's section length counts words");
    // GCC 12: byte counts with the NUL, unpadded.
    assert_eq!(u32_at(&v12, 24), 1);
    assert_eq!(v12[28], 0);
    assert_eq!(u32_at(&v12, 29), 5);
    assert_eq!(&v12[33..38], b"main\0");
    assert_eq!(u32_at(&v12, 16), 18, "GCC 12's section length counts bytes");
    // Then: tag, length, 1 function: head 0 (2 words), name 1, 1 position,
    // 0 call sites, offset 1 << 16, 0 targets, count 7 (2 words); then the
    // module section: tag, length 4 (bytes), count 0.
    let f = 38;
    assert_eq!(u32_at(&v12, f), 0xac00_0000);
    let words: Vec<u32> = (0..12).map(|i| u32_at(&v12, f + 8 + 4 * i)).collect();
    assert_eq!(words, [1, 0, 0, 1, 1, 0, 1 << 16, 0, 7, 0, 0xae00_0000, 4]);
    assert_eq!(u32_at(&v12, v12.len() - 4), 0, "no modules");
    assert_eq!(v12.len(), f + 8 + 4 * 12 + 4);
}

#[test]
fn another_release_version_is_refused_with_the_fix() {
    let p = gcc_shaped();
    let v11 = bytes(&p, GcovVersion::Gcc11);
    let e = parse_gcov(&v11, "lz.gcov", Some(GcovVersion::Gcc12))
        .unwrap_err()
        .to_string();
    for want in [
        "lz.gcov",
        "byte offset 4",
        "version 1",
        "GCC 11",
        "GCC 12 was asked for",
        "--gcc-version 12",
    ] {
        assert!(e.contains(want), "{want:?} missing from: {e}");
    }
    let v12 = bytes(&p, GcovVersion::Gcc12);
    let e = parse_gcov(&v12, "lz.gcov", Some(GcovVersion::Gcc11))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("version 2") && e.contains("--gcc-version 11"),
        "{e}"
    );

    // create_gcov's default version, GCC 4.7's GCOV_VERSION "407*".
    let mut old = v12.clone();
    old[4..8].copy_from_slice(&0x3430_372a_u32.to_le_bytes());
    assert_eq!(Format::sniff(&old), None);
    let e = parse_profile(&old, "old.gcov").unwrap_err().to_string();
    assert!(e.contains("\"407*\"") && e.contains("byte offset 4"), "{e}");
    let mut odd = v12;
    odd[4..8].copy_from_slice(&7u32.to_le_bytes());
    let e = parse_gcov(&odd, "odd.gcov", None).unwrap_err().to_string();
    assert!(e.contains("version 7 is no GCC release's"), "{e}");
}

#[test]
fn create_gcov_version_2_with_gcc_11_strings_is_named() {
    let mut b = bytes(&gcc_shaped(), GcovVersion::Gcc11);
    b[4..8].copy_from_slice(&2u32.to_le_bytes());
    let e = parse_gcov(&b, "cg.gcov", None).unwrap_err().to_string();
    assert!(
        e.contains("create_gcov --gcov_version=2") && e.contains("--gcc-version 12"),
        "{e}"
    );
}

#[test]
fn every_truncation_is_refused_with_its_offset() {
    for v in BOTH {
        let b = bytes(&gcc_shaped(), v);
        // The module section (tag, length, count) is the last 12 bytes; GCC
        // reads zeros where it is missing, so the file may end before it.
        let functions_end = b.len() - 12;
        for len in 0..b.len() {
            let r = parse_gcov(&b[..len], "cut.gcov", Some(v));
            if len == functions_end {
                assert_eq!(r.unwrap(), gcc_shaped());
                continue;
            }
            let e = r
                .expect_err(&format!("{v:?}: {len} bytes accepted"))
                .to_string();
            assert!(e.contains("cut.gcov: at byte offset"), "{e}");
            if len >= 8 {
                assert!(e.contains("truncated"), "{len}: {e}");
            }
        }
    }
}

#[test]
fn bad_magic_and_bad_contents_are_refused() {
    let b = bytes(&gcc_shaped(), GcovVersion::Gcc12);
    let mut bad = b.clone();
    bad[0] = b'x';
    let e = parse_gcov(&bad, "x.gcov", None).unwrap_err().to_string();
    assert!(e.contains("byte offset 0") && e.contains("magic"), "{e}");
    let mut be = b.clone();
    be[..4].copy_from_slice(b"gcda");
    let e = parse_gcov(&be, "be.gcov", None).unwrap_err().to_string();
    assert!(e.contains("big-endian"), "{e}");

    // A string index past the table.
    let mut idx = b.clone();
    let at = idx.len() - 12; // the module section's tag
    idx[at..at + 12].copy_from_slice(&[0; 12]);
    let modules = parse_gcov(&idx, "m.gcov", None);
    assert!(modules.is_ok(), "a zero module section is fine");
    let mut many = b.clone();
    let n = many.len();
    many[n - 4..].copy_from_slice(&3u32.to_le_bytes());
    let e = parse_gcov(&many, "m.gcov", None).unwrap_err().to_string();
    assert!(e.contains("3 modules"), "{e}");
}

#[test]
fn what_gcc_cannot_hold_is_not_written() {
    let mut p = Profile::new();
    p.function_mut("f")
        .add_body(LineLocation::new(0x1_0000, 0), 1);
    let mut out = Vec::new();
    assert!(write_gcov(&p, GcovVersion::Gcc12, &mut out).is_err());
    assert!(out.is_empty(), "nothing written");
    let mut q = Profile::new();
    q.function_mut(".hidden")
        .add_body(LineLocation::new(0, 0), 1);
    assert!(write_gcov(&q, GcovVersion::Gcc11, &mut out).is_err());
    assert!(out.is_empty());
    // Counts above GCC's signed 64-bit counter are capped, not wrapped.
    let mut big = Profile::new();
    big.function_mut("f")
        .add_body(LineLocation::new(0, 0), u64::MAX);
    let back = parse_gcov(&bytes(&big, GcovVersion::Gcc12), "b", None).unwrap();
    assert_eq!(back.functions["f"].total_samples, i64::MAX as u64);
}
