//! Round trips through the reference tools: kfdo's text and extbinary
//! against `llvm-profdata-19 merge --sample` and
//! `llvm-profdata-19 show --sample --detailed-summary`.
//! Skipped (with a note) when llvm-profdata-19 is not installed.

#[path = "format_gen.rs"]
mod gen;

use std::process::Command;

use gen::*;
use kfdo_afdo::{extbinary, parse_profile, text, Profile, ProfileSummary};

const PROFDATA: &str = "llvm-profdata-19";

fn profdata_text(path: &std::path::Path) -> Vec<u8> {
    run(Command::new(PROFDATA)
        .args(["merge", "--sample", "--text", "-o", "-"])
        .arg(path))
}

/// Parse `llvm-profdata show --sample --detailed-summary` output.
fn parse_show_summary(out: &str) -> ProfileSummary {
    let mut s = ProfileSummary::default();
    let field = |key: &str| -> u64 {
        let line = out
            .lines()
            .find(|l| l.starts_with(key))
            .unwrap_or_else(|| panic!("no {key:?} in show output:\n{out}"));
        line[key.len()..].trim().parse().unwrap()
    };
    s.num_functions = field("Total functions:");
    s.max_function_count = field("Maximum function count:");
    s.max_count = field("Maximum block count:");
    s.num_counts = field("Total number of blocks:");
    s.total_count = field("Total count:");
    // "N blocks with count >= M account for P percentage of the total counts."
    for l in out.lines().filter(|l| l.contains(" blocks with count >= ")) {
        let w: Vec<&str> = l.split_whitespace().collect();
        let pct: f64 = w[8].parse().unwrap();
        s.detailed.push(kfdo_afdo::SummaryEntry {
            cutoff: (pct * 10000.0).round() as u32,
            num_counts: w[0].parse().unwrap(),
            min_count: w[5].parse().unwrap(),
        });
    }
    s
}

fn check(p: &Profile, what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let t = text_of(p);
    let e = ext_of(p);
    let tp = write_file(dir.path(), "k.txt", &t);
    let ep = write_file(dir.path(), "k.extbinary", &e);

    // llvm-profdata does not recognize an empty text file as a profile.
    let empty = p.functions.is_empty();
    // 1. kfdo text == llvm-profdata's text of kfdo's text.
    let ref_t = if empty {
        Vec::new()
    } else {
        profdata_text(&tp)
    };
    assert_eq!(
        String::from_utf8_lossy(&ref_t),
        String::from_utf8_lossy(&t),
        "{what}: llvm-profdata text of kfdo text differs"
    );
    // 2. llvm-profdata's text of kfdo's extbinary == kfdo's text.
    let ref_te = profdata_text(&ep);
    assert_eq!(
        String::from_utf8_lossy(&ref_te),
        String::from_utf8_lossy(&t),
        "{what}: llvm-profdata text of kfdo extbinary differs"
    );
    // 3. llvm-profdata's extbinary of kfdo's text == kfdo's extbinary, byte for byte.
    let rp = dir.path().join("ref.extbinary");
    run(Command::new(PROFDATA)
        .args(["merge", "--sample", "--extbinary", "-o"])
        .arg(&rp)
        .arg(if empty { &ep } else { &tp }));
    let ref_e = std::fs::read(&rp).unwrap();
    if ref_e != e {
        let at = ref_e.iter().zip(&e).position(|(a, b)| a != b);
        panic!(
            "{what}: extbinary differs from llvm-profdata's (sizes {} vs {}, first difference at {at:?})",
            ref_e.len(),
            e.len()
        );
    }
    // 4. kfdo reads back its own files and llvm-profdata's to the same model.
    assert_eq!(
        &parse_profile(&e, "kfdo.extbinary").unwrap(),
        p,
        "{what}: own extbinary"
    );
    assert_eq!(
        &text::parse_text(&t, "kfdo.txt").unwrap(),
        p,
        "{what}: own text"
    );
    assert_eq!(
        &parse_profile(&ref_e, "ref.extbinary").unwrap(),
        p,
        "{what}: llvm extbinary"
    );
    assert_eq!(
        &text::parse_text(&ref_t, "ref.txt").unwrap(),
        p,
        "{what}: llvm text"
    );
    // 5. The summary llvm-profdata shows for kfdo's extbinary == kfdo's.
    let show = run(Command::new(PROFDATA)
        .args(["show", "--sample", "--detailed-summary"])
        .arg(&ep));
    let shown = parse_show_summary(&String::from_utf8_lossy(&show));
    let mine = ProfileSummary::compute(p);
    assert_eq!(shown, mine, "{what}: summary");
    // ... and the summary stored in the file is the one computed.
    let (_, stored) = extbinary::parse_extbinary_with_summary(&e, "k").unwrap();
    assert_eq!(stored.as_ref(), Some(&mine));
}

#[test]
fn hand_built_profile_matches_llvm_profdata() {
    if !kfdo_testkit::require_tools(&[PROFDATA]) {
        return;
    }
    check(&hand_profile(), "hand-built");
}

#[test]
fn random_profiles_match_llvm_profdata() {
    if !kfdo_testkit::require_tools(&[PROFDATA]) {
        return;
    }
    for seed in 1..=40u64 {
        let n = [1, 2, 5, 20, 100][(seed % 5) as usize];
        check(&random_profile(seed, n), &format!("seed {seed}"));
    }
}

#[test]
fn empty_profile_matches_llvm_profdata() {
    if !kfdo_testkit::require_tools(&[PROFDATA]) {
        return;
    }
    check(&Profile::new(), "empty");
}
