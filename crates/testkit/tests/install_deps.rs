//! `scripts/install-deps.sh` installs everything a step calls: each external program the
//! sources start (`Command::new("...")` literals, the versioned LLVM tools they name) and
//! the programs and packages the steps use by a computed name (QEMU per architecture, the
//! kernel compilers, kbuild's package builds), mapped to its Debian package on this
//! machine (`dpkg -S`), must be in the script's PACKAGES, in what those depend on, or be
//! Essential (always present). On a fresh machine a missing one fails a step after
//! minutes of work (`dpkg-checkbuilddeps: error: Unmet build dependencies: kmod rsync`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Programs started under a name the code computes or takes from a recipe or a tool,
/// with why.
const PROGRAMS_BY_COMPUTED_NAME: &[(&str, &str)] = &[
    (
        "qemu-x86_64",
        "record --method emulated: qemu-{arch} runs a program",
    ),
    (
        "qemu-aarch64",
        "record --method emulated of aarch64 programs",
    ),
    (
        "qemu-system-x86_64",
        "kernel recording and boots: qemu-system-{arch}",
    ),
    ("qemu-system-aarch64", "arm64 kernel boots"),
    (
        "gcc-11",
        "kernel recipes' compilers (optimize::kernel::recipe::GCC_COMPILERS)",
    ),
    (
        "gcc-12",
        "kernel recipes' compilers (optimize::kernel::recipe::GCC_COMPILERS)",
    ),
    ("g++-11", "GCC AutoFDO of C++ programs"),
    (
        "valgrind",
        "compare --counters: cachegrind where there is no PMU",
    ),
    ("chromium", "the report's screenshot test"),
    ("java", "the fleet Spark job"),
    ("tclsh", "sqlite3's amalgamation (make sqlite3.c)"),
    ("dpkg-source", "scripts/fetch-debian-source.sh"),
    ("dpkg-buildpackage", "kbuild's bindeb-pkg"),
    ("dpkg-checkbuilddeps", "kbuild's bindeb-pkg"),
    ("rpmbuild", "kbuild's binrpm-pkg"),
    ("depmod", "kbuild's modules_install and package builds"),
    ("cpio", "the initramfs"),
];

