//! `kfdo optimize`'s layout variants on a small real program: Propeller and BOLT, on the
//! baseline and on autofdo+thinlto, relinked in the profiles' order, rewritten by
//! llvm-bolt-19, and judged with the others.

use crate::common;
use crate::optimize_cli::{ran, step_indices, steps, write_recipe};

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The relinked Propeller build follows its profiles: the ld profile's symbols sit in
/// its order by address, and every function the cc profile leaves blocks of (counted in
/// the profiled build's BB address map) has its `NAME.cold` part. Returns how many
/// functions were split.
fn assert_propeller_layout(out: &Path, variant: &str, profiled: &Path) -> usize {
    use kfdo_elf::{BbAddrMap, Binary};
    let prefix = out.join("profiles").join(variant);
    let read = |suffix: &str| {
        let p = PathBuf::from(format!("{}{suffix}", prefix.display()));
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let (cc, ld) = (read("_cc_profile.txt"), read("_ld_profile.txt"));
    let bin = Binary::open(&out.join("build").join(variant).join("lz")).unwrap();
    let order: Vec<(u64, &str)> = ld
        .lines()
        .map(|s| {
            let a = bin
                .symbol_address(s)
                .unwrap_or_else(|| panic!("{variant}: ld profile symbol {s} is not in the build"));
            (a, s)
        })
        .collect();
    assert!(order.len() >= 2, "{variant}: ld profile:\n{ld}");
    for w in order.windows(2) {
        assert!(
            w[0].0 < w[1].0,
            "{variant}: the ld profile orders {} before {}, lld placed them at {:#x} and {:#x}",
            w[0].1,
            w[1].1,
            w[0].0,
            w[1].0
        );
    }
    // Blocks per function of the build the profiles were made from.
    let base = Binary::open(profiled).unwrap();
    let names = BbAddrMap::function_names(&base);
    let blocks: HashMap<String, usize> = BbAddrMap::read(&base)
        .unwrap()
        .functions
        .iter()
        .filter_map(|f| {
            names
                .get(&f.address())
                .map(|n| (n.clone(), f.blocks().count()))
        })
        .collect();
    let mut listed: Vec<(String, usize)> = Vec::new();
    for line in cc.lines().skip(1) {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("f") => listed.push((words.next().unwrap().to_string(), 0)),
            // "c" then the cluster's block IDs (the first may be glued to the c).
            Some(w) if w.starts_with('c') => {
                let glued = usize::from(w.len() > 1);
                listed.last_mut().unwrap().1 += glued + words.count();
            }
            other => panic!("{variant}: unexpected cc profile line {line:?} ({other:?})"),
        }
    }
    assert!(!listed.is_empty(), "{variant}: cc profile:\n{cc}");
    let mut split = 0;
    for (func, n) in &listed {
        let total = blocks[func.as_str()];
        if *n < total {
            assert!(
                bin.symbol_address(&format!("{func}.cold")).is_some(),
                "{variant}: {func} keeps {n} of {total} blocks hot but has no {func}.cold"
            );
            split += 1;
        }
    }
    split
}

/// lz with a second module: main.c includes lz.c (its main renamed) and calls `churn`
/// of mix.c, whose hot local `mix` ThinLTO promotes to `NAME.llvm.HASH` when it imports
/// `churn`: a name the relink of autofdo+thinlto+propeller must reproduce.
fn write_layout_recipe(dir: &Path) -> PathBuf {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(common::program_source("lz.c"), src.join("lz.c")).unwrap();
    std::fs::write(
        src.join("mix.c"),
        r#"#include <stdint.h>
static __attribute__((noinline)) uint32_t mix(uint32_t x, uint32_t k) {
  for (int i = 0; i < 8; i++) {
    if (x & 1)
      x = x * 2654435761u + k;
    else
      x = (x >> 3) ^ k;
    if ((x & 0xfff) == 0x7ff)
      k += 3;
  }
  if (x == 0)
    x = k ? k : 1;
  return x;
}
uint32_t churn(uint32_t seed, uint32_t n) {
  uint32_t s = seed;
  for (uint32_t i = 0; i < n; i++)
    s = mix(s, i);
  return s;
}
"#,
    )
    .unwrap();
    std::fs::write(
        src.join("main.c"),
        r#"#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#define main lz_main
#include "lz.c"
#undef main
uint32_t churn(uint32_t seed, uint32_t n);
int main(int argc, char **argv) {
  int r = lz_main(argc, argv);
  printf("churn %u\n", churn(1, argc > 1 ? (uint32_t)atoi(argv[1]) : 1000));
  return r;
}
"#,
    )
    .unwrap();
    write_recipe(
        dir,
        "100000",
        r#"$CC $CFLAGS -o lz "$SRC/main.c" "$SRC/mix.c" $LDFLAGS"#,
    )
}

