//! Corrupt input: truncated and bit-flipped extbinary, garbage, hostile
//! lengths and nesting, bad text lines. Always a clear error naming the
//! file and the place, never a panic.

#[path = "format_gen.rs"]
mod gen;

use gen::*;
use kfdo_afdo::{extbinary, parse_profile, text, AfdoError, Profile};

fn ext_sample() -> Vec<u8> {
    let mut p = hand_profile();
    p.merge(&random_profile(7, 30));
    ext_of(&p)
}

#[test]
fn truncated_extbinary_is_an_error_at_every_length() {
    let e = ext_sample();
    assert!(parse_profile(&e, "ok.extbinary").is_ok());
    for len in 0..e.len() {
        match parse_profile(&e[..len], "cut.extbinary") {
            Ok(_) => panic!("truncation to {len} of {} bytes was accepted", e.len()),
            Err(err) => {
                let msg = err.to_string();
                assert!(msg.starts_with("cut.extbinary: "), "{msg}");
            }
        }
    }
}

#[test]
fn truncation_error_names_byte_offset() {
    let e = ext_sample();
    // Cut inside the function profiles: the header table is intact and the
    // last section (FuncMetadata) now runs past the end.
    let err = extbinary::parse_extbinary(&e[..e.len() - 3], "t.extbinary").unwrap_err();
    match &err {
        AfdoError::Binary { file, offset, msg } => {
            assert_eq!(file, "t.extbinary");
            assert!(*offset > 0 && (*offset as usize) < e.len());
            assert!(msg.contains("truncated") || msg.contains("end"), "{msg}");
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert!(err.to_string().contains("at byte offset"), "{err}");
}

#[test]
fn bit_flips_never_panic() {
    let e = ext_sample();
    let mut r = Rng::new(99);
    let mut errors = 0;
    for i in (0..e.len()).step_by(3) {
        {
            let mut c = e.clone();
            c[i] ^= 1 << r.below(8);
            if let Err(err) = parse_profile(&c, "flip") {
                errors += 1;
                assert!(err.to_string().starts_with("flip: "), "{err}");
            }
        }
    }
    assert!(errors > 0);
}

#[test]
fn garbage_never_panics() {
    let mut r = Rng::new(5);
    let magic = {
        let e = ext_of(&Profile::new());
        e[..10].to_vec() // magic + version + first byte of the section count
    };
    for round in 0..3000 {
        let len = r.below(300) as usize;
        let mut g: Vec<u8> = (0..len).map(|_| r.next_u64() as u8).collect();
        if round % 2 == 0 {
            g.splice(0..0, magic.iter().copied());
        }
        let _ = parse_profile(&g, "garbage");
        let _ = text::parse_text(&g, "garbage");
    }
    assert!(matches!(
        parse_profile(&[0xff, 0x00, 0x01, 0x02], "bin"),
        Err(AfdoError::UnknownFormat { .. })
    ));
}

fn uleb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// An extbinary file with one name-table section and one profile section
/// holding exactly `names` and `lbr`.
fn craft(names: &[u8], lbr: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    uleb(&mut f, extbinary::MAGIC_EXT_BINARY);
    uleb(&mut f, extbinary::VERSION);
    f.extend_from_slice(&2u64.to_le_bytes());
    let base = f.len() + 64;
    for (ty, off, size) in [
        (extbinary::sec::NAME_TABLE, base, names.len()),
        (extbinary::sec::LBR_PROFILE, base + names.len(), lbr.len()),
    ] {
        for v in [ty, 0, off as u64, size as u64] {
            f.extend_from_slice(&v.to_le_bytes());
        }
    }
    f.extend_from_slice(names);
    f.extend_from_slice(lbr);
    f
}

#[test]
fn hostile_lengths_and_nesting_are_bounded() {
    // A name table claiming 2^60 names.
    let mut names = Vec::new();
    uleb(&mut names, 1 << 60);
    let e = parse_profile(&craft(&names, &[]), "huge").unwrap_err();
    assert!(e.to_string().contains("names"), "{e}");

    let mut names = Vec::new();
    uleb(&mut names, 1);
    names.extend_from_slice(b"f\0");
    // A function claiming 2^50 body records.
    let mut lbr = vec![0, 0, 5];
    uleb(&mut lbr, 1 << 50);
    let e = parse_profile(&craft(&names, &lbr), "records").unwrap_err();
    assert!(e.to_string().contains("body records"), "{e}");
    // A name index out of range.
    let e = parse_profile(&craft(&names, &[0, 9, 0, 0, 0]), "idx").unwrap_err();
    assert!(e.to_string().contains("name index 9"), "{e}");
    // An overlong ULEB128.
    let e = parse_profile(&craft(&names, &[0xff; 12]), "uleb").unwrap_err();
    assert!(e.to_string().contains("64 bits"), "{e}");
    // Inlinees nested 100k deep: an error, not a stack overflow.
    let mut lbr = vec![0];
    for _ in 0..100_000 {
        lbr.extend_from_slice(&[0, 1, 0, 1, 1, 0]); // name 0, total 1, 0 records, 1 callsite at 1.0
    }
    let e = parse_profile(&craft(&names, &lbr), "deep").unwrap_err();
    assert!(e.to_string().contains("nesting"), "{e}");
    // Section header pointing past the end of the file.
    let mut f = craft(&names, &[0, 0, 1, 0, 0]);
    assert!(parse_profile(&f, "ok").is_ok());
    let at = f.len() - 5 - 3 - 8; // size field of the second section
    f[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let e = parse_profile(&f, "past").unwrap_err();
    assert!(e.to_string().contains("past the end"), "{e}");
}

#[test]
fn other_binary_variants_get_a_hint() {
    let mut f = Vec::new();
    uleb(&mut f, extbinary::MAGIC_BINARY);
    uleb(&mut f, 103);
    // Not sniffed as extbinary; read as extbinary directly it explains.
    let e = extbinary::parse_extbinary(&f, "old.prof").unwrap_err();
    assert!(e.to_string().contains("--extbinary"), "{e}");
    let mut v = Vec::new();
    uleb(&mut v, extbinary::MAGIC_EXT_BINARY);
    uleb(&mut v, 102);
    let e = extbinary::parse_extbinary(&v, "v.prof").unwrap_err();
    assert!(e.to_string().contains("version 102"), "{e}");
}

#[test]
fn bad_text_lines_name_file_and_line() {
    let cases: &[(&str, usize, &str)] = &[
        ("f:10:1\n 1: x\n", 2, "count"),
        ("f:10\n", 1, "header"),
        ("f:x:1\n", 1, "total"),
        (" 1: 3\n", 1, "before any function"),
        ("f:10:1\n 1: 5\n   2: 3\n", 3, "indented"),
        ("f:10:1\n 1.x: 5\n", 2, "discriminator"),
        ("f:10:1\n 99999999999: 5\n", 2, "line offset"),
        ("f:10:1\n 1: 5 tgt\n", 2, "call target"),
        ("f:10:1\n 1: 5 :3\n", 2, "empty call target"),
        ("f:10:1\n 1: g:x\n", 2, "inlinee"),
        ("f:10:1\n 1 5\n", 2, "`:`"),
        ("f:10:1\n\n# c\n 1:5\n", 4, "space"),
        (":10:1\n", 1, "empty function name"),
        ("f:99999999999999999999999:1\n", 1, "total"),
    ];
    for (input, line, want) in cases {
        let e = text::parse_text(input.as_bytes(), "bad.txt").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("bad.txt:{line}: ")),
            "{input:?}: got {msg}"
        );
        assert!(msg.contains(want), "{input:?}: {msg} lacks {want:?}");
    }
    // Deep text nesting is bounded too.
    let mut t = String::from("f:1:1\n");
    for d in 1..3000 {
        t.push_str(&" ".repeat(d));
        t.push_str("1: g:1\n");
    }
    let e = text::parse_text(t.as_bytes(), "deep.txt").unwrap_err();
    assert!(e.to_string().contains("nesting"), "{e}");
}

#[test]
fn unrepresentable_profiles_are_refused_by_writers() {
    let mut p = Profile::new();
    p.function_mut("f")
        .add_body(kfdo_afdo::LineLocation::new(0x10000, 0), 1);
    for fmt in [kfdo_afdo::Format::Text, kfdo_afdo::Format::ExtBinary] {
        let mut out = Vec::new();
        let e = kfdo_afdo::write_profile(&p, fmt, &mut out).unwrap_err();
        assert!(e.to_string().contains("0xffff"), "{e}");
        assert!(out.is_empty());
    }
    let mut p = Profile::new();
    p.function_mut("bad\nname").add_total(1);
    assert!(kfdo_afdo::write_profile(&p, kfdo_afdo::Format::Text, Vec::new()).is_err());
}

#[test]
fn file_writes_are_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.extbinary");
    let p = hand_profile();
    kfdo_afdo::write_profile_file(&p, kfdo_afdo::Format::ExtBinary, &out).unwrap();
    assert_eq!(kfdo_afdo::read_profile(&out).unwrap(), p);
    // A profile that cannot be written leaves the old file alone and no
    // temporary behind.
    let mut bad = Profile::new();
    bad.function_mut("f")
        .add_body(kfdo_afdo::LineLocation::new(0x10000, 0), 1);
    assert!(kfdo_afdo::write_profile_file(&bad, kfdo_afdo::Format::Text, &out).is_err());
    assert_eq!(kfdo_afdo::read_profile(&out).unwrap(), p);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // Missing files are named in the error.
    let e = kfdo_afdo::read_profile(&dir.path().join("missing.prof")).unwrap_err();
    assert!(e.to_string().contains("missing.prof"), "{e}");
}