/// What kbuild's `bindeb-pkg` checks with dpkg-checkbuilddeps before it builds anything
/// (`scripts/package/mkdebian`'s Build-Depends: Linux 6.1's list, libelf-dev and
/// libssl-dev for the configurations the recipes use, debhelper for the
/// `debhelper-compat` of later kernels).
const KBUILD_DEB_BUILD_DEPENDS: &[&str] = &[
    "bc",
    "rsync",
    "kmod",
    "cpio",
    "bison",
    "flex",
    "libelf-dev",
    "libssl-dev",
    "debhelper",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The words of every `...PACKAGES=( ... )` array in install-deps.sh (`EXAMPLE_PACKAGES`,
/// what the example needs, and `PACKAGES`, which takes it in), comments and `"${...}"`
/// expansions left out (comments may hold parentheses too).
fn listed_packages(script: &str) -> BTreeSet<String> {
    let starts: Vec<usize> = script
        .match_indices("PACKAGES=(")
        .map(|(at, m)| at + m.len())
        .collect();
    assert!(
        !starts.is_empty(),
        "install-deps.sh has no PACKAGES=( ... )"
    );
    let mut words = BTreeSet::new();
    for start in starts {
        words.extend(array_words(&script[start..]));
    }
    words
}

/// The words of one array, from just after its `(` to its `)`.
fn array_words(rest: &str) -> BTreeSet<String> {
    let mut words = BTreeSet::new();
    for line in rest.lines() {
        let code = line.split('#').next().unwrap_or("");
        let (inside, closed) = match code.split_once(')') {
            Some((inside, _)) => (inside, true),
            None => (code, false),
        };
        words.extend(
            inside
                .split_whitespace()
                .filter(|w| !w.starts_with("\"$"))
                .map(str::to_string),
        );
        if closed {
            return words;
        }
    }
    panic!("install-deps.sh: a PACKAGES=( is not closed");
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The string literals of `text`, roughly (enough for names: no escapes in them).
fn literals(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.match_indices('"').filter_map(move |(i, _)| {
        let rest = &text[i + 1..];
        let end = rest.find(['"', '\n'])?;
        Some((i, &rest[..end]))
    })
}

fn is_tool_name(s: &str) -> bool {
    !s.is_empty()
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "+._-".contains(c))
}

/// Programs the sources start by a literal name: `Command::new("NAME")`, and every
/// versioned LLVM tool they name (`"llvm-profgen-19"`, ...), with where each was seen.
fn programs_in_sources() -> BTreeMap<String, String> {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    let mut found = BTreeMap::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let short = f.strip_prefix(root()).unwrap_or(&f).display().to_string();
        for (at, lit) in literals(&text) {
            let started = text[..at].ends_with("Command::new(");
            let llvm_19 = lit.ends_with("-19") && lit != "-19";
            if (started || llvm_19) && is_tool_name(lit) {
                found
                    .entry(lit.to_string())
                    .or_insert_with(|| short.clone());
            }
        }
    }
    found
}

/// The installed packages: Essential or not, and what each needs installed with it.
struct Installed {
    essential: BTreeSet<String>,
    depends: HashMap<String, Vec<Vec<String>>>,
    providers: HashMap<String, Vec<String>>,
}

fn package_name(word: &str) -> String {
    let w = word.trim();
    let w = w.split([' ', '(', '[', '<']).next().unwrap_or("");
    w.split(':').next().unwrap_or("").to_string()
}

fn installed() -> Installed {
    let out = kfdo_testkit::run_ok(Command::new("dpkg-query").args([
        "-W",
        "-f=${Package}\t${Status}\t${Essential}\t${Pre-Depends}, ${Depends}\t${Provides}\n",
    ]));
    let mut inst = Installed {
        essential: BTreeSet::new(),
        depends: HashMap::new(),
        providers: HashMap::new(),
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 5 || !f[1].ends_with(" ok installed") {
            continue;
        }
        let name = f[0].to_string();
        if f[2] == "yes" {
            inst.essential.insert(name.clone());
        }
        let deps = f[3]
            .split(',')
            .map(|clause| {
                clause
                    .split('|')
                    .map(package_name)
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>()
            })
            .filter(|alternatives| !alternatives.is_empty())
            .collect();
        inst.depends.insert(name.clone(), deps);
        for v in f[4].split(',').map(package_name).filter(|p| !p.is_empty()) {
            inst.providers.entry(v).or_default().push(name.clone());
        }
    }
    inst
}

/// `listed` and everything they depend on, as apt installs it (the first alternative of
/// each dependency that is installed here; a virtual package by its installed providers).
fn closure(listed: &BTreeSet<String>, inst: &Installed) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<String> = listed.iter().cloned().collect();
    while let Some(p) = todo.pop() {
        let real: Vec<String> = if inst.depends.contains_key(&p) {
            vec![p]
        } else {
            inst.providers.get(&p).cloned().unwrap_or_default()
        };
        for r in real {
            if !seen.insert(r.clone()) {
                continue;
            }
            for alternatives in &inst.depends[&r] {
                let pick = alternatives
                    .iter()
                    .find(|a| inst.depends.contains_key(*a) || inst.providers.contains_key(*a));
                if let Some(a) = pick {
                    todo.push(a.clone());
                }
            }
        }
    }
    seen
}