/// The four layout variants on lz, with the fewest timed runs the CLI allows: each is
/// made from its base's own recording, laid out as its profiles say (Propeller) or
/// rewritten by BOLT, prints what the baseline prints, and is judged and summarized with
/// the others; the step count is exact; a rerun is all cached.
#[test]
fn propeller_and_bolt_variants_are_built_from_their_base_and_judged() {
    if !kfdo_testkit::require_tools(&[
        "clang-19",
        "ld.lld-19",
        "llvm-bolt-19",
        "llvm-profgen-19",
        "qemu-x86_64",
    ]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let recipe = write_layout_recipe(dir.path());
    let run = || {
        common::kfdo()
            .args([
                "optimize",
                "--method",
                "emulated",
                "--counters",
                "none",
                "--runs",
                "2",
                "-j",
                "2",
                "--variants",
                "propeller,bolt,autofdo+thinlto+propeller,autofdo+thinlto+bolt",
                "-o",
            ])
            .arg(&out)
            .arg(&recipe)
            .output()
            .unwrap()
    };
    let first = run();
    common::ok(&first, "kfdo optimize");
    let s = steps(&first);
    let err = String::from_utf8_lossy(&first.stderr);
    for step in [
        "build baseline",
        "record training run",
        "profile kfdo",
        "profile propeller",
        "profile bolt",
        "build propeller",
        "build bolt",
        "build autofdo+thinlto",
        "record autofdo+thinlto (training run)",
        "profile autofdo+thinlto+propeller",
        "profile autofdo+thinlto+bolt",
        "build autofdo+thinlto+propeller",
        "build autofdo+thinlto+bolt",
        "benchmark",
        "record propeller (for its heat map)",
        "record bolt (for its heat map)",
        "record autofdo+thinlto+propeller (for its heat map)",
        "record autofdo+thinlto+bolt (for its heat map)",
        "report",
    ] {
        assert_eq!(s.get(step), Some(&"ran"), "step {step}:\n{err}");
    }
    // N/M counts every step once: 1..=M, M the same on every line.
    let (idx, totals) = step_indices(&first);
    assert_eq!(totals.len(), 1, "{err}");
    assert_eq!(idx, (1..=totals[0]).collect::<Vec<_>>(), "{err}");
    assert_eq!(totals[0], s.len(), "{err}");
    // kfdo lists only symbols that exist: lld does not warn about the ordering, but for
    // the undefined global stand-in of a function ThinLTO internalized (lz_main, called
    // only from its own module), whose local definition is ordered all the same (every
    // ld profile symbol's place is checked below). The warnings are shown, and explained.
    let warned: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("warning: build"))
        .collect();
    for w in &warned {
        assert!(
            w.contains("build autofdo+thinlto+propeller: ld.lld: warning: <internal>: unable to order undefined symbol: "),
            "{err}"
        );
    }
    if !warned.is_empty() {
        assert!(err.contains("ThinLTO internalized"), "{err}");
    }

    // The bases carry what their layout variants read.
    let log =
        |step: &str| std::fs::read_to_string(out.join("logs").join(format!("{step}.log"))).unwrap();
    for base in ["build-baseline", "build-autofdo+thinlto"] {
        let l = log(base);
        assert!(l.contains("-fbasic-block-address-map"), "{base}:\n{l}");
        assert!(l.contains("-Wl,--emit-relocs"), "{base}:\n{l}");
    }
    assert!(log("build-autofdo+thinlto").contains("-Wl,--lto-basic-block-address-map"));
    let l = log("build-autofdo+thinlto+propeller");
    assert!(
        l.contains("-Wl,--lto-basic-block-sections=") && l.contains("-Wl,--symbol-ordering-file="),
        "{l}"
    );
    assert!(!l.contains("no-warn-symbol-ordering"));
    // The profile steps count the samples that fell in the binary they profile.
    for step in ["profile-bolt", "profile-propeller"] {
        let l = log(step);
        let n: u64 = l
            .lines()
            .find_map(|line| {
                line.strip_prefix("kfdo profile: ")?
                    .split_once(" samples in ")
            })
            .and_then(|(n, _)| n.parse().ok())
            .unwrap_or_else(|| panic!("{step}: no sample count:\n{l}"));
        assert!(n > 0, "{step}: no samples in the binary:\n{l}");
    }
    let l = log("build-bolt");
    assert!(
        l.contains("llvm-bolt-19") && l.contains("-reorder-blocks=ext-tsp"),
        "{l}"
    );

    // Propeller: the relinked builds follow the profiles; the hot lz loop is split.
    let split = assert_propeller_layout(&out, "propeller", &out.join("build/baseline/lz"));
    assert!(split >= 1, "no function was split");
    assert_propeller_layout(
        &out,
        "autofdo+thinlto+propeller",
        &out.join("build/autofdo+thinlto/lz"),
    );
    // ... by the name the profiled build gave the local mix: `NAME.llvm.HASH` when
    // ThinLTO imported churn into main's module and promoted mix (the import follows the
    // sampled counts, so either may happen), the unique local name otherwise.
    let ld = std::fs::read_to_string(out.join("profiles/autofdo+thinlto+propeller_ld_profile.txt"))
        .unwrap();
    let base = kfdo_elf::Binary::open(&out.join("build/autofdo+thinlto/lz")).unwrap();
    let mix: Vec<String> = kfdo_elf::BbAddrMap::function_names(&base)
        .into_values()
        .filter(|n| n.contains("mix"))
        .collect();
    assert_eq!(mix.len(), 1, "{mix:?}");
    assert!(
        ld.lines().any(|l| l == mix[0]),
        "the hot mix is listed as the profiled build names it ({}):\n{ld}",
        mix[0]
    );

    // BOLT: the rewritten programs carry BOLT's marks.
    for v in ["bolt", "autofdo+thinlto+bolt"] {
        let b = kfdo_elf::Binary::open(&out.join("build").join(v).join("lz")).unwrap();
        let names: Vec<&str> = b.sections().iter().map(|s| s.name.as_str()).collect();
        assert!(
            names.contains(&".note.bolt_info") && names.contains(&".bolt.org.text"),
            "{v}: {names:?}"
        );
    }
    // Every build prints what the baseline prints.
    let output = |v: &str| {
        common::run_ok(
            std::process::Command::new(out.join("build").join(v).join("lz")).arg("100000"),
        )
        .stdout
    };
    let want = output("baseline");
    assert!(!want.is_empty());
    for v in [
        "autofdo+thinlto",
        "propeller",
        "bolt",
        "autofdo+thinlto+propeller",
        "autofdo+thinlto+bolt",
    ] {
        assert_eq!(output(v), want, "{v}");
    }

    // Judged: every variant in summary.json with its numbers; each layout variant
    // also against its base.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let bench = &json[0];
    let variants = bench["variants"].as_array().unwrap();
    let names: Vec<&str> = variants
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "baseline",
            "autofdo+thinlto",
            "propeller",
            "bolt",
            "autofdo+thinlto+propeller",
            "autofdo+thinlto+bolt"
        ]
    );
    for v in &variants[1..] {
        assert!(v["mean_s"].as_f64().unwrap() > 0.0, "{v}");
        for k in ["gain_pct", "gain_lo_pct", "gain_hi_pct", "p"] {
            assert!(v[k].as_f64().is_some_and(f64::is_finite), "{k}: {v}");
        }
    }
    let over = bench["layout_over_base"].as_array().unwrap();
    let pairs: Vec<(&str, &str)> = over
        .iter()
        .map(|l| (l["variant"].as_str().unwrap(), l["base"].as_str().unwrap()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("propeller", "baseline"),
            ("bolt", "baseline"),
            ("autofdo+thinlto+propeller", "autofdo+thinlto"),
            ("autofdo+thinlto+bolt", "autofdo+thinlto")
        ]
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("| autofdo+thinlto+bolt |"), "{summary}");
    // A heat map of every build that has a recording.
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    for v in names {
        assert!(html.contains(&format!("lz: {v} (")), "no heat map of {v}");
    }

    // Unchanged: nothing runs.
    let again = run();
    common::ok(&again, "kfdo optimize");
    assert_eq!(
        ran(&steps(&again)),
        Vec::<String>::new(),
        "{:?}",
        steps(&again)
    );
}
