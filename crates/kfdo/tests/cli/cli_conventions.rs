//! One convention per option, in every command: `--json` is a switch (the summary as
//! JSON on stdout), `--json-out FILE` writes it to a file, `--counters` names a source
//! of counters (record writes them with `--counters-out`), `-o/--output` names the main
//! output. Old spellings still work for one release, with a note on stderr.

use crate::common::*;
use std::path::Path;
use std::process::Output;

fn fixture() -> &'static LzRecording {
    lz()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn stdout_json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&o.stdout),
            stderr(o)
        )
    })
}

fn json_file(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn deprecation_note(old: &str, new: &str) -> String {
    format!("kfdo: note: `{old}` is deprecated; use `{new}`")
}

/// `kfdo compare` of two quick commands into `store`, with `json_args`.
fn compare(store: &Path, json_args: &[&str]) -> Output {
    run_ok(
        kfdo()
            .args([
                "compare",
                "--counters",
                "none",
                "--runs",
                "2",
                "--warmup",
                "0",
                "--shell",
                "none",
                "--store",
            ])
            .arg(store)
            .args(json_args)
            .args(["--", "true", "true --version"]),
    )
}

#[test]
fn compare_and_report_json_is_a_switch_and_json_out_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("bench.db");

    // The old spelling: a file, and a note.
    let old = dir.path().join("old.json");
    let o = compare(&store, &["--json", old.to_str().unwrap()]);
    assert!(
        stderr(&o).contains(&deprecation_note("--json FILE", "--json-out FILE")),
        "{}",
        stderr(&o)
    );
    assert!(json_file(&old)["benchmark"].is_object());

    // The new spelling of a file: no note.
    let new = dir.path().join("new.json");
    let o = compare(&store, &["--json-out", new.to_str().unwrap()]);
    assert!(!stderr(&o).contains("deprecated"), "{}", stderr(&o));
    assert!(json_file(&new)["benchmark"].is_object());

    // The switch: stdout is the JSON alone (the text verdict went to stderr).
    let o = compare(&store, &["--json"]);
    let j = stdout_json(&o);
    assert!(j["benchmark"].is_object(), "{j}");
    assert!(!stderr(&o).contains("deprecated"), "{}", stderr(&o));

    let out = dir.path().join("report");
    let old = dir.path().join("report-old.json");
    let o = run_ok(
        kfdo()
            .args(["report", "--store"])
            .arg(&store)
            .arg("-o")
            .arg(&out)
            .arg("--json")
            .arg(&old),
    );
    assert!(
        stderr(&o).contains(&deprecation_note("--json FILE", "--json-out FILE")),
        "{}",
        stderr(&o)
    );
    assert!(json_file(&old)["benchmarks"].is_array());
    let new = dir.path().join("report-new.json");
    let o = run_ok(
        kfdo()
            .args(["report", "--store"])
            .arg(&store)
            .arg("-o")
            .arg(&out)
            .arg("--json-out")
            .arg(&new),
    );
    assert!(!stderr(&o).contains("deprecated"), "{}", stderr(&o));
    assert_eq!(json_file(&new)["benchmarks"], json_file(&old)["benchmarks"]);
    let o = run_ok(
        kfdo()
            .args(["report", "--store"])
            .arg(&store)
            .arg("-o")
            .arg(&out)
            .arg("--json"),
    );
    assert!(stdout_json(&o)["benchmarks"].is_array());
}

#[test]
fn heatmap_json_is_a_switch_and_json_out_a_file() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let heatmap = |json_args: &[&str]| {
        run_ok(
            kfdo()
                .arg("heatmap")
                .arg("--binary")
                .arg(&f.bin)
                .arg("-o")
                .arg(dir.path().join("heat.png"))
                .args(json_args)
                .arg(&f.data),
        )
    };
    let old = dir.path().join("old.json");
    let o = heatmap(&["--json", old.to_str().unwrap()]);
    assert!(
        stderr(&o).contains(&deprecation_note("--json FILE", "--json-out FILE")),
        "{}",
        stderr(&o)
    );
    let samples = json_file(&old)["samples_in_text"].clone();
    assert!(samples.as_u64().unwrap() > 0);
    let new = dir.path().join("new.json");
    let o = heatmap(&["--json-out", new.to_str().unwrap()]);
    assert!(!stderr(&o).contains("deprecated"), "{}", stderr(&o));
    assert_eq!(json_file(&new)["samples_in_text"], samples);
    let o = heatmap(&["--json"]);
    assert_eq!(stdout_json(&o)["samples_in_text"], samples);
}

