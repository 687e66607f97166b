//! `kfdo merge`, `kfdo overlap` and `kfdo diff` on real profiles: programs built
//! by clang-19, recorded with kfdo's emulated LBR, profiled by kfdo. Merge must
//! write byte for byte the text `llvm-profdata merge --sample --text` writes
//! (weights, text + extbinary mixes), overlap must print llvm-profdata overlap
//! --sample's figures (also for two GCC gcov profiles), with llvm-profdata of each
//! LLVM release kfdo is tested with (19 and 22), and diff must
//! refuse unrelated programs. Bad inputs: clear errors, nothing written. The
//! staleness check (`diff --binary`) is in profile_staleness.rs.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::*;
use kfdo_testkit::require_tools;

fn tools() -> bool {
    require_tools(&["clang-19", "clang++-19", "llvm-profdata-19", "qemu-x86_64"])
}

/// Two recordings of one program with different inputs, profiled in the
/// given formats.
struct Pair {
    name: &'static str,
    a: PathBuf,
    b: PathBuf,
}

/// The three programs' profile pairs, recorded once for all tests here (in
/// cargo's per-target scratch directory, so nothing is left in /tmp).
fn pairs() -> &'static [Pair] {
    static PAIRS: OnceLock<Vec<Pair>> = OnceLock::new();
    PAIRS.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("profile_tools");
        let _ = std::fs::remove_dir_all(&root);
        let plan: [(&str, &str, [&str; 2], [&str; 2]); 3] = [
            ("lz", "lz.c", ["60000", "150000"], ["text", "extbinary"]),
            (
                "interp",
                "interp.c",
                ["18", "21"],
                ["extbinary", "extbinary"],
            ),
            ("shapes", "shapes.cpp", ["3000", "9000"], ["text", "text"]),
        ];
        plan.iter()
            .map(|&(name, src, args, formats)| {
                let dir = root.join(name);
                std::fs::create_dir_all(&dir).unwrap();
                let bin = build(src, &dir, &[]);
                let mut out = Vec::new();
                for (i, (arg, fmt)) in args.iter().zip(formats).enumerate() {
                    let data = dir.join(format!("{i}.data"));
                    record_emulated(&bin, &[arg], &data);
                    let p = dir.join(format!("{i}.{fmt}.prof"));
                    profile_perf_data(&bin, &data, &p, fmt);
                    out.push(p);
                }
                let b = out.pop().unwrap();
                let a = out.pop().unwrap();
                Pair { name, a, b }
            })
            .collect()
    })
}

/// The releases whose llvm-profdata the merge and overlap are compared with.
fn releases() -> Vec<Llvm> {
    kfdo_testkit::llvm_releases(&["llvm-profdata"])
}

fn profdata(llvm: Llvm, args: &[&str], files: &[&Path]) -> Output {
    run_ok(Command::new(llvm.profdata()).args(args).args(files))
}

/// llvm-profdata's overlap report, as (label, value) pairs in print order:
/// every "name: value" line of its program-level part.
fn llvm_overlap(llvm: Llvm, base: &Path, test: &Path) -> Vec<(String, String)> {
    let out = profdata(llvm, &["overlap", "--sample"], &[base, test]);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once(": "))
        .filter(|(k, _)| !k.contains("base_profile"))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

fn pct(v: &serde_json::Value) -> String {
    format!("{:.3}%", v.as_f64().unwrap() * 100.0)
}