/// The installed packages that ship each program as `.../bin/NAME` or `.../sbin/NAME`.
fn packages_of(programs: &BTreeSet<String>) -> HashMap<String, BTreeSet<String>> {
    let out = Command::new("dpkg")
        .arg("-S")
        .args(programs.iter().map(|p| format!("bin/{p}")))
        .output()
        .expect("dpkg");
    let mut owners: HashMap<String, BTreeSet<String>> = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if line.starts_with("diversion by ") {
            continue;
        }
        let Some((pkgs, path)) = line.split_once(": ") else {
            continue;
        };
        let path = Path::new(path.trim());
        let (Some(file), Some(dir)) = (path.file_name(), path.parent()) else {
            continue;
        };
        let file = file.to_string_lossy().to_string();
        if !programs.contains(&file) || !dir.ends_with("bin") && !dir.ends_with("sbin") {
            continue;
        }
        for p in pkgs.split(", ") {
            owners
                .entry(file.clone())
                .or_default()
                .insert(package_name(p));
        }
    }
    owners
}

/// What the steps need (a program or a package, with why) that neither install-deps.sh's
/// `listed` packages, what they pull in, nor the Essential set provides.
fn unmet(listed: &BTreeSet<String>) -> Vec<String> {
    let n = needs();
    let have = closure(listed, &n.installed);
    let provided = |pkgs: &BTreeSet<String>| {
        pkgs.iter()
            .any(|p| have.contains(p) || n.installed.essential.contains(p))
    };
    let mut missing = Vec::new();
    for (program, why) in &n.programs {
        match n.owners.get(program) {
            None => missing.push(format!(
                "{program} ({why}): no installed package ships a bin/{program}; install it and \
                 add its package to PACKAGES"
            )),
            Some(pkgs) if !provided(pkgs) => missing.push(format!(
                "{program} ({why}): from {}, not installed by install-deps.sh",
                pkgs.iter().cloned().collect::<Vec<_>>().join(" or ")
            )),
            Some(_) => {}
        }
    }
    for pkg in KBUILD_DEB_BUILD_DEPENDS {
        if !provided(&BTreeSet::from([pkg.to_string()])) {
            missing.push(format!(
                "{pkg} (kbuild's bindeb-pkg Build-Depends): not installed by install-deps.sh"
            ));
        }
    }
    missing
}

struct Needs {
    programs: BTreeMap<String, String>,
    owners: HashMap<String, BTreeSet<String>>,
    installed: Installed,
}

/// The programs the steps call and what this machine knows of their packages, read once.
fn needs() -> &'static Needs {
    static NEEDS: OnceLock<Needs> = OnceLock::new();
    NEEDS.get_or_init(|| {
        let mut programs: BTreeMap<String, String> = programs_in_sources()
            .into_iter()
            .map(|(p, file)| (p, format!("started in {file}")))
            .collect();
        for (p, why) in PROGRAMS_BY_COMPUTED_NAME {
            programs.insert(p.to_string(), why.to_string());
        }
        // Every tool of every LLVM release kfdo offers (`--llvm N`, `clang-N`), by the
        // name kfdo_toolchain gives it.
        for llvm in kfdo_toolchain::Llvm::KNOWN {
            for t in kfdo_toolchain::TOOLS {
                programs.insert(
                    llvm.tool(t),
                    format!("a step's tool of {llvm} (kfdo_toolchain)"),
                );
            }
        }
        let names: BTreeSet<String> = programs.keys().cloned().collect();
        Needs {
            owners: packages_of(&names),
            programs,
            installed: installed(),
        }
    })
}

fn script_packages() -> BTreeSet<String> {
    let path = root().join("scripts/install-deps.sh");
    let script =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    listed_packages(&script)
}

/// Needs dpkg: Debian is what install-deps.sh installs for.
fn debian() -> bool {
    kfdo_testkit::require_tools(&["dpkg", "dpkg-query"])
}

