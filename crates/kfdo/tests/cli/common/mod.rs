//! Shared helpers of the kfdo integration tests: building the test programs
//! with clang-19, running kfdo and the reference tools, comparing profiles.
#![allow(dead_code)]

pub mod clang;
pub mod collect;
pub mod kernel;

use kfdo_afdo::{FunctionSamples, Profile};
pub use kfdo_toolchain::Llvm;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};

pub const CFLAGS: &[&str] = &[
    "-O2",
    "-g",
    "-fdebug-info-for-profiling",
    "-funique-internal-linkage-names",
];

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub fn program_source(name: &str) -> PathBuf {
    repo_root().join("testdata/programs").join(name)
}

pub fn kfdo() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kfdo"))
}

pub use clang::{build, build_with, Clang};
pub use kfdo_testkit::{ok, run_ok};

/// The start of each test that takes the machine for many minutes (a kernel built or
/// booted, sqlite3 or a Spark job built and run; `what` says which): None in a quick run
/// (`kfdo_testkit::long_test`: the test is left out and returns), else a guard the test
/// holds for its whole body. It makes such tests run one at a time, as when each was its
/// own test binary: some also share directories (the kernel recipe tests' output, the
/// sqlite3 amalgamation) that two at once would corrupt. A test that failed holding it
/// does not fail the others: they take it over. It also times the test
/// (`kfdo_testkit::time_this_test`).
pub fn heavy_test(what: &str) -> Option<HeavyTest> {
    static HEAVY: Mutex<()> = Mutex::new(());
    if !kfdo_testkit::long_test(what) {
        return None;
    }
    let lock = HEAVY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    Some(HeavyTest {
        _timer: kfdo_testkit::time_this_test(),
        _lock: lock,
    })
}

/// See [`heavy_test`]: the test's time is taken (first field, dropped first) before the
/// next heavy test may start.
pub struct HeavyTest {
    _timer: kfdo_testkit::TestTimer,
    _lock: MutexGuard<'static, ()>,
}

/// `kfdo record --method emulated` of `bin ARGS` into `out`, at a prime period (1009
/// taken branches) so samples do not beat in step with the program's loops.
pub fn record_emulated(bin: &Path, args: &[&str], out: &Path) {
    run_ok(
        kfdo()
            .args(["record", "-q", "--method", "emulated", "-c", "1009", "-o"])
            .arg(out)
            .arg("--")
            .arg(bin)
            .args(args),
    );
}

/// A binary's GNU build-id as lowercase hex, as kfdo's messages print it.
pub fn build_id_hex(bin: &Path) -> String {
    let b = kfdo_elf::Binary::open(bin).unwrap();
    b.build_id()
        .unwrap()
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// lz built in a temporary directory and recorded under the emulated LBR (`lz 100000`,
/// period 211), through the library: the recording several test modules share (see
/// [`lz`]).
pub struct LzRecording {
    pub tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub bin: PathBuf,
    pub data: PathBuf,
}

/// lz's shared recording, made by the first test that asks for it and reused by every
/// other in this run (recording is their slow part). Tests may add files of their own to
/// its directory, under names no other test uses.
pub fn lz() -> &'static LzRecording {
    static LZ: OnceLock<LzRecording> = OnceLock::new();
    LZ.get_or_init(lz_recording)
}

fn lz_recording() -> LzRecording {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let bin = build("lz.c", &dir, &[]);
    let data = dir.join("lz.data");
    let cfg = kfdo_record::RecordConfig::new(bin.as_os_str(), &data)
        .args(["100000"])
        .period(211);
    kfdo_record::record_user(&cfg).unwrap();
    LzRecording {
        tmp,
        dir,
        bin,
        data,
    }
}

/// `kfdo profile --format FORMAT` of one perf.data of `bin` into `out`.
pub fn profile_perf_data(bin: &Path, data: &Path, out: &Path, format: &str) {
    run_ok(
        kfdo()
            .args(["profile", "-q", "--format", format, "--binary"])
            .arg(bin)
            .arg("--perf-data")
            .arg(data)
            .arg("-o")
            .arg(out),
    );
}

