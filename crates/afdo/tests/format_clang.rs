//! clang-19 accepts kfdo's text and extbinary profiles and uses them: the
//! functions named in the profile get `!prof` entry counts and branch
//! weights, the module's ProfileSummary is the one kfdo computed, and
//! nothing is reported about the profile. Skipped without clang-19.

#[path = "format_gen.rs"]
mod gen;

use std::process::Command;

use gen::*;
use kfdo_afdo::{Format, LineLocation, Profile, ProfileSummary};

const CLANG: &str = "clang-19";

const SOURCE: &str = r#"static int __attribute__((noinline)) helper(int x) {
  return x * 7 + 1;
}
int work(int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    s += helper(i);
  return s;
}
int main(int argc, char **argv) { return work(argc); }
"#;

/// Compile `src` with the profile (or none) to IR; returns (IR, stderr).
fn compile(dir: &std::path::Path, prof: Option<&std::path::Path>) -> (String, String) {
    let c = write_file(dir, "w.c", SOURCE.as_bytes());
    let mut cmd = Command::new(CLANG);
    cmd.args([
        "-O2",
        "-gline-tables-only",
        "-funique-internal-linkage-names",
    ]);
    cmd.args(["-S", "-emit-llvm", "-o", "-"]);
    if let Some(p) = prof {
        cmd.arg(format!("-fprofile-sample-use={}", p.display()));
        // Ask for remarks about the profile loader too: any warning or
        // error is a failure below.
        cmd.arg("-Rpass=sample-profile");
    }
    cmd.arg(&c);
    let out = cmd.output().expect("running clang-19");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "clang failed: {stderr}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

fn profile(helper: &str) -> Profile {
    let mut p = Profile::new();
    // Lines are offsets from each function's first line.
    let w = p.function_mut("work");
    w.add_head(100);
    w.add_body(LineLocation::new(0, 0), 100);
    w.add_body(LineLocation::new(1, 0), 100);
    w.add_body(LineLocation::new(2, 0), 5000);
    w.add_body(LineLocation::new(3, 0), 5000);
    w.add_call_target(LineLocation::new(3, 0), helper, 5000);
    w.add_body(LineLocation::new(4, 0), 100);
    w.add_total(10300);
    let h = p.function_mut(helper);
    h.add_head(5000);
    h.add_body(LineLocation::new(1, 0), 5000);
    h.add_total(5000);
    let m = p.function_mut("main");
    m.add_head(5);
    m.add_body(LineLocation::new(0, 0), 5);
    m.add_total(5);
    p
}

fn define_line<'a>(ir: &'a str, f: &str) -> &'a str {
    ir.lines()
        .find(|l| l.starts_with("define ") && l.contains(&format!("@{f}(")))
        .unwrap_or_else(|| panic!("no definition of {f} in IR"))
}

/// The `!N = !{!"function_entry_count", i64 C}` count of function `f`.
fn entry_count(ir: &str, f: &str) -> Option<u64> {
    let d = define_line(ir, f);
    let md = d.split(" !prof ").nth(1)?.split_whitespace().next()?;
    let line = ir.lines().find(|l| l.starts_with(&format!("{md} = ")))?;
    line.split("i64 ")
        .nth(1)?
        .trim_end_matches('}')
        .trim()
        .parse()
        .ok()
}

fn summary_field(ir: &str, key: &str) -> Option<u64> {
    let line = ir
        .lines()
        .find(|l| l.contains(&format!("!{{!\"{key}\", i64 ")))?;
    line.split("i64 ")
        .nth(1)?
        .trim_end_matches('}')
        .trim()
        .parse()
        .ok()
}

#[test]
fn clang_uses_kfdo_profiles() {
    if !kfdo_testkit::require_tools(&[CLANG]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The unique-internal-linkage name clang gives `helper`.
    let (plain, _) = compile(dir.path(), None);
    let helper = plain
        .lines()
        .filter(|l| l.starts_with("define "))
        .find_map(|l| {
            // C statics get an Itanium-style name: `_ZL6helperi.__uniq.<hash>`.
            let u = l.find(".__uniq.")?;
            let at = l[..u].rfind('@')?;
            Some(l[at + 1..].split('(').next()?.to_owned())
        })
        .expect("helper's unique name");
    let p = profile(&helper);
    let sum = ProfileSummary::compute(&p);
    for (fmt, file) in [(Format::Text, "p.txt"), (Format::ExtBinary, "p.extbinary")] {
        let mut buf = Vec::new();
        kfdo_afdo::write_profile(&p, fmt, &mut buf).unwrap();
        let path = write_file(dir.path(), file, &buf);
        let (ir, stderr) = compile(dir.path(), Some(&path));
        let bad: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("warning") || l.contains("error"))
            .collect();
        assert!(bad.is_empty(), "{fmt:?}: clang reported:\n{stderr}");
        // Entry counts start at head samples + 1 in clang's sample loader
        // (then inlining moves some of them), so any count > 1 shows the
        // profile was matched to the function.
        for f in ["work", "main", helper.as_str()] {
            let c = entry_count(&ir, f);
            assert!(
                c.is_some_and(|c| c > 1),
                "{fmt:?}: {f} has entry count {c:?}: the profile was not matched"
            );
        }
        assert!(ir.contains("branch_weights"), "{fmt:?}: no branch weights");
        assert!(ir.contains("!\"ProfileFormat\", !\"SampleProfile\""));
        // The summary clang uses for hot/cold decisions is kfdo's.
        assert_eq!(
            summary_field(&ir, "TotalCount"),
            Some(sum.total_count),
            "{fmt:?}"
        );
        assert_eq!(
            summary_field(&ir, "MaxCount"),
            Some(sum.max_count),
            "{fmt:?}"
        );
        assert_eq!(
            summary_field(&ir, "MaxFunctionCount"),
            Some(sum.max_function_count)
        );
        assert_eq!(
            summary_field(&ir, "NumCounts"),
            Some(sum.num_counts),
            "{fmt:?}"
        );
        assert_eq!(
            summary_field(&ir, "NumFunctions"),
            Some(sum.num_functions),
            "{fmt:?}"
        );
    }
}
