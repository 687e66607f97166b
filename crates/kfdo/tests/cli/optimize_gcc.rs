//! `kfdo optimize` on a GCC recipe (`[build] compiler = "gcc"`): real gcc builds of
//! testdata/programs/lz.c, compiled into a subdirectory and linked apart (so the `.gcda`
//! files of instrumented PGO must land beside objects that are not in the build's top
//! directory), an emulated-LBR training run turned into GCC's gcov AutoFDO profile, the
//! three builds judged and summarized; the LLVM-only variants refused by name.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

const BUILD: &str = r#"mkdir -p obj && $CC $CFLAGS -c -o obj/lz.o "$SRC/lz.c" && $CC $CFLAGS -o lz obj/lz.o $LDFLAGS"#;

fn write_recipe(dir: &Path) -> PathBuf {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(common::program_source("lz.c"), src.join("lz.c")).unwrap();
    let recipe = dir.join("recipe.toml");
    std::fs::write(
        &recipe,
        format!(
            r#"name = "lz-gcc"
[source]
path = "src"
[build]
compiler = "gcc"
command = '{BUILD}'
binary = "lz"
[train]
command = "{{bin}} 400000"
[[bench]]
name = "lz"
command = "{{bin}} 200000"
runs = 2
"#
        ),
    )
    .unwrap();
    recipe
}

fn optimize(recipe: &Path, out: &Path, extra: &[&str]) -> Output {
    common::kfdo()
        .args(["optimize", "--method", "emulated", "--counters", "none"])
        .args(["-j", "2", "--no-heatmaps", "-o"])
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

#[test]
fn gcc_recipe_builds_autofdo_from_a_gcov_profile_and_ifdo_from_gcda_files() {
    if !kfdo_testkit::require_tools(&["gcc", "qemu-x86_64"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let recipe = write_recipe(dir.path());
    let run = optimize(&recipe, &out, &[]);
    let all = text(&run);
    assert!(run.status.success(), "{all}");
    for step in [
        "build baseline",
        "build ifdo-instrumented",
        "record training run",
        "train ifdo",
        "profile kfdo",
        "build autofdo",
        "build ifdo",
        "benchmark",
        "report",
    ] {
        assert!(
            all.contains(&format!("] {step}: done in")),
            "{step}:\n{all}"
        );
    }
    let log =
        |step: &str| std::fs::read_to_string(out.join("logs").join(format!("{step}.log"))).unwrap();

    // AutoFDO: gcc read kfdo's gcov profile, and said nothing about it.
    let gcov = out.join("profiles/kfdo.gcov");
    let l = log("build-autofdo");
    assert!(
        l.contains(&format!("-fauto-profile={}", gcov.display())),
        "{l}"
    );
    assert!(
        !l.contains("-fprofile-sample-use") && !l.contains("lld"),
        "{l}"
    );
    assert!(!l.to_lowercase().contains("warning"), "{l}");
    assert!(!l.contains("error"), "{l}");
    // The profile is a gcov file that kfdo reads back, with lz's hot code in it.
    let shown = common::run_ok(common::kfdo().arg("show").arg(&gcov)).stdout;
    let shown = String::from_utf8_lossy(&shown);
    assert!(shown.lines().any(|l| l.starts_with("main:")), "{shown}");

    // ifdo: the counts of obj/lz.o, found beside the object of the ifdo build.
    let gcda = out.join("profiles/ifdo-gcda/obj/lz.gcda");
    assert!(gcda.is_file(), "{}", gcda.display());
    let l = log("build-ifdo");
    assert!(l.contains("-fprofile-use"), "{l}");
    assert!(!l.contains("profile count data file not found"), "{l}");
    assert!(!l.to_lowercase().contains("warning"), "{l}");

    // The profiles changed the code, and every build prints what the baseline prints.
    let build = |v: &str| out.join("build").join(v).join("lz");
    let text_of = |v: &str| {
        let b = kfdo_elf::Binary::open(&build(v)).unwrap();
        let s = b.section_by_name(".text").unwrap().clone();
        let off = s.offset as usize;
        b.data()[off..off + s.size as usize].to_vec()
    };
    let base_text = text_of("baseline");
    for v in ["autofdo", "ifdo"] {
        assert_ne!(
            text_of(v),
            base_text,
            "{v} built the same code as the baseline"
        );
    }
    let output =
        |v: &str| common::run_ok(std::process::Command::new(build(v)).arg("100000")).stdout;
    let want = output("baseline");
    assert!(!want.is_empty());
    for v in ["autofdo", "ifdo"] {
        assert_eq!(output(v), want, "{v}");
    }

    // The verdict weighs gcc's AutoFDO against gcc's instrumented PGO.
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains("autofdo") && summary.contains("ifdo"),
        "{summary}"
    );
    // (two runs each on a busy machine: the share itself, or why there is none).
    assert!(
        summary.contains("of instrumented PGO's") || summary.contains("no share of"),
        "{summary}"
    );

    // A rerun is all cached.
    let again = optimize(&recipe, &out, &[]);
    let all = text(&again);
    assert!(again.status.success(), "{all}");
    assert!(!all.contains(": done in"), "{all}");
}

#[test]
fn gcc_recipes_refuse_the_llvm_variants_before_building() {
    if !kfdo_testkit::require_tools(&["gcc"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let recipe = write_recipe(dir.path());
    for v in [
        "autofdo+thinlto",
        "autofdo-llvm-profgen",
        "propeller",
        "bolt",
    ] {
        let o = optimize(&recipe, &out, &["--variants", v]);
        let all = text(&o);
        assert!(!o.status.success(), "{v}: {all}");
        assert!(
            all.contains(&format!("--variants {v}")) && all.contains("needs clang"),
            "{all}"
        );
        assert!(!out.join("build").exists(), "{v}: something was built");
    }
    // A compiler that is not one.
    let bad = std::fs::read_to_string(&recipe)
        .unwrap()
        .replace("compiler = \"gcc\"", "compiler = \"icc\"");
    std::fs::write(&recipe, bad).unwrap();
    let o = optimize(&recipe, &out, &[]);
    let all = text(&o);
    assert!(!o.status.success());
    assert!(
        all.contains("recipe.toml") && all.contains("compiler = \"icc\""),
        "{all}"
    );
}
