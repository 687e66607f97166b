//! The commands whose output is read as it is end with a `next:` line as every other
//! does: `kfdo report` and `kfdo heatmap` name what to open, `kfdo merge` the flag that
//! builds with the merged profile; and their counts are grouped by thousands.

use crate::common::*;
use crate::next_steps::{next_line, stderr};

const PROFILE: &str = "main:1200:0\n 1: 600\n 2: 600\n";

#[test]
fn merge_names_the_flag_that_reads_the_merged_profile() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
    std::fs::write(&a, PROFILE).unwrap();
    std::fs::write(&b, PROFILE).unwrap();
    let out = dir.path().join("m.afdo");
    let o = run_ok(
        kfdo()
            .args(["merge", "--json", "-o"])
            .arg(&out)
            .arg(&a)
            .arg(&b),
    );
    let err = stderr(&o);
    let line = next_line(&err, "kfdo merge");
    assert!(
        line.starts_with(&format!("clang -fprofile-sample-use={} ", out.display())),
        "{line}"
    );
    // 2 x 1200 samples, grouped as every count kfdo prints.
    assert!(err.contains("2,400 samples"), "{err}");
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["next"].as_str(), Some(line.as_str()));
    // The document as it has always printed: keys sorted (printing the parsed
    // document again gives the same text), each input with its weight.
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(text.trim_end(), serde_json::to_string_pretty(&j).unwrap());
    let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "functions",
            "inputs",
            "next",
            "output",
            "overflows",
            "total_samples"
        ]
    );
    assert_eq!(j["inputs"][1]["file"].as_str(), b.to_str());
    assert_eq!(j["inputs"][1]["weight"], 1);
    assert_eq!(j["total_samples"], 2400);
}

#[test]
fn report_names_the_page_to_open() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
    std::fs::write(&a, PROFILE).unwrap();
    std::fs::write(&b, "main:1000:0\n 1: 1000\n").unwrap();
    let rep = dir.path().join("my report");
    let o = run_ok(
        kfdo()
            .args(["report", "--store"])
            .arg(dir.path().join("none.db"))
            .arg("-o")
            .arg(&rep)
            .arg("--profiles")
            .arg(&a)
            .arg(&b),
    );
    assert_eq!(
        next_line(&stderr(&o), "kfdo report"),
        format!("xdg-open '{}'", rep.join("index.html").display())
    );
    let quiet = run_ok(
        kfdo()
            .args(["--quiet", "report", "--store"])
            .arg(dir.path().join("none.db"))
            .arg("-o")
            .arg(dir.path().join("q"))
            .arg("--profiles")
            .arg(&a)
            .arg(&b),
    );
    assert!(!stderr(&quiet).contains("next:"), "{}", stderr(&quiet));
}

#[test]
fn heatmap_names_the_picture_or_the_report_that_shows_it() {
    let lz = lz();
    let png = lz.dir.join("next-views-heat.png");
    let o = run_ok(
        kfdo()
            .args(["heatmap", "--binary"])
            .arg(&lz.bin)
            .arg(&lz.data)
            .arg("-o")
            .arg(&png),
    );
    let err = stderr(&o);
    assert_eq!(
        next_line(&err, "kfdo heatmap"),
        format!("xdg-open {}", png.with_extension("svg").display())
    );
    let db = lz.dir.join("next-views.db");
    let o = run_ok(
        kfdo()
            .args(["heatmap", "--binary"])
            .arg(&lz.bin)
            .arg(&lz.data)
            .arg("-o")
            .arg(lz.dir.join("next-views-heat2.png"))
            .arg("--store")
            .arg(&db),
    );
    let err = stderr(&o);
    assert_eq!(
        next_line(&err, "kfdo heatmap"),
        format!("kfdo report --store {}", db.display())
    );
    // The hottest functions' sample counts are grouped and say what they count.
    let out = String::from_utf8_lossy(&o.stdout);
    let first = out
        .lines()
        .find(|l| l.contains(" samples  0x"))
        .unwrap_or_else(|| panic!("no function line in:\n{out}"));
    let count = first
        .split(" samples")
        .next()
        .unwrap()
        .split_whitespace()
        .last()
        .unwrap();
    let digits: String = count.chars().filter(|c| *c != ',').collect();
    assert_eq!(
        kfdo_bench::report::fmt_count_int(digits.parse::<u64>().unwrap()),
        count,
        "{first}"
    );
}