/// kfdo overlap --json in the same (label, value) form.
fn kfdo_overlap(base: &Path, test: &Path) -> Vec<(String, String)> {
    let out = run_ok(kfdo().arg("overlap").arg(base).arg(test).arg("--json"));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = |k: &str| j[k].as_u64().unwrap().to_string();
    let rows = [
        ("Whole program profile similarity", pct(&j["similarity"])),
        ("Whole program sample overlap", pct(&j["sample_overlap"])),
        (
            "percentage of samples unique in base profile",
            pct(&j["base_unique_samples"]),
        ),
        (
            "percentage of samples unique in test profile",
            pct(&j["test_unique_samples"]),
        ),
        ("total samples in base profile", n("base_samples")),
        ("total samples in test profile", n("test_samples")),
        ("Function overlap", pct(&j["function_overlap"])),
        ("overlap functions", n("overlap_functions")),
        (
            "functions unique in base profile",
            n("base_unique_functions"),
        ),
        (
            "functions unique in test profile",
            n("test_unique_functions"),
        ),
        ("Hot-function overlap", pct(&j["hot_function_overlap"])),
        ("overlap hot functions", n("overlap_hot_functions")),
        (
            "hot functions unique in base profile",
            n("base_unique_hot_functions"),
        ),
        (
            "hot functions unique in test profile",
            n("test_unique_hot_functions"),
        ),
        ("Hot-block overlap", pct(&j["hot_block_overlap"])),
        ("overlap hot blocks", n("overlap_hot_blocks")),
        (
            "hot blocks unique in base profile",
            n("base_unique_hot_blocks"),
        ),
        (
            "hot blocks unique in test profile",
            n("test_unique_hot_blocks"),
        ),
    ];
    rows.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

#[test]
fn merge_equals_llvm_profdata_on_real_profiles() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for p in pairs() {
        // Plain, weighted, and with the same file twice (every count doubles).
        let cases: [(&str, Vec<String>, Vec<String>); 3] = [
            (
                "plain",
                vec![p.a.display().to_string(), p.b.display().to_string()],
                vec![p.a.display().to_string(), p.b.display().to_string()],
            ),
            (
                "weighted",
                vec![
                    format!("--weight=3:{}", p.a.display()),
                    format!("--weight=7:{}", p.b.display()),
                ],
                vec![
                    format!("--weighted-input=3,{}", p.a.display()),
                    format!("--weighted-input=7,{}", p.b.display()),
                ],
            ),
            (
                "mixed",
                vec![
                    p.b.display().to_string(),
                    format!("--weight=2:{}", p.a.display()),
                    p.a.display().to_string(),
                ],
                vec![
                    p.b.display().to_string(),
                    p.a.display().to_string(),
                    format!("--weighted-input=2,{}", p.a.display()),
                ],
            ),
        ];
        for ((what, ours, theirs), llvm) in cases
            .iter()
            .flat_map(|c| releases().into_iter().map(move |l| (c, l)))
        {
            let ref_txt = dir
                .path()
                .join(format!("{}-{what}.llvm{}.txt", p.name, llvm.major));
            run_ok(
                Command::new(llvm.profdata())
                    .args(["merge", "--sample", "--text", "-o"])
                    .arg(&ref_txt)
                    .args(theirs),
            );
            let txt = dir.path().join(format!("{}-{what}.kfdo.txt", p.name));
            run_ok(
                kfdo()
                    .args(["merge", "-q", "--format", "text", "-o"])
                    .arg(&txt)
                    .args(ours),
            );
            let (a, b) = (
                std::fs::read(&txt).unwrap(),
                std::fs::read(&ref_txt).unwrap(),
            );
            assert!(
                a == b,
                "{} {what}: kfdo merge differs from {} merge:\n{}",
                p.name,
                llvm.profdata(),
                diff(&read_text(&txt), &read_text(&ref_txt))
            );
            // The extbinary kfdo writes holds the same profile (llvm-profdata reads it back).
            let ext = dir.path().join(format!("{}-{what}.kfdo.ext", p.name));
            run_ok(kfdo().args(["merge", "-q", "-o"]).arg(&ext).args(ours));
            let back = profdata(llvm, &["merge", "--sample", "--text"], &[&ext]).stdout;
            assert!(
                back == b,
                "{} {what}: kfdo's extbinary reads back differently",
                p.name
            );
        }
    }
}

#[test]
fn overlap_equals_llvm_profdata_on_real_profiles() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for p in pairs() {
        // Both directions, and a weighted merge against one of its inputs.
        let merged = dir.path().join(format!("{}-merged.prof", p.name));
        run_ok(
            kfdo()
                .args(["merge", "-q", "-o"])
                .arg(&merged)
                .arg(format!("--weight=5:{}", p.a.display()))
                .arg(&p.b),
        );
        for ((base, test), llvm) in [(&p.a, &p.b), (&p.b, &p.a), (&merged, &p.b)]
            .into_iter()
            .flat_map(|c| releases().into_iter().map(move |l| (c, l)))
        {
            let theirs = llvm_overlap(llvm, base, test);
            let ours = kfdo_overlap(base, test);
            assert_eq!(
                ours,
                theirs,
                "{}: overlap of {} and {} differs from {}'s",
                p.name,
                base.display(),
                test.display(),
                llvm.profdata()
            );
        }
    }
}