#[test]
fn record_counters_out_and_its_old_spelling() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    for (option, note) in [("--counters-out", false), ("--counters", true)] {
        let counters = dir.path().join(format!("{option}.json"));
        let o = run_ok(
            kfdo()
                .args(["record", "--method", "emulated", "-o"])
                .arg(dir.path().join("lz.data"))
                .arg(option)
                .arg(&counters)
                .arg("--")
                .arg(&f.bin)
                .arg("2000"),
        );
        assert_eq!(
            stderr(&o).contains(&deprecation_note("--counters FILE", "--counters-out FILE")),
            note,
            "{option}: {}",
            stderr(&o)
        );
        assert!(
            json_file(&counters).to_string().contains("instructions"),
            "{option}: counters written"
        );
    }
}

#[test]
fn record_json_stdout_is_only_the_json() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let o = run_ok(
        kfdo()
            .args(["record", "--method", "emulated", "--json", "-o"])
            .arg(dir.path().join("lz.data"))
            .arg("--")
            .arg(&f.bin)
            .arg("2000"),
    );
    let j = stdout_json(&o);
    assert_eq!(j["method"], "emulated", "{j}");
    assert!(j["samples"].as_u64().unwrap() > 0, "{j}");
    // The document as it has always printed: these keys, sorted (printing the parsed
    // document again gives the same text).
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(text.trim_end(), serde_json::to_string_pretty(&j).unwrap());
    let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "counters",
            "exit_code",
            "method",
            "mmaps",
            "next",
            "output",
            "period",
            "processes",
            "samples",
            "signal",
            "warnings",
            "windows"
        ]
    );
    // lz's own line ("N bytes -> M") went to stderr.
    assert!(stderr(&o).contains("bytes ->"), "{}", stderr(&o));
}

/// `kfdo profile --unsymbolized` / `--unsymbolized-in` (llvm-profgen's unsymbolized
/// text, one name since "raw" names the fleet's Parquet files alone): the old
/// spellings `--raw` / `--raw-in` write the same files, each with one note naming
/// its new spelling.
#[test]
fn profile_unsymbolized_and_its_old_spellings() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let profile = |input: &str, file: &Path, out: &Path, extra: &[&str]| {
        run_ok(
            kfdo()
                .args(["profile", "--binary"])
                .arg(&f.bin)
                .arg(input)
                .arg(file)
                .arg("-o")
                .arg(out)
                .args(extra),
        )
    };
    let (new, old) = (dir.path().join("new.raw"), dir.path().join("old.raw"));
    let o = profile("--perf-data", &f.data, &new, &["--unsymbolized"]);
    assert!(!stderr(&o).contains("deprecated"), "{}", stderr(&o));
    // The next step reads it with the new spelling.
    assert!(stderr(&o).contains(" --unsymbolized-in "), "{}", stderr(&o));
    let o = profile("--perf-data", &f.data, &old, &["--raw"]);
    assert_eq!(std::fs::read(&old).unwrap(), std::fs::read(&new).unwrap());
    let note = deprecation_note("--raw", "--unsymbolized");
    assert_eq!(stderr(&o).matches(&note).count(), 1, "{}", stderr(&o));
    assert!(!stderr(&o).contains("--raw-in"), "{}", stderr(&o));

    let (new_text, old_text) = (dir.path().join("new.txt"), dir.path().join("old.txt"));
    let fmt = ["--format", "text"];
    let o = profile("--unsymbolized-in", &new, &new_text, &fmt);
    assert!(!stderr(&o).contains("deprecated"), "{}", stderr(&o));
    let o = profile("--raw-in", &new, &old_text, &fmt);
    assert_eq!(
        std::fs::read(&old_text).unwrap(),
        std::fs::read(&new_text).unwrap()
    );
    let note = deprecation_note("--raw-in", "--unsymbolized-in");
    assert_eq!(stderr(&o).matches(&note).count(), 1, "{}", stderr(&o));
    assert!(!stderr(&o).contains("`--raw` "), "{}", stderr(&o));
}

#[test]
fn raw_split_output_and_its_old_spelling() {
    let f = fixture();
    for (option, note) in [("-o", false), ("--output", false), ("--out", true)] {
        let dir = tempfile::tempdir().unwrap();
        let o = run_ok(
            kfdo()
                .args(["raw", "split", "--hosts", "2", "--binary"])
                .arg(&f.bin)
                .arg("--perf-data")
                .arg(&f.data)
                .arg(option)
                .arg(dir.path()),
        );
        assert_eq!(
            stderr(&o).contains(&deprecation_note("raw split --out DIR", "raw split -o DIR")),
            note,
            "{option}: {}",
            stderr(&o)
        );
        assert!(
            dir.path().join("host-0000.parquet").exists(),
            "{option}: the hosts' files are written"
        );
    }
}
