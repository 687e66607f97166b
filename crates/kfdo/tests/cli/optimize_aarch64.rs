//! `kfdo optimize` on a cross recipe (`[build] target = "aarch64-linux-gnu"`): the
//! bundled recipes/sqlite3-aarch64 at CI size (smaller training and benchmark runs,
//! three timed runs): clang-19 --target=aarch64-linux-gnu builds, the training run
//! recorded under qemu-aarch64, every variant timed under qemu-aarch64 (labelled
//! emulated time) and counted by the emulated counters. The AutoFDO build must take
//! fewer taken branches and L1i misses than the baseline by a clear margin (the counts
//! are exact and deterministic, so a margin, not a p-value, is the test), its code must
//! follow the profile, and the summary and report must have the x86-64 recipe's
//! tables. What a cross build cannot do is refused by name, before anything is built.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use kfdo_elf::Arch;

fn tools() -> bool {
    kfdo_testkit::require_tools(&[
        "clang-19",
        "ld.lld-19",
        "llvm-profgen-19",
        "perf",
        "qemu-aarch64",
        "aarch64-linux-gnu-gcc",
    ])
}

/// The bundled recipe with CI-sized runs (same source, build command and target).
fn ci_recipe(dir: &Path) -> PathBuf {
    let bundled = common::repo_root().join("recipes/sqlite3-aarch64/recipe.toml");
    let text = std::fs::read_to_string(&bundled).unwrap();
    let small = text
        .replace("{bin} --size 10 --memdb", "{bin} --size 4 --memdb")
        .replace("{bin} --size 20 --memdb", "{bin} --size 4 --memdb")
        .replace("runs = 10", "runs = 3");
    assert_ne!(
        small, text,
        "the bundled recipe's sizes changed: update this test"
    );
    assert!(small.contains("target = \"aarch64-linux-gnu\""), "{small}");
    let recipe = dir.join("recipe.toml");
    std::fs::write(&recipe, small).unwrap();
    recipe
}

