//! `kfdo profile --format gcov` end to end with the real compilers: lz (C) and shapes
//! (C++: mangled names, inlined library code) built by gcc-11 and gcc-12 with
//! `-O2 -g`, recorded with kfdo's emulated LBR, profiled for that release, and rebuilt
//! with `-fauto-profile`: gcc must say nothing, its afdo dump must show the hot
//! functions annotated with nonzero counts, and the program must print what it printed.
//! A profile for the other release is refused by gcc and by kfdo's reader. Where
//! AutoFDO's create_gcov runs, its profile of the same samples is compared.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{kfdo, program_source, record_emulated, run_ok};
use kfdo_afdo::gcov::{gcc_view, read_gcov};
use kfdo_afdo::{GcovVersion, Profile};
use kfdo_testkit::require_tools;

fn tools() -> bool {
    require_tools(&["gcc-11", "g++-11", "gcc-12", "g++-12", "qemu-x86_64"])
}

fn compiler(source: &str, v: u32) -> String {
    let cc = if source.ends_with(".cpp") {
        "g++"
    } else {
        "gcc"
    };
    format!("{cc}-{v}")
}

/// `compiler -O2 -g extra -o dir/name source`; returns the binary and gcc's output.
fn gcc(v: u32, source: &str, dir: &Path, name: &str, extra: &[String]) -> (PathBuf, Output) {
    let bin = dir.join(name);
    let out = run_ok(
        Command::new(compiler(source, v))
            .args(["-O2", "-g"])
            .args(extra)
            .arg("-o")
            .arg(&bin)
            .arg(program_source(source)),
    );
    (bin, out)
}

fn gcov(bin: &Path, data: &Path, v: u32, out: &Path) -> Output {
    kfdo()
        .args(["profile", "-q", "--format", "gcov", "--gcc-version"])
        .arg(v.to_string())
        .arg("--binary")
        .arg(bin)
        .arg("--perf-data")
        .arg(data)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap()
}

/// Each function of gcc's afdo dump (its header line) with its largest block count.
fn dump_counts(dir: &Path, name: &str) -> BTreeMap<String, u64> {
    let dump = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let f = p.file_name().unwrap().to_string_lossy();
            f.starts_with(&format!("{name}-")) && f.ends_with("i.afdo")
        })
        .unwrap_or_else(|| panic!("no {name}-*.afdo dump in {}", dir.display()));
    let mut out = BTreeMap::new();
    let mut current = String::new();
    for line in std::fs::read_to_string(&dump).unwrap().lines() {
        let header = !line.starts_with([' ', ';', '<', '{', '}'])
            && line.contains(" (")
            && line.ends_with(')');
        if header {
            current = line.to_string();
            out.insert(current.clone(), 0);
        } else if let Some(i) = line.find("[count: ") {
            let n: u64 = line[i + 8..]
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap();
            if let Some(m) = out.get_mut(&current) {
                *m = (*m).max(n);
            }
        }
    }
    out
}

/// Builds, records, profiles and rebuilds `source` with gcc-`v`; returns the profile
/// read back and gcc's dump. `hot`: substrings of dump headers that must be annotated.
fn round(source: &str, v: u32, hot: &[&str]) -> Profile {
    let dir = tempfile::tempdir().unwrap();
    let stem = Path::new(source).file_stem().unwrap().to_str().unwrap();
    let (bin, _) = gcc(v, source, dir.path(), stem, &[]);
    let expected = run_ok(&mut Command::new(&bin)).stdout;
    let data = dir.path().join("train.data");
    record_emulated(&bin, &[], &data);
    let prof = dir.path().join(format!("{stem}.gcov"));
    let out = gcov(&bin, &data, v, &prof);
    assert!(
        out.status.success(),
        "kfdo profile --format gcov --gcc-version {v} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let version = GcovVersion::for_gcc(v).unwrap();
    let profile = read_gcov(&prof, Some(version)).unwrap();
    assert_eq!(kfdo_afdo::read_profile(&prof).unwrap(), profile);
    let shown = run_ok(kfdo().arg("show").arg(&prof)).stdout;
    assert!(!shown.is_empty(), "kfdo show prints the gcov profile");

    let name = format!("{stem}-afdo");
    let flags = [
        format!("-fauto-profile={}", prof.display()),
        "-fdump-ipa-afdo".to_string(),
    ];
    let (opt, out) = gcc(v, source, dir.path(), &name, &flags);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.trim().is_empty(),
        "{} said something about kfdo's profile:\n{stderr}",
        compiler(source, v)
    );
    let counts = dump_counts(dir.path(), &name);
    for h in hot {
        let (f, n) = counts
            .iter()
            .filter(|(f, _)| f.contains(h))
            .max_by_key(|(_, n)| **n)
            .unwrap_or_else(|| panic!("gcc-{v}: no function {h:?} in the afdo dump"));
        assert!(*n > 0, "gcc-{v}: {f} has no nonzero count in the afdo dump");
        println!("gcc-{v} {source}: {h:?} annotated, largest block count {n}");
    }
    assert_eq!(
        run_ok(&mut Command::new(&opt)).stdout,
        expected,
        "the -fauto-profile build prints something else"
    );
    profile
}

