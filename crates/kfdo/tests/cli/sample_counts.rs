//! One recording, one set of words for its sample counts: record, profile and heatmap
//! say "N samples recorded (all processes)", "N samples in BINARY" and "N samples in
//! BINARY's text", and the same count is the same number in every command.

use crate::common::*;
use std::process::Output;

fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The keys of a `--json` document, checking that it prints them sorted at every level
/// (printing the parsed document again gives the same text), as it always has.
fn sorted_keys(o: &Output) -> Vec<String> {
    let text = String::from_utf8_lossy(&o.stdout);
    let j: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(text.trim_end(), serde_json::to_string_pretty(&j).unwrap());
    j.as_object().unwrap().keys().cloned().collect()
}

fn json_and_stderr(o: &Output) -> (serde_json::Value, String) {
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    let j = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}); stderr: {stderr}"));
    (j, stderr)
}

#[test]
fn record_profile_and_heatmap_name_each_count_alike() {
    let dir = tempfile::tempdir().unwrap();
    let bin = build("lz.c", dir.path(), &[]);
    let data = dir.path().join("lz.data");
    let (rec, rec_err) = json_and_stderr(&run_ok(
        kfdo()
            .args([
                "record", "--method", "emulated", "-c", "211", "--json", "-o",
            ])
            .arg(&data)
            .arg("--")
            .arg(&bin)
            .arg("20000"),
    ));
    let recorded = rec["samples"].as_u64().unwrap();
    assert!(recorded > 0);
    let recorded_words = format!("{} samples recorded (all processes)", grouped(recorded));
    assert!(rec_err.contains(&recorded_words), "record: {rec_err}");

    let o = run_ok(
        kfdo()
            .args(["profile", "--json", "--binary"])
            .arg(&bin)
            .arg("--perf-data")
            .arg(&data)
            .arg("-o")
            .arg(dir.path().join("lz.prof")),
    );
    assert_eq!(
        sorted_keys(&o),
        [
            "binary",
            "bolt",
            "branches",
            "build",
            "format",
            "functions",
            "gcc",
            "inputs",
            "locations_with_discriminators",
            "modules",
            "next",
            "output",
            "propeller",
            "ranges",
            "seconds",
            "total_samples"
        ]
    );
    let (prof, prof_err) = json_and_stderr(&o);
    let in_binary = prof["inputs"][0]["samples_in_binary"].as_u64().unwrap();
    assert_eq!(prof["inputs"][0]["samples"].as_u64(), Some(recorded));
    let in_binary_words = format!("{} samples in {}", grouped(in_binary), bin.display());
    assert!(
        prof_err.contains(&format!("{recorded_words}, {in_binary_words}")),
        "profile: {prof_err}"
    );

    // BOLT's summary counts the same two, in the same words.
    let (bolt, bolt_err) = json_and_stderr(&run_ok(
        kfdo()
            .args(["profile", "--json", "--format", "bolt", "--binary"])
            .arg(&bin)
            .arg("--perf-data")
            .arg(&data)
            .arg("-o")
            .arg(dir.path().join("lz.fdata")),
    ));
    assert_eq!(bolt["bolt"]["samples"].as_u64(), Some(recorded));
    assert_eq!(bolt["bolt"]["samples_in_binary"].as_u64(), Some(in_binary));
    assert!(
        bolt_err.contains(&recorded_words)
            && bolt_err.contains(&format!("), {in_binary_words} ->")),
        "profile --format bolt: {bolt_err}"
    );

    // --raw-out's summary counts the same two, in the same words.
    let o = run_ok(
        kfdo()
            .args(["profile", "--json", "--host", "h", "--binary"])
            .arg(&bin)
            .arg("--perf-data")
            .arg(&data)
            .arg("--raw-out")
            .arg(dir.path().join("lz.parquet")),
    );
    assert_eq!(
        sorted_keys(&o),
        [
            "binary_path",
            "build_id",
            "host",
            "next",
            "output",
            "recorder",
            "rows",
            "samples",
            "samples_recorded",
            "seconds",
            "window_end_ns",
            "window_start_ns"
        ]
    );
    let (raw, raw_err) = json_and_stderr(&o);
    assert_eq!(raw["samples_recorded"].as_u64(), Some(recorded));
    assert_eq!(raw["samples"].as_u64(), Some(in_binary));
    assert!(
        raw_err.contains(&format!("{recorded_words}, {in_binary_words} (build-id")),
        "profile --raw-out: {raw_err}"
    );

    let (heat, heat_err) = json_and_stderr(&run_ok(
        kfdo()
            .args(["heatmap", "--json", "--binary"])
            .arg(&bin)
            .arg("-o")
            .arg(dir.path().join("heat.png"))
            .arg(&data),
    ));
    assert_eq!(heat["samples_total"].as_u64(), Some(recorded));
    assert_eq!(heat["samples_in_binary"].as_u64(), Some(in_binary));
    let in_text = heat["samples_in_text"].as_u64().unwrap();
    assert!(in_text > 0 && in_text <= in_binary, "{heat}");
    assert!(
        heat_err.contains(&format!(
            "{recorded_words}, {in_binary_words}, {} samples in {}'s text",
            grouped(in_text),
            bin.display()
        )),
        "heatmap: {heat_err}"
    );
}
