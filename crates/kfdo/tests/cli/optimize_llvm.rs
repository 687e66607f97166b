//! `kfdo optimize --llvm 22 --compare-llvm 19` on a small recipe: every variant is built
//! and judged with LLVM 22's tools (the step logs name clang-22 and llvm-profgen-22, the
//! profile agreement note names llvm-profgen-22), the LLVM 19 run of the baseline and
//! autofdo is made in `OUT/llvm-19` with 19's tools, and the summary's comparison holds
//! the two runs' own deterministic counters, value for value.

use crate::common;

use std::path::Path;

use common::*;

/// The counters table of a summary: counter name -> the cells of its row.
fn counter_rows(summary: &str) -> Vec<(String, Vec<String>)> {
    let table = summary
        .split("\nCounters (")
        .nth(1)
        .expect("the summary has a counters table");
    table
        .lines()
        .skip_while(|l| !l.starts_with("| counter |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<String> = l
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect();
            (cells[0].clone(), cells[1..].to_vec())
        })
        .collect()
}

fn log(out: &Path, step: &str) -> String {
    std::fs::read_to_string(out.join("logs").join(format!("{step}.log")))
        .unwrap_or_else(|e| panic!("{step}: {e}"))
}

#[test]
fn llvm_22_builds_every_variant_and_compares_with_19() {
    let releases = kfdo_testkit::llvm_releases(&["clang", "clang++", "llvm-profgen"]);
    if releases != [Llvm::new(19), Llvm::new(22)] {
        // llvm_releases has said what is missing (a failure where tests must run).
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let recipe = crate::optimize_cli::write_recipe(
        dir.path(),
        "200000",
        r#"$CC $CFLAGS -o lz "$SRC/lz.c" $LDFLAGS"#,
    );
    let run = common::kfdo()
        .args([
            "optimize",
            "--llvm",
            "22",
            "--compare-llvm",
            "19",
            "--method",
            "emulated",
            "--counters",
            "emulated",
            "--no-heatmaps",
            "-j",
            "2",
            "-o",
        ])
        .arg(&out)
        .arg(&recipe)
        .output()
        .unwrap();
    common::ok(&run, "kfdo optimize --llvm 22 --compare-llvm 19");

    // Each run's tools are its release's.
    for (o, llvm) in [(out.clone(), 22), (out.join("llvm-19/"), 19)] {
        let build = log(&o, "build-baseline");
        assert!(build.contains(&format!("clang-{llvm}")), "{build}");
        let other = if llvm == 22 { 19 } else { 22 };
        assert!(!build.contains(&format!("clang-{other}")), "{build}");
    }
    let profgen = log(&out, "profile-llvm-profgen");
    assert!(profgen.contains("llvm-profgen-22 "), "{profgen}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let other = std::fs::read_to_string(out.join("llvm-19/summary.md")).unwrap();
    // The same variant table as with 19's default run.
    for v in crate::optimize_cli::CLANG_VARIANTS {
        assert!(summary.contains(&format!("| {v} |")), "{v}:\n{summary}");
    }
    assert!(
        summary.contains("kfdo's profile equals llvm-profgen-22's"),
        "{summary}"
    );
    // The other run builds the baseline and autofdo only.
    assert!(
        other.contains("| autofdo |") && !other.contains("| ifdo |"),
        "{other}"
    );

    // The comparison quotes each run's own baseline counters.
    let section = summary
        .split("## LLVM 22 against LLVM 19")
        .nth(1)
        .unwrap_or_else(|| panic!("no comparison section:\n{summary}"));
    let ours = counter_rows(&summary);
    let theirs = counter_rows(&other);
    assert!(ours.iter().any(|(n, _)| n == "instructions"), "{ours:?}");
    for (name, cells) in &ours {
        let base19 = &theirs.iter().find(|(n, _)| n == name).unwrap().1[0];
        let base22 = &cells[0];
        let row = format!("| {name} | {base19} | {base22} |");
        assert!(section.contains(&row), "{row} not in:\n{section}");
    }
    assert!(
        section.contains("AutoFDO against its own baseline"),
        "{section}"
    );
}