#[test]
fn lz_rebuilt_by_gcc_11_and_12_with_kfdos_profile() {
    if !tools() {
        return;
    }
    for v in [11, 12] {
        let p = round("lz.c", v, &[" compress (", " decompress ("]);
        for f in ["compress", "decompress"] {
            assert!(
                p.functions[f].total_samples > 0,
                "gcc-{v}: {f} not in the profile"
            );
        }
        assert!(
            p.functions.values().any(|f| f.num_inlinees() > 0),
            "lz's static inline helpers appear as inlinees"
        );
    }
}

#[test]
fn shapes_rebuilt_by_gxx_11_and_12_with_kfdos_profile() {
    if !tools() {
        return;
    }
    for v in [11, 12] {
        let p = round("shapes.cpp", v, &["__introsort_loop", "::area ("]);
        assert!(
            p.functions.keys().any(|n| n.starts_with("_ZNK5scene")),
            "gcc-{v}: mangled names: {:?}",
            p.functions.keys().collect::<Vec<_>>()
        );
        assert!(p.functions.values().any(|f| f.num_inlinees() > 0));
    }
}

#[test]
fn a_profile_for_the_other_release_is_refused_by_gcc_and_by_kfdo() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (bin, _) = gcc(12, "lz.c", dir.path(), "lz", &[]);
    let data = dir.path().join("train.data");
    record_emulated(&bin, &[], &data);
    let p11 = dir.path().join("lz11.gcov");
    let p12 = dir.path().join("lz12.gcov");
    assert!(gcov(&bin, &data, 11, &p11).status.success());
    assert!(gcov(&bin, &data, 12, &p12).status.success());
    // What each compiler says (GCC 11's message really reads "does match").
    for (v, wrong, said) in [
        (12, &p11, "AutoFDO profile version 1 does not match 2"),
        (11, &p12, "AutoFDO profile version 2 does match 1"),
    ] {
        let out = Command::new(format!("gcc-{v}"))
            .args(["-O2", "-g", "-c", "-o"])
            .arg(dir.path().join("x.o"))
            .arg(format!("-fauto-profile={}", wrong.display()))
            .arg(program_source("lz.c"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "gcc-{v} took the other release's profile"
        );
        assert!(stderr.contains(said), "gcc-{v}: {stderr}");
    }
    let e = read_gcov(&p11, Some(GcovVersion::Gcc12))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("lz11.gcov") && e.contains("--gcc-version 12"),
        "{e}"
    );
    // A release kfdo has not verified: refused before anything is written.
    let p13 = dir.path().join("lz13.gcov");
    let out = gcov(&bin, &data, 13, &p13);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("only GCC 11") && !p13.exists(), "{stderr}");
    // A GCC binary's profile is gcov without --format; another format has no GCC release.
    let out = kfdo()
        .args([
            "profile",
            "--format",
            "extbinary",
            "--gcc-version",
            "12",
            "--binary",
        ])
        .arg(&bin)
        .arg("--perf-data")
        .arg(&data)
        .arg("-o")
        .arg(dir.path().join("x.afdo"))
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "--gcc-version with --format extbinary"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--gcc-version is for --format gcov only"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Without --gcc-version the profile is for the GCC that built the binary (its DWARF
/// producer), not the `gcc` on PATH: lz built by gcc-11 while PATH's gcc is gcc-12
/// gets a profile gcc-11 takes silently, and the summary says where 11 came from.
#[test]
fn the_release_comes_from_the_binarys_dwarf_not_from_path() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // PATH's gcc is gcc-12 whatever the machine's default is.
    let path_dir = dir.path().join("path");
    std::fs::create_dir(&path_dir).unwrap();
    let gcc_on_path = path_dir.join("gcc");
    std::fs::write(&gcc_on_path, "#!/bin/sh\nexec gcc-12 \"$@\"\n").unwrap();
    std::fs::set_permissions(
        &gcc_on_path,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        path_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let on_path = run_ok(Command::new("gcc").arg("--version").env("PATH", &path));
    assert!(
        String::from_utf8_lossy(&on_path.stdout).contains(" 12."),
        "PATH's gcc is not gcc-12"
    );

    let (bin, _) = gcc(11, "lz.c", dir.path(), "lz", &[]);
    let data = dir.path().join("train.data");
    record_emulated(&bin, &[], &data);
    let prof = dir.path().join("lz.gcov");
    let out = run_ok(
        kfdo()
            .env("PATH", &path)
            .args(["profile", "--json", "--format", "gcov", "--binary"])
            .arg(&bin)
            .arg("--perf-data")
            .arg(&data)
            .arg("-o")
            .arg(&prof),
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["gcc"]["major"], 11, "{summary:#}");
    assert_eq!(summary["gcc"]["source"], "binary", "{summary:#}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("for GCC 11 (from the binary's DWARF producer: \"GNU C"),
        "the summary says which release and why: {said}"
    );
    read_gcov(&prof, Some(GcovVersion::Gcc11)).unwrap();

    let flags = [format!("-fauto-profile={}", prof.display())];
    let (_, out) = gcc(11, "lz.c", dir.path(), "lz-afdo", &flags);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.trim().is_empty(),
        "gcc-11 said something about the profile:\n{stderr}"
    );
}