fn optimize(recipe: &Path, out: &Path, extra: &[&str]) -> Output {
    common::kfdo()
        .args(["optimize", "-j", "2", "-o"])
        .arg(out)
        .args(extra)
        .arg(recipe)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The counter row `name` of the summary: the baseline's count and each variant's.
fn counter_row(summary: &str, name: &str) -> Vec<f64> {
    let line = summary
        .lines()
        .find(|l| l.starts_with(&format!("| {name} |")))
        .unwrap_or_else(|| panic!("no counter row {name:?} in:\n{summary}"));
    line.split('|')
        .skip(2)
        .filter(|c| !c.trim().is_empty())
        .map(|c| {
            let n: String = c
                .split('(')
                .next()
                .unwrap()
                .chars()
                .filter(|ch| ch.is_ascii_digit())
                .collect();
            n.parse::<f64>()
                .unwrap_or_else(|_| panic!("cell {c:?} of {line:?}"))
        })
        .collect()
}

/// The header rows of the summary's tables and its counter names: what "the same
/// tables" means, with the emulated time column named as the x86-64 one is.
fn table_shape(summary: &str) -> Vec<String> {
    summary
        .lines()
        .filter(|l| l.starts_with("| "))
        .map(|l| {
            let first = l.split('|').nth(1).unwrap().trim().to_string();
            if first == "variant" || first == "counter" {
                l.replace("mean emulated time", "mean time")
            } else {
                first
            }
        })
        .filter(|l| {
            ![
                "baseline",
                "autofdo",
                "autofdo-llvm-profgen",
                "autofdo+thinlto",
            ]
            .contains(&l.as_str())
        })
        .collect()
}

#[test]
fn aarch64_recipe_builds_records_and_judges_under_qemu() {
    let Some(_one_at_a_time) =
        common::heavy_test("the sqlite3-aarch64 recipe built and judged under qemu")
    else {
        return;
    };
    if !tools() {
        return;
    }
    if common::fetch_sqlite_source().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let recipe = ci_recipe(dir.path());
    let run = optimize(&recipe, &out, &["--variants", "autofdo"]);
    let all = text(&run);
    assert!(run.status.success(), "{all}");
    assert!(
        all.contains("training recorded with --method emulated; counters: emulated"),
        "{all}"
    );

    // Every build is an aarch64 program, compiled and linked for the target.
    for v in ["baseline", "autofdo"] {
        let bin = out.join("build").join(v).join("speedtest1");
        let arch = kfdo_elf::Binary::open(&bin).unwrap().arch();
        assert_eq!(arch, Arch::Aarch64, "{}", bin.display());
        let log = std::fs::read_to_string(out.join(format!("logs/build-{v}.log"))).unwrap();
        assert!(log.contains("--target=aarch64-linux-gnu"), "{log}");
    }
    // The training run was recorded as aarch64 (perf.data's ARCH header).
    let header = common::run_ok(
        std::process::Command::new("perf")
            .args(["report", "--header-only", "-i"])
            .arg(out.join("record/baseline/perf.data")),
    );
    let header = String::from_utf8_lossy(&header.stdout);
    assert!(header.contains("arch : aarch64"), "{header}");

    // The profile was used: clang read it, and the hottest function's code changed.
    let afdo = out.join("profiles/kfdo.afdo");
    let log = std::fs::read_to_string(out.join("logs/build-autofdo.log")).unwrap();
    assert!(
        log.contains(&format!("-fprofile-sample-use={}", afdo.display())),
        "{log}"
    );
    let shown = common::run_ok(common::kfdo().arg("show").arg(&afdo)).stdout;
    let shown = String::from_utf8_lossy(&shown);
    // Its name as the profile and the symbol table spell it (mangled: it is static, and
    // -funique-internal-linkage-names adds the module's hash).
    let vdbe_exec = shown
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split(':').next())
        .find(|n| n.contains("sqlite3VdbeExec"))
        .unwrap_or_else(|| panic!("sqlite3VdbeExec is not in the profile:\n{shown}"))
        .to_string();
    let code_of = |v: &str, f: &str| {
        let b = kfdo_elf::Binary::open(&out.join("build").join(v).join("speedtest1")).unwrap();
        let s = b
            .symbols()
            .symtab()
            .iter()
            .find(|s| s.name(b.data()) == f.as_bytes())
            .unwrap_or_else(|| panic!("{v} has no {f}"));
        let off = b.vaddr_to_file_offset(s.addr).unwrap() as usize;
        b.data()[off..off + s.size as usize].to_vec()
    };
    assert_ne!(
        code_of("baseline", &vdbe_exec),
        code_of("autofdo", &vdbe_exec),
        "autofdo's sqlite3VdbeExec is the baseline's: the profile changed nothing"
    );

    // Fewer taken branches and L1i misses, by a clear margin (exact counts).
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    for (row, at_least) in [
        ("taken branches", 0.20),
        ("L1i misses (model 32K 8-way)", 0.20),
    ] {
        let v = counter_row(&summary, row);
        assert_eq!(v.len(), 2, "{row}: {v:?}");
        let cut = 1.0 - v[1] / v[0];
        assert!(
            cut >= at_least,
            "autofdo cut {row} by {:.1} % (want at least {:.0} %):\n{summary}",
            cut * 100.0,
            at_least * 100.0
        );
    }

    // The x86-64 recipe's tables, with the times labelled as emulated time.
    let x86_shape = [
        "| variant | mean time | time change [95 % CI] | p (Welch) | verdict |",
        "| counter | baseline | autofdo |",
        "instructions",
        "taken branches",
        "conditional branches",
        "L1i misses (model 32K 8-way)",
        "iTLB misses (model 64-entry)",
    ];
    assert_eq!(table_shape(&summary), x86_shape, "{summary}");
    assert!(
        summary.contains("## speedtest1 (emulated time, qemu-aarch64)")
            && summary.contains("| mean emulated time |")
            && summary.contains("Times are emulated time (qemu-aarch64 TCG on this host)"),
        "{summary}"
    );
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    for want in [
        "speedtest1 (emulated time, qemu-aarch64)",
        "<h2>Heat maps</h2>",
        "taken branches",
        "L1i misses",
    ] {
        assert!(html.contains(want), "report lacks {want:?}");
    }
    for v in ["baseline", "autofdo"] {
        assert!(
            out.join(format!("report/heat-{v}.png")).is_file(),
            "no heat map of {v}"
        );
    }

    // A rerun is all cached.
    let again = optimize(&recipe, &out, &["--variants", "autofdo"]);
    let all = text(&again);
    assert!(again.status.success(), "{all}");
    assert!(!all.contains(": done in"), "{all}");
}

#[test]
fn cross_recipes_refuse_what_cannot_run_cross_before_building() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let recipe = ci_recipe(dir.path());
    for (args, want) in [
        (&["--variants", "bolt"][..], "--variants bolt"),
        (
            &["--variants", "autofdo,autofdo+thinlto+bolt"],
            "--variants autofdo+thinlto+bolt",
        ),
        (&["--variants", "ifdo"], "libclang_rt.profile-aarch64.a"),
        (&["--variants", "propeller"], "--variants propeller"),
        (&["--counters", "perf"], "--counters perf"),
        (&["--counters", "cachegrind"], "--counters cachegrind"),
        (&["--method", "lbr"], "--method lbr"),
    ] {
        let o = optimize(&recipe, &out, args);
        let all = text(&o);
        assert!(!o.status.success(), "{args:?}: {all}");
        assert!(
            all.contains(want) && all.contains("aarch64"),
            "{args:?}: {all}"
        );
        assert!(!out.exists(), "{args:?}: the output directory was made");
    }
}

#[test]
fn a_cross_build_that_drops_cflags_is_caught_by_its_elf_header() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("hello.c"), "int main(void) { return 0; }\n").unwrap();
    let recipe = dir.path().join("recipe.toml");
    std::fs::write(
        &recipe,
        r#"name = "hello"
[source]
path = "src"
[build]
target = "aarch64-linux-gnu"
command = '$CC -o hello "$SRC/hello.c"'
binary = "hello"
[train]
command = "{bin}"
[[bench]]
name = "hello"
command = "{bin}"
runs = 2
"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = optimize(&recipe, &out, &["--variants", "autofdo"]);
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(
        all.contains("is an x86-64 program")
            && all.contains(&recipe.display().to_string())
            && all.contains("must pass $CFLAGS"),
        "{all}"
    );
}