/// Parse an LLVM text profile.
pub fn read_text(path: &Path) -> Profile {
    kfdo_afdo::read_profile(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Render the first differences between two profiles, for assertion messages.
pub fn diff(ours: &Profile, theirs: &Profile) -> String {
    let mut out = String::new();
    let names: std::collections::BTreeSet<&String> = ours
        .functions
        .keys()
        .chain(theirs.functions.keys())
        .collect();
    for name in names {
        match (ours.functions.get(name), theirs.functions.get(name)) {
            (Some(a), Some(b)) if a == b => {}
            (Some(a), Some(b)) => diff_fn(&mut out, name, a, b, 0),
            (Some(a), None) => out += &format!("only kfdo: {name} total {}\n", a.total_samples),
            (None, Some(b)) => {
                out += &format!("only reference: {name} total {}\n", b.total_samples)
            }
            (None, None) => unreachable!(),
        }
        if out.len() > 4000 {
            out += "...\n";
            break;
        }
    }
    out
}

fn diff_fn(out: &mut String, path: &str, a: &FunctionSamples, b: &FunctionSamples, depth: usize) {
    let pad = "  ".repeat(depth);
    if a.total_samples != b.total_samples || a.head_samples != b.head_samples {
        *out += &format!(
            "{pad}{path}: total {} vs {}, head {} vs {}\n",
            a.total_samples, b.total_samples, a.head_samples, b.head_samples
        );
    }
    let locs: std::collections::BTreeSet<_> = a.body.keys().chain(b.body.keys()).collect();
    for l in locs {
        let (x, y) = (a.body.get(l), b.body.get(l));
        if x != y {
            *out += &format!("{pad}  {path} @{l}: {x:?} vs {y:?}\n");
        }
    }
    let sites: std::collections::BTreeSet<_> =
        a.callsites.keys().chain(b.callsites.keys()).collect();
    for s in sites {
        let empty = Default::default();
        let (x, y) = (
            a.callsites.get(s).unwrap_or(&empty),
            b.callsites.get(s).unwrap_or(&empty),
        );
        let callees: std::collections::BTreeSet<_> = x.keys().chain(y.keys()).collect();
        for c in callees {
            let p = format!("{path} @{s} -> {c}");
            match (x.get(c), y.get(c)) {
                (Some(i), Some(j)) if i == j => {}
                (Some(i), Some(j)) => diff_fn(out, &p, i, j, depth + 1),
                (Some(_), None) => *out += &format!("{pad}  only kfdo: {p}\n"),
                (None, Some(_)) => *out += &format!("{pad}  only reference: {p}\n"),
                (None, None) => unreachable!(),
            }
        }
    }
}

/// Debian bookworm's sqlite3 source (scripts/fetch-debian-source.sh, an isolated apt
/// configuration with a deb-src entry), or None where KFDO_OFFLINE is set and it cannot
/// be fetched (where tests must run, kfdo-testkit fails instead).
pub fn fetch_sqlite_source() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("bash")
        .arg(root.join("scripts/fetch-debian-source.sh"))
        .arg("sqlite3")
        .output()
        .expect("bash");
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        // KFDO_OFFLINE lets a machine without the network skip it; where tests must
        // run (CI), kfdo-testkit fails it instead.
        let offline = std::env::var_os("KFDO_OFFLINE").is_some();
        if offline
            && !kfdo_testkit::require(
                false,
                &format!("KFDO_OFFLINE is set and the sqlite3 source could not be fetched:\n{err}"),
                "connect to deb.debian.org, or unset KFDO_OFFLINE",
            )
        {
            return None;
        }
        panic!("scripts/fetch-debian-source.sh sqlite3 failed (no network? set KFDO_OFFLINE=1 to skip):\n{err}");
    }
    let dir = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap_or("")
        .trim()
        .to_string();
    let dir = PathBuf::from(dir);
    assert!(
        dir.join("test/speedtest1.c").exists(),
        "{} has no test/speedtest1.c",
        dir.display()
    );
    Some(dir)
}