/// AutoFDO's create_gcov on the same samples (its own perf.data reader cannot read
/// perf 6's files, so it gets them as its text input, and it reads DWARF 4 only), for
/// GCC 11 (create_gcov's strings are GCC 11's whatever the version).
#[test]
fn agrees_with_create_gcov_where_it_runs() {
    if !tools() {
        return;
    }
    // Debian's autofdo package (scripts/install-deps.sh installs it).
    if !kfdo_testkit::require_tools(&["create_gcov"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (bin, _) = gcc(11, "lz.c", dir.path(), "lz", &["-gdwarf-4".to_string()]);
    let data = dir.path().join("train.data");
    record_emulated(&bin, &[], &data);
    let ours = dir.path().join("kfdo.gcov");
    assert!(gcov(&bin, &data, 11, &ours).status.success());
    let raw = dir.path().join("lz.raw");
    run_ok(
        kfdo()
            .args(["profile", "-q", "--unsymbolized", "--binary"])
            .arg(&bin)
            .arg("--perf-data")
            .arg(&data)
            .arg("-o")
            .arg(&raw),
    );
    let base = kfdo_elf::Binary::open(&bin).unwrap().preferred_base();
    let text = dir.path().join("lz.afdotxt");
    std::fs::write(
        &text,
        create_gcov_text(&std::fs::read_to_string(&raw).unwrap(), base),
    )
    .unwrap();
    let theirs = dir.path().join("cg.gcov");
    let out = Command::new("create_gcov")
        .arg(format!("--binary={}", bin.display()))
        .arg(format!("--profile={}", text.display()))
        .arg("--profiler=text")
        .arg(format!("--gcov={}", theirs.display()))
        .arg("--gcov_version=1")
        .output()
        .unwrap();
    assert!(
        out.status.success() && theirs.exists(),
        "create_gcov failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = read_gcov(&ours, Some(GcovVersion::Gcc11)).unwrap();
    let theirs = gcc_view(&read_gcov(&theirs, Some(GcovVersion::Gcc11)).unwrap());
    let mut agree = 0;
    for (name, f) in &theirs.functions {
        let o = ours.functions.get(name);
        println!(
            "create_gcov {name}: total {} head {}; kfdo: {:?}",
            f.total_samples,
            f.head_samples,
            o.map(|o| (o.total_samples, o.head_samples))
        );
        agree += usize::from(o.is_some_and(|o| o.total_samples == f.total_samples));
    }
    let same = theirs
        .functions
        .iter()
        .filter(|(n, f)| ours.functions.get(*n) == Some(f))
        .count();
    println!(
        "create_gcov agreement: {agree} of {} functions have the same total, {same} are \
         identical line by line once discriminators are folded ({} in kfdo's)",
        theirs.len(),
        ours.len()
    );
    let names = |p: &Profile| p.functions.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&ours), names(&theirs), "the same functions");
    assert_eq!(agree, theirs.len(), "the same totals, as GCC 11 sums them");
}

/// kfdo's raw aggregate (ranges, then branches, offsets from `base`) as create_gcov's
/// text input: ranges, addresses (none), branches, at the binary's addresses. The raw
/// format writes a branch from or to outside the binary as an offset near 2^64
/// (`fffffffffffff001`): it wraps round to the same out-of-binary address here.
fn create_gcov_text(raw: &str, base: u64) -> String {
    let shift = |a: &str| {
        format!(
            "{:x}",
            u64::from_str_radix(a, 16).unwrap().wrapping_add(base)
        )
    };
    let mut lines = raw.lines();
    let mut out = String::new();
    for (i, sep) in ["-", "->"].iter().enumerate() {
        let n: usize = lines.next().unwrap().trim().parse().unwrap();
        out += &format!("{n}\n");
        for _ in 0..n {
            let (span, count) = lines.next().unwrap().rsplit_once(':').unwrap();
            let (a, b) = span.split_once(sep).unwrap();
            out += &format!("{}{sep}{}:{count}\n", shift(a), shift(b));
        }
        if i == 0 {
            out += "0\n";
        }
    }
    out
}