#[test]
fn install_deps_installs_every_program_and_package_the_steps_call() {
    if !debian() {
        return;
    }
    let n = needs();
    for p in [
        "clang-19",
        "llvm-profgen-19",
        "llvm-bolt-22",
        "perf",
        "make",
    ] {
        assert!(
            n.programs.contains_key(p),
            "the scan of the sources missed {p}: {:?}",
            n.programs.keys()
        );
    }
    let missing = unmet(&script_packages());
    assert!(
        missing.is_empty(),
        "scripts/install-deps.sh does not install what these need (add the package to \
         PACKAGES):\n  {}",
        missing.join("\n  ")
    );
}

/// The check catches the gap a fresh machine hit: the script before kmod and rsync were
/// added to it.
#[test]
fn the_script_without_kmod_and_rsync_fails_the_check() {
    if !debian() {
        return;
    }
    let mut old = script_packages();
    assert!(old.remove("kmod") && old.remove("rsync"));
    let missing = unmet(&old).join("\n");
    for named in [
        "kmod (kbuild's bindeb-pkg Build-Depends)",
        "rsync (kbuild's bindeb-pkg Build-Depends)",
        "depmod (",
    ] {
        assert!(
            missing.contains(named),
            "{named:?} not reported:\n{missing}"
        );
    }
}

/// What README's first command (`scripts/example.sh`: `kfdo optimize recipes/sqlite3`) runs
/// besides kfdo: Debian's source package, sqlite3's amalgamation, the builds of its five
/// variants, the emulated recording and llvm-profgen's reference profile.
const EXAMPLE_RUNS: &[&str] = &[
    "dpkg-source",
    "tclsh",
    "make",
    "clang-19",
    "ld.lld-19",
    "llvm-profgen-19",
    "llvm-profdata-19",
    "qemu-x86_64",
];

/// The example installs only `EXAMPLE_PACKAGES` (`install-deps.sh --example`): they, what
/// they pull in and the Essential set must provide every program it runs, and the list
/// leaves out what only the tests use.
#[test]
fn the_examples_packages_provide_what_the_example_runs() {
    if !debian() {
        return;
    }
    let path = root().join("scripts/install-deps.sh");
    let script = std::fs::read_to_string(&path).unwrap();
    let start = script
        .find("EXAMPLE_PACKAGES=(")
        .expect("install-deps.sh has no EXAMPLE_PACKAGES=( ... )")
        + "EXAMPLE_PACKAGES=(".len();
    let example = array_words(&script[start..]);
    for tests_only in ["openjdk-17-jre-headless", "clang-22", "chromium", "gcc-11"] {
        assert!(
            !example.contains(tests_only),
            "{tests_only} in the example's list"
        );
    }
    let inst = installed();
    let have = closure(&example, &inst);
    let runs: BTreeSet<String> = EXAMPLE_RUNS.iter().map(|p| p.to_string()).collect();
    let owners = packages_of(&runs);
    for program in EXAMPLE_RUNS {
        let pkgs = owners
            .get(*program)
            .unwrap_or_else(|| panic!("no installed package ships bin/{program}"));
        assert!(
            pkgs.iter()
                .any(|p| have.contains(p) || inst.essential.contains(p)),
            "{program} (from {pkgs:?}) is not installed by install-deps.sh --example"
        );
    }
}

#[test]
fn packages_are_read_from_the_array_without_its_comments() {
    let script = "X=1\nPACKAGES=(a b # not (this)\n  # nor-this\n  c)\nother=(d)\n";
    assert_eq!(
        listed_packages(script),
        BTreeSet::from(["a".into(), "b".into(), "c".into()])
    );
    // The example's list, taken into the whole one by expansion.
    let two = "EXAMPLE_PACKAGES=(a b)\nPACKAGES=(\"${EXAMPLE_PACKAGES[@]}\" c)\n\
               if x; then PACKAGES=(\"${EXAMPLE_PACKAGES[@]}\"); fi\n";
    assert_eq!(
        listed_packages(two),
        BTreeSet::from(["a".into(), "b".into(), "c".into()])
    );
    assert_eq!(
        package_name(" libelf-dev:native (>= 1) <!nocheck>"),
        "libelf-dev"
    );
}
