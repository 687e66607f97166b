//! Unit tests of the `perf script` reader and its field parsers.

use super::*;

type Item = Result<(Option<u32>, u64, Vec<BranchEntry>), String>;

fn items(text: &str) -> Vec<Item> {
    let f = ScriptFile::from_bytes("t", text.as_bytes().to_vec());
    let mut r = f.items();
    let mut out = Vec::new();
    while let Some(i) = r.next_item() {
        out.push(match i {
            Ok(ScriptItem::Sample { pid, ip, branches }) => Ok((pid, ip, branches.to_vec())),
            Ok(ScriptItem::Mmap(m)) => Err(format!("mmap {}", m.filename)),
            Err(e) => Err(e.to_string()),
        });
    }
    out
}

#[test]
fn sample_shapes() {
    let b = |f, t, fl| BranchEntry {
        from: f,
        to: t,
        flags: fl,
    };
    let r = items(" 6099/6099       7f5d30ec2316 0x401000/0x401040/M/-/-/0/  0x401011/0x401051/P/X/A/3/COND \n");
    assert_eq!(
        r,
        vec![Ok((
            Some(6099),
            0x7f5d30ec2316,
            vec![
                b(0x401000, 0x401040, 1),
                b(
                    0x401011,
                    0x401051,
                    BranchEntry::make_flags(false, true, true, true, 3, 1)
                )
            ]
        ))]
    );
    assert_eq!(
        items("           401000 [unknown] 0x1/0x2/P/-/-/0/\n"),
        vec![Ok((None, 0x401000, vec![b(1, 2, 2)]))]
    );
    assert_eq!(
        items(" 6218      7f119ced68c8\n     7f119ced7080\n"),
        vec![
            Ok((Some(6218), 0x7f119ced68c8, vec![])),
            Ok((None, 0x7f119ced7080, vec![]))
        ]
    );
    // -F ip,sym: the symbol is skipped even when it looks like hex.
    assert_eq!(
        items("     7f5d30ec2316 add\n"),
        vec![Ok((None, 0x7f5d30ec2316, vec![]))]
    );
}

#[test]
fn mmap_lines() {
    let f = ScriptFile::from_bytes(
        "t",
        b"PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x120bb08) @ 0xffffffff81000000]: x [kernel.kallsyms]_text\n\
          sh  6099   298.898400: PERF_RECORD_MMAP2 6099/6099: [0x55d21e86b000(0x13000) @ 0x4000 fe:00 247072 0]: r-xp /usr/bin/my dash\n\
          PERF_RECORD_MMAP2 1/2: [0x1000(0x2000) @ 0 <abcd>]: r--s /x\n"
            .to_vec(),
    );
    let mut r = f.items();
    let mut ms = Vec::new();
    while let Some(i) = r.next_item() {
        match i.unwrap() {
            ScriptItem::Mmap(m) => ms.push(m),
            _ => panic!(),
        }
    }
    assert_eq!(ms[0].pid, u32::MAX);
    assert_eq!(ms[0].misc, misc::KERNEL);
    assert!(ms[0].is_executable());
    assert_eq!(ms[0].filename, "[kernel.kallsyms]_text");
    assert_eq!(
        (
            ms[1].start,
            ms[1].len,
            ms[1].pgoff,
            ms[1].maj,
            ms[1].min,
            ms[1].ino
        ),
        (0x55d21e86b000, 0x13000, 0x4000, 0xfe, 0, 247072)
    );
    assert_eq!(ms[1].filename, "/usr/bin/my dash");
    assert_eq!(ms[1].prot, PROT_READ | PROT_EXEC);
    assert_eq!(ms[2].build_id.as_deref(), Some(&[0xab, 0xcd][..]));
    assert!(!ms[2].is_executable());
    assert_eq!(ms[2].flags, MAP_SHARED);
}

#[test]
fn errors_name_the_line() {
    let r = items("\n 1/1 401000 0x1/0x2/P/-/-/0/\n\tcallchain\n");
    assert!(r[0].is_ok());
    let e = r[1].as_ref().unwrap_err();
    assert!(e.starts_with("t:3:"), "{e}");
    let r = items("0x1/zz/P\n");
    assert!(r[0].as_ref().unwrap_err().starts_with("t:1:"));
    let r = items("PERF_RECORD_MMAP2 1/1: garbage\n");
    assert!(r[0].as_ref().unwrap_err().contains("mmap line"));
}

#[test]
fn swar_hex_matches_digit_by_digit() {
    let digits = b"0123456789abcdefABCDEF/ xg\x80\xc3";
    let mut state = 0x2545f4914f6cdd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..200_000 {
        let len = (next() % 24) as usize;
        let mut s = b"0x".to_vec();
        for _ in 0..len {
            // Mostly hex digits, a `/` somewhere, sometimes junk.
            let r = next() % 100;
            let c = if r < 80 {
                digits[(next() % 16) as usize]
            } else if r < 92 {
                b'/'
            } else {
                digits[16 + (next() % (digits.len() as u64 - 16)) as usize]
            };
            s.push(c);
        }
        let slow = hex_slash_plain(&s, 2);
        assert_eq!(hex_slash(&s, 0), slow, "{:?}", String::from_utf8_lossy(&s));
    }
}

#[test]
fn addresses_only_reads_the_same_records() {
    let text = " 1/1 401000 0x401000/0x401040/M/-/-/0/  0x401011/0x401051/P/X/A/3/COND \t0x1/0x2 0x3/0x4/P/-/-/7/IND_CALL/x/y\n\
                401000 0xaaaaaaaaaaaaaaaa/0xbbbbbbbbbbbbbbbb/-/-/-/0/  0x12/0x34/-/-/-/0/\n";
    let f = ScriptFile::from_bytes("t", text.as_bytes().to_vec());
    let (mut a, mut b) = (f.items(), f.items().addresses_only(true));
    loop {
        match (a.next_item(), b.next_item()) {
            (None, None) => break,
            (
                Some(Ok(ScriptItem::Sample { pid, ip, branches })),
                Some(Ok(ScriptItem::Sample {
                    pid: p2,
                    ip: i2,
                    branches: b2,
                })),
            ) => {
                assert_eq!((pid, ip), (p2, i2));
                let strip: Vec<_> = branches.iter().map(|e| (e.from, e.to)).collect();
                assert_eq!(strip, b2.iter().map(|e| (e.from, e.to)).collect::<Vec<_>>());
                assert!(b2.iter().all(|e| e.flags == 0));
                assert_eq!(branches.len(), if pid.is_some() { 4 } else { 2 });
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn chunks_cover_all_lines() {
    let mut text = String::new();
    for i in 0..1000 {
        text.push_str(&format!(
            " {i}/{i} {:x} 0x{i:x}/0x{:x}/P/-/-/0/\n",
            0x400000 + i,
            i + 1
        ));
    }
    let f = ScriptFile::from_bytes("t", text.into_bytes());
    for n in [1, 2, 3, 7, 64, 5000] {
        let mut seen = Vec::new();
        for mut c in f.script_chunks(n) {
            let first_line = c.line();
            let mut k = 0;
            while let Some(i) = c.next_item() {
                if let ScriptItem::Sample { pid, .. } = i.unwrap() {
                    assert_eq!(u64::from(pid.unwrap()) + 1, first_line + k);
                    seen.push(pid.unwrap());
                    k += 1;
                }
            }
        }
        assert_eq!(seen, (0..1000).collect::<Vec<_>>(), "n={n}");
    }
}
