//! What kfdo writes never lands on a file the commands it runs name (the benchmarked
//! program, a file its arguments read) nor in a directory that is not its own, and what
//! can be checked before the first run is checked then: each refusal exits 1, says the
//! fix, and leaves every file as it was.

use crate::common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A program of a shell script's size: what it is does not matter, only that kfdo
/// must not write over it.
fn script(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, "#!/bin/sh\n: \"$@\"\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn refused(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn compare_never_writes_its_verdict_over_a_compared_program_or_its_input() {
    let d = tempfile::tempdir().unwrap();
    let prog = script(d.path(), "prog");
    script(d.path(), "prog.opt");
    let notes = d.path().join("notes.c");
    std::fs::write(&notes, "int main(void) { return 0; }\n").unwrap();
    let before = std::fs::read(&prog).unwrap();
    let cases: [(&[&str], &str, &str); 3] = [
        (
            &["--json-out", "prog", "./prog 1000", "./prog.opt 1000"],
            "the program that the command `./prog 1000` runs",
            "choose another --json-out",
        ),
        (
            &["--json-out", "notes.c", "wc -l notes.c", "cat notes.c"],
            "a file that the command `wc -l notes.c` names",
            "choose another --json-out",
        ),
        (
            &["--store", "notes.c", "wc -l < notes.c", "cat notes.c"],
            "a file that the command `wc -l < notes.c` names",
            "choose another --store",
        ),
    ];
    for (args, says, fix) in cases {
        let o = kfdo()
            .current_dir(d.path())
            .args(["compare", "--runs", "2", "--counters", "none"])
            .args(args)
            .output()
            .unwrap();
        let err = refused(&o);
        assert!(err.contains(says) && err.contains(fix), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read(&prog).unwrap(), before, "prog was changed");
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "int main(void) { return 0; }\n"
    );
    // The same verdict beside them is written, and the report is the next step.
    let o = kfdo()
        .current_dir(d.path())
        .args(["compare", "--runs", "2", "--counters", "none"])
        .args(["--json-out", "verdict.json", "./prog 1", "./prog.opt 1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(d.path().join("verdict.json").is_file());
    assert!(
        err.contains("kfdo compare: next: kfdo report --store kfdo-bench.db"),
        "{err}"
    );
}

#[test]
fn record_never_writes_over_a_file_the_recorded_command_names() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("input.txt");
    std::fs::write(&input, "keep me\n").unwrap();
    let o = kfdo()
        .current_dir(d.path())
        .args([
            "record",
            "-o",
            "input.txt",
            "--",
            "/bin/cat",
            "--file=input.txt",
        ])
        .output()
        .unwrap();
    let err = refused(&o);
    assert!(err.contains("choose another -o"), "{err}");
    assert_eq!(std::fs::read_to_string(&input).unwrap(), "keep me\n");
}

#[test]
fn optimize_refuses_a_directory_of_the_users_and_reuses_its_own() {
    let d = tempfile::tempdir().unwrap();
    let recipe = crate::optimize_cli::write_recipe(
        d.path(),
        "1000",
        r#"$CC $CFLAGS -o lz "$SRC/lz.c" $LDFLAGS"#,
    );
    let mine = d.path().join("mine");
    for (file, text) in [
        ("summary.md", "my summary"),
        ("bench/keep.txt", "my bench notes"),
        ("report/keep.txt", "my report notes"),
    ] {
        let p = mine.join(file);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let o = kfdo()
        .args(["optimize", "--variants", "autofdo", "-o"])
        .arg(&mine)
        .arg(&recipe)
        .output()
        .unwrap();
    let err = refused(&o);
    assert!(
        err.contains(&mine.display().to_string())
            && err.contains(
                "3 entries that kfdo optimize did not write (bench/, report/, summary.md)"
            )
            && err.contains("give -o another directory"),
        "{err}"
    );
    assert!(!mine.join("logs").exists(), "steps started: {err}");
    for (file, text) in [
        ("summary.md", "my summary"),
        ("bench/keep.txt", "my bench notes"),
        ("report/keep.txt", "my report notes"),
    ] {
        assert_eq!(std::fs::read_to_string(mine.join(file)).unwrap(), text);
    }
    // A directory holding the recipe is refused too, even empty of anything else.
    let o = kfdo()
        .args(["optimize", "-o"])
        .arg(d.path())
        .arg(&recipe)
        .output()
        .unwrap();
    assert!(refused(&o).contains("holds the recipe"));
}

#[test]
fn optimize_refuses_an_option_its_recipe_never_reads() {
    let root = repo_root();
    let cases: [(&str, &[&str], &str); 4] = [
        (
            "recipes/linux",
            &["--runs", "20"],
            "--runs does not apply: recipe",
        ),
        (
            "recipes/linux",
            &["--cc", "clang-19", "--counters", "none"],
            "--counters, --cc do not apply",
        ),
        (
            "recipes/sqlite3",
            &["--boots", "3"],
            "--boots does not apply: recipe",
        ),
        (
            "recipes/sqlite3",
            &["--no-packages", "--no-uml"],
            "--no-packages, --no-uml do not apply",
        ),
    ];
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    for (recipe, args, want) in cases {
        let o = kfdo()
            .arg("optimize")
            .arg(root.join(recipe))
            .args(args)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        let err = refused(&o);
        assert!(
            err.contains(want) && err.contains("leave"),
            "{args:?}: {err}"
        );
        assert!(!out.exists(), "{args:?} made the output directory");
    }
}

#[test]
fn compare_checks_its_options_before_the_first_run() {
    let d = tempfile::tempdir().unwrap();
    // Each run of this command leaves a mark: none may appear.
    let marker = d.path().join("ran");
    let cmd = format!("touch {} && true | cat", marker.display());
    let cases: [(&[&str], &str); 3] = [
        (
            &["--counters", "emulated", "--runs", "2"],
            "--counters emulated runs the program under QEMU",
        ),
        (
            &["--ci-target", "1", "--min-runs", "10", "--max-runs", "3"],
            "--min-runs 10 is more than --max-runs 3",
        ),
        (
            &["--runs", "4", "--max-runs", "3"],
            "--max-runs bound(s) the adaptive run count",
        ),
    ];
    for (args, want) in cases {
        let o = kfdo()
            .current_dir(d.path())
            .arg("compare")
            .args(args)
            .args([cmd.as_str(), "true"])
            .output()
            .unwrap();
        let err = refused(&o);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!marker.exists(), "{args:?}: the command ran first");
    }
}

#[test]
fn profile_and_merge_raw_name_the_mistake() {
    let d = tempfile::tempdir().unwrap();
    let o = kfdo()
        .args([
            "profile",
            "--threads",
            "0",
            "--binary",
            "x",
            "--perf-data",
            "y",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "clap's usage error: {err}");
    assert!(err.contains("--threads") && err.contains("0"), "{err}");

    let f = lz();
    let out = d.path().join("p.afdo");
    let o = kfdo()
        .args(["profile", "--binary"])
        .arg(d.path())
        .arg("--perf-data")
        .arg(&f.data)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = refused(&o);
    assert!(
        err.contains("is a directory, not an ELF file") && !err.contains("No such device"),
        "{err}"
    );
    assert!(!out.exists());

    let o = kfdo()
        .arg("merge-raw")
        .arg(&f.data)
        .arg("-o")
        .arg(d.path().join("m.parquet"))
        .output()
        .unwrap();
    let err = refused(&o);
    assert!(
        err.contains("is a perf.data recording, not a raw profile")
            && err.contains("--raw-out")
            && !err.contains("truncated"),
        "{err}"
    );
}

#[test]
fn record_says_when_the_recorded_command_failed() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("exit3.data");
    let o = kfdo()
        .args(["record", "--method", "emulated", "-o"])
        .arg(&data)
        .args(["--", "sh", "-c", "exit 3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "the command's status: {err}");
    assert!(
        err.contains("the recorded command exited with status 3"),
        "{err}"
    );
}