#[test]
fn corrupted_input_fails_the_merge_and_writes_nothing() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = &pairs()[0];
    // A text profile with a malformed line 3.
    let bad_text = dir.path().join("bad.txt");
    let mut t = std::fs::read_to_string(&p.a).unwrap();
    let third = t.match_indices('\n').nth(1).unwrap().0 + 1;
    t.insert_str(third, " 7: x\n");
    std::fs::write(&bad_text, t).unwrap();
    // An extbinary profile cut short.
    let bad_ext = dir.path().join("bad.ext");
    let e = std::fs::read(&p.b).unwrap();
    std::fs::write(&bad_ext, &e[..e.len() * 2 / 3]).unwrap();
    for (bad, place) in [(&bad_text, ":3:"), (&bad_ext, "byte offset")] {
        let out_file = dir.path().join("out.prof");
        let out = kfdo()
            .args(["merge", "-q", "-o"])
            .arg(&out_file)
            .arg(&p.a)
            .arg(bad)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "merging {} succeeded", bad.display());
        assert!(
            err.contains(&bad.display().to_string()) && err.contains(place),
            "the error must name {} and the place ({place}): {err}",
            bad.display()
        );
        assert!(
            !out_file.exists(),
            "a failed merge wrote {}",
            out_file.display()
        );
        // llvm-profdata rejects it too.
        let llvm = Command::new(Llvm::DEFAULT.profdata())
            .args(["merge", "--sample", "-o", "/dev/null"])
            .arg(bad)
            .output()
            .unwrap();
        assert!(
            !llvm.status.success(),
            "llvm-profdata accepted {}",
            bad.display()
        );
    }
}

#[test]
fn diff_of_unrelated_programs_is_an_error_unless_forced() {
    if !tools() {
        return;
    }
    let (lz, interp) = (&pairs()[0].a, &pairs()[1].a);
    let out = kfdo().arg("diff").arg(lz).arg(interp).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && out.stdout.is_empty(),
        "diff of unrelated profiles ran"
    );
    assert!(
        err.contains("different programs") || err.contains("no function in common"),
        "{err}"
    );
    let forced = run_ok(
        kfdo()
            .arg("diff")
            .arg("--force")
            .arg("--json")
            .arg(lz)
            .arg(interp),
    );
    let j: serde_json::Value = serde_json::from_slice(&forced.stdout).unwrap();
    assert!(j["similarity"].as_f64().unwrap() < 0.10);
    // Two inputs of one program are related.
    let p = &pairs()[2];
    run_ok(kfdo().arg("diff").arg(&p.a).arg(&p.b));
}

/// GCC's gcov AutoFDO profiles go through the same reader: overlap of two gcov
/// files equals llvm-profdata's overlap of the same profiles as LLVM text.
#[test]
fn overlap_of_gcov_profiles_equals_llvm_profdata_on_their_text() {
    use kfdo_afdo::{Format, GcovVersion};
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = &pairs()[0];
    let mut gcov = Vec::new();
    let mut text = Vec::new();
    for (i, src) in [&p.a, &p.b].into_iter().enumerate() {
        let g = dir.path().join(format!("{i}.gcov"));
        kfdo_afdo::write_profile_file(&read_text(src), Format::Gcov(GcovVersion::Gcc12), &g)
            .unwrap();
        let t = dir.path().join(format!("{i}.txt"));
        std::fs::write(&t, run_ok(kfdo().arg("show").arg(&g)).stdout).unwrap();
        gcov.push(g);
        text.push(t);
    }
    assert_eq!(
        kfdo_overlap(&gcov[0], &gcov[1]),
        llvm_overlap(Llvm::DEFAULT, &text[0], &text[1])
    );
}
