//! `--counters emulated`: the counters of kfdo's QEMU plugin (kfdo-record), the
//! same numbers `kfdo record --method emulated --counters FILE.json` writes.
//!
//! The command runs once under `qemu-x86_64` (or `qemu-aarch64` for an aarch64 program:
//! kfdo-record picks the emulator from the ELF header) with the plugin: instructions,
//! taken and conditional branches are exact counts of the user-mode code the
//! program (and every process it forks) executed; L1i and iTLB misses come
//! from an LRU model of an instruction cache and TLB, not this CPU. For a
//! program that runs one thread at a time all of it is deterministic: two runs
//! of the same binary on the same input give the same numbers, so a difference
//! of one instruction is real. A program that starts threads is not (their
//! interleaving changes what runs how often): the plugin says how many threads
//! each process ran, and such a variant is counted
//! [`determinism::COUNTS_WHEN_THREADED`] times, its rows the median with the
//! spread and labelled "not deterministic: N threads".
//!
//! # Commands and `sh -c`
//!
//! QEMU user mode follows `fork` but not `exec`: an exec'd program runs
//! natively, unseen by the plugin. A compare variant is `sh -c CMD`, and sh
//! execs CMD's program, so running the shell under QEMU would count the shell
//! and nothing of the benchmark. Cachegrind has the same problem and solves it
//! with `--trace-children=yes`; QEMU has no such switch, so this source does
//! the work itself, in one of two ways:
//!
//! - A command that is one program with arguments (words separated by blanks,
//!   optionally quoted, optionally preceded by `VAR=value` assignments and
//!   `exec`) is run under QEMU directly, with the assignments as its
//!   environment.
//! - A command made from a template that names the program under test
//!   (`{bin}`, as `kfdo optimize` recipes write their benchmarks) may use any
//!   shell syntax: the shell runs natively, with a launcher in every place of
//!   `{bin}` that runs the program under QEMU, counting, and the counts of
//!   every invocation are summed (`kfdo_record::emulated::launcher`).
//!
//! Any other command with shell syntax (pipes, redirections, `;`, `&&`,
//! expansions, globs, ...) is an error that says so, instead of counts of the
//! wrong program. A program that execs another one itself is an error for the
//! same reason.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use kfdo_record::emulated::launcher::Launcher;
use kfdo_record::{StdStream, StdioPlan};

use super::determinism::{self, Claim};
use super::{tool_exists, CountedRun, Counter, CounterError, Source};
use crate::runner::{self, ProgramSlot};

const NAME: &str = "emulated";
const QEMU: &str = "qemu-x86_64";

/// Counters from kfdo's QEMU plugin; see the module documentation.
pub struct Emulated {
    cache: kfdo_record::CacheModel,
}

impl Emulated {
    /// Checks that QEMU user mode is there to run the plugin.
    pub fn probe() -> Result<Emulated, String> {
        if !cfg!(target_arch = "x86_64") {
            return Err(
                "--counters emulated: kfdo's QEMU plugin runs x86-64 programs under \
                        qemu-x86_64, and this host is not x86-64; use --counters cachegrind"
                    .into(),
            );
        }
        if !tool_exists(QEMU) {
            return Err(
                "--counters emulated: qemu-x86_64 is not installed (apt-get install \
                        qemu-user); --counters cachegrind needs only valgrind"
                    .into(),
            );
        }
        Ok(Emulated {
            cache: kfdo_record::CacheModel::default(),
        })
    }
}

/// A command reduced to what `exec` needs: environment additions and argv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    pub env: Vec<(String, String)>,
    pub argv: Vec<String>,
}

/// Characters that make a command more than a program and its arguments
/// when they appear unquoted.
const SHELL_SYNTAX: &[char] = &[
    '|', '&', ';', '<', '>', '(', ')', '$', '`', '*', '?', '[', '#', '~', '{', '}', '!', '\n',
];

/// Splits `cmd` the way `sh` would, if it is a simple command: blanks separate
/// words; `'...'` is literal; `"..."` is literal unless it holds `$`, `` ` `` or
/// `\`; `\c` outside quotes is `c`. Leading `NAME=value` words become the
/// environment and a leading `exec` is dropped. Anything else a shell would
/// interpret is an error naming it.
pub fn parse_simple_command(cmd: &str) -> Result<SimpleCommand, String> {
    // (word, whether any part was quoted: a quoted `A=b` is not an assignment)
    let mut words: Vec<(String, bool)> = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut in_word = false;
    let mut chars = cmd.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push((std::mem::take(&mut cur), quoted));
                    in_word = false;
                    quoted = false;
                }
            }
            '\'' => {
                in_word = true;
                quoted = true;
                loop {
                    match chars.next() {
                        Some((_, '\'')) => break,
                        Some((_, x)) => cur.push(x),
                        None => return Err(format!("unterminated ' quote at byte {i}")),
                    }
                }
            }
            '"' => {
                in_word = true;
                quoted = true;
                loop {
                    match chars.next() {
                        Some((_, '"')) => break,
                        Some((j, x @ ('$' | '`' | '\\'))) => {
                            return Err(format!("'{x}' inside double quotes at byte {j}"))
                        }
                        Some((_, x)) => cur.push(x),
                        None => return Err(format!("unterminated \" quote at byte {i}")),
                    }
                }
            }
            '\\' => match chars.next() {
                Some((_, '\n')) => {}
                Some((_, x)) => {
                    in_word = true;
                    quoted = true;
                    cur.push(x);
                }
                None => return Err(format!("a trailing backslash at byte {i}")),
            },
            c if SHELL_SYNTAX.contains(&c) => {
                return Err(format!(
                    "'{}' at byte {i}",
                    if c == '\n' {
                        "\\n".to_string()
                    } else {
                        c.to_string()
                    }
                ))
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push((cur, quoted));
    }
    let is_name = |s: &str| {
        let mut it = s.chars();
        matches!(it.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
            && it.all(|c| c == '_' || c.is_ascii_alphanumeric())
    };
    let mut env = Vec::new();
    let mut rest = words.into_iter().peekable();
    while let Some((w, q)) = rest.peek() {
        match w.split_once('=') {
            Some((k, v)) if !q && is_name(k) => {
                env.push((k.to_string(), v.to_string()));
                rest.next();
            }
            _ => break,
        }
    }
    let mut argv: Vec<String> = rest.map(|(w, _)| w).collect();
    if argv.first().map(String::as_str) == Some("exec") {
        argv.remove(0);
    }
    if argv.is_empty() {
        return Err("no program to run".into());
    }
    const KEYWORDS: &[&str] = &[
        "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
        "cd", "export", "set", "eval", ".", "source", "ulimit", "umask",
    ];
    if KEYWORDS.contains(&argv[0].as_str()) {
        return Err(format!("it starts with the shell word '{}'", argv[0]));
    }
    Ok(SimpleCommand { env, argv })
}

/// What to run for `argv` as `kfdo compare` hands it over: `[SHELL, "-c", CMD]`
/// (the default) or a plain argv (`--shell none`).
pub fn direct_command(argv: &[String]) -> Result<SimpleCommand, String> {
    match argv {
        [_, c, cmd] if c == "-c" => parse_simple_command(cmd).map_err(|why| {
            format!(
                "--counters emulated runs the program under QEMU, whose user mode does not \
                 follow exec, so it cannot go through `{} -c` (the shell would be counted, not the \
                 program it execs); it runs a command that is one program with arguments (quoted \
                 words, leading VAR=value assignments and `exec` are fine) directly instead. \
                 `{cmd}` is not such a command: {why}. Put the pipeline or redirections in the \
                 program itself, or use --counters cachegrind, which follows the shell into its \
                 children (in a `kfdo optimize` recipe, a bench command may use any shell syntax: \
                 the program is counted wherever `{{bin}}` runs it)",
                argv[0]
            )
        }),
        [] => Err("no command to run".into()),
        _ => Ok(SimpleCommand {
            env: Vec::new(),
            argv: argv.to_vec(),
        }),
    }
}

/// `32768` -> `32K`, `4096` -> `4K`, `100` -> `100B`.
fn size(b: u64) -> String {
    if b >= 1024 * 1024 && b.is_multiple_of(1024 * 1024) {
        format!("{}M", b / (1024 * 1024))
    } else if b >= 1024 && b.is_multiple_of(1024) {
        format!("{}K", b / 1024)
    } else {
        format!("{b}B")
    }
}

/// The table rows for a counters file of the plugin: user-mode counts under
/// the names perf and cachegrind use where the meaning is the same, kernel
/// counts (system emulation only) prefixed with "kernel".
pub fn emulated_counters(file: &kfdo_record::CountersFile) -> Vec<Counter> {
    let m = &file.model;
    let l1i = format!("L1i misses (model {} {}-way)", size(m.l1i_size), m.l1i_ways);
    // At most 28 characters, the width of `kfdo compare`'s name column;
    // the line and page sizes are in the source's description.
    let itlb = format!("iTLB misses (model {}-entry)", m.itlb_entries);
    // The kernel maps its text with large pages, and the model does too: its rows say so,
    // since a 4 KiB-page figure for kernel code would be one the hardware never sees.
    let kernel_itlb = format!(
        "iTLB misses (model {}-entry, {} pages)",
        m.itlb_entries,
        size(m.itlb_kernel_page)
    );
    let rows = |d: &kfdo_record::DomainCounts, itlb: &str| {
        [
            ("instructions".to_string(), d.instructions),
            ("taken branches".to_string(), d.taken_branches),
            ("conditional branches".to_string(), d.conditional_branches),
            (l1i.clone(), d.l1i_misses),
            (itlb.to_string(), d.itlb_misses),
        ]
    };
    // 0: a counters file from before the plugin counted threads.
    let threads = Some(file.threads()).filter(|&n| n > 0);
    let counter = |name: String, v: u64| Counter {
        threads,
        ..Counter::new(name, v as f64, NAME)
    };
    let mut out: Vec<Counter> = rows(&file.total.user, &itlb)
        .into_iter()
        .map(|(name, v)| counter(name, v))
        .collect();
    if file.total.kernel.instructions > 0 {
        out.extend(
            rows(&file.total.kernel, &kernel_itlb)
                .into_iter()
                .map(|(name, v)| counter(format!("kernel {name}"), v)),
        );
    }
    out
}

/// The end of the source's sentence: what can be said of the determinism of `claim`'s
/// counts.
fn determinism_clause(claim: &Claim) -> String {
    match claim {
        Claim::Deterministic => {
            "deterministic (the same binary and input give the same numbers; every counted \
             program ran one thread)"
                .into()
        }
        Claim::NotDeterministic(variants) => {
            let who: Vec<String> = variants
                .iter()
                .map(|(name, threads, counts)| {
                    format!(
                        "'{name}' (not deterministic: {threads} threads, counted {counts} times)"
                    )
                })
                .collect();
            format!(
                "not deterministic for {}: a program that runs several threads executes more \
                 or less code from run to run as its threads interleave, so such a variant's \
                 rows give the median of its counts and the lowest and highest; only the \
                 single-threaded variants' counts are exact and repeatable",
                who.join(", ")
            )
        }
        Claim::Unknown => "deterministic for a program that runs one thread at a time (the \
                           same binary and input then give the same numbers), not for one \
                           that starts threads, whose interleaving changes the counts"
            .into(),
    }
}

impl Source for Emulated {
    fn name(&self) -> &'static str {
        NAME
    }
    fn describe(&self) -> String {
        self.description(&Claim::Unknown)
    }
    fn describe_counted(&self, counted: &[(&str, &[Counter])]) -> String {
        self.description(&determinism::claim(counted))
    }
    fn measure(&self, run: &CountedRun<'_>) -> Result<Vec<Counter>, CounterError> {
        let first = self.measure_once(run)?;
        if !determinism::threaded(&first) {
            return Ok(first);
        }
        // Threads make one count one draw among many: count again, and show the spread.
        let mut all = vec![first];
        for _ in 1..determinism::COUNTS_WHEN_THREADED {
            all.push(self.measure_once(run)?);
        }
        Ok(determinism::combine(&all))
    }
}

impl Emulated {
    /// The source's sentence, ending with what `claim` says of determinism.
    fn description(&self, claim: &Claim) -> String {
        let m = &self.cache;
        format!(
            "kfdo's QEMU plugin (kfdo-record, as `kfdo record --method emulated --counters`), one run \
             per variant ({} for a program that starts threads) under QEMU user mode (qemu-x86_64 or qemu-aarch64, as the program's ELF \
             header says), the program and the processes it forks: \
             instructions and taken / conditional branches are exact user-mode counts; L1i misses \
             ({} {}-way, {}-byte lines) and iTLB misses ({} entries, fully associative, {} pages \
             for user code, {} for kernel text) come from an LRU model, not this CPU; the model's \
             iTLB is a first level alone, with no second-level TLB behind it, so its misses are not \
             the page walks perf's iTLB-load-misses counts, and hot code spread over a few more \
             pages than its entries misses on nearly every page change; {}",
            determinism::COUNTS_WHEN_THREADED,
            size(m.l1i_size),
            m.l1i_ways,
            m.l1i_line,
            m.itlb_entries,
            size(m.itlb_page),
            size(m.itlb_kernel_page),
            determinism_clause(claim)
        )
    }

    /// One run under QEMU with the plugin.
    fn measure_once(&self, run: &CountedRun<'_>) -> Result<Vec<Counter>, CounterError> {
        // The template's own command, not the timed one: a caller may time a foreign
        // program under its emulator (`qemu-aarch64 -L ... {bin}`), which counted here
        // would be QEMU itself under qemu-x86_64; the template runs the program, which
        // this source puts under the QEMU its ELF header names. For every other variant
        // the two are the same command.
        let argv = match run.program {
            Some(slot) => run.protocol.shell.argv(&slot.command_with(&slot.path)),
            None => run.argv.clone(),
        };
        match (direct_command(&argv), run.program) {
            (Ok(cmd), _) => self.count_direct(run, &cmd),
            (Err(_), Some(slot)) => self.count_launched(run, slot),
            (Err(why), None) => Err(CounterError::Unavailable(why)),
        }
    }
}

impl Emulated {
    fn fail(run: &CountedRun<'_>, status: String, stderr: String) -> CounterError {
        CounterError::Failed {
            variant: run.variant.into(),
            source_name: NAME,
            command: run.argv.join(" "),
            status,
            stderr,
        }
    }

    fn interrupted(run: &CountedRun<'_>) -> CounterError {
        CounterError::Interrupted {
            variant: run.variant.into(),
            source_name: NAME,
        }
    }

    /// A program that exec'd another one was only partly counted.
    fn exec_error(run: &CountedRun<'_>, what: &str, stderr: String) -> CounterError {
        Emulated::fail(
            run,
            format!(
                "exec'd another program, which QEMU ran natively and the plugin did not count \
                 ({what}); the counts would be incomplete. Give the program that does the work \
                 as the command, or use --counters cachegrind"
            ),
            stderr,
        )
    }

    /// One program with arguments, run under QEMU directly.
    fn count_direct(
        &self,
        run: &CountedRun<'_>,
        cmd: &SimpleCommand,
    ) -> Result<Vec<Counter>, CounterError> {
        let dir = tempfile::tempdir()?;
        let json = dir.path().join("counters.json");
        // Only the counters are wanted: one sample per 2^62 taken branches
        // (none, in practice) with one record keeps the perf.data tiny.
        let mut cfg = kfdo_record::RecordConfig::new(&cmd.argv[0], dir.path().join("perf.data"))
            .args(cmd.argv[1..].iter().map(OsString::from))
            .period(1 << 62)
            .depth(1)
            .counters(&json);
        for (k, v) in &cmd.env {
            cfg = cfg.env(k, v);
        }
        cfg.cache = self.cache;
        cfg.samples_wanted = false;
        cfg.work_dir = Some(dir.path().to_path_buf());
        cfg.cwd = run.protocol.cwd.clone();
        for (k, v) in &run.protocol.env {
            cfg = cfg.env(k, v);
        }
        // Like the timed runs: no input, output discarded, stderr kept for errors.
        let mut err = tempfile::tempfile()?;
        cfg.stdio = StdioPlan {
            stdin: StdStream::Null,
            stdout: StdStream::Null,
            stderr: StdStream::file(err.try_clone()?),
        };
        let outcome = kfdo_record::record_user(&cfg);
        let stderr = runner::tail_of(&mut err, 2000)?;
        let outcome = outcome
            .map_err(|e| Emulated::fail(run, format!("could not be run: {e}"), stderr.clone()))?;
        if outcome.exit_code != 0 {
            let st = match outcome.signal {
                Some(s) => ExitStatus::from_raw(s),
                None => ExitStatus::from_raw((outcome.exit_code & 0xff) << 8),
            };
            if runner::ended_by_ctrl_c(&st) {
                return Err(Emulated::interrupted(run));
            }
            return Err(Emulated::fail(run, runner::describe_status(&st), stderr));
        }
        if let Some(w) = outcome.warnings.iter().find(|w| w.contains("exec call")) {
            return Err(Emulated::exec_error(run, w, stderr));
        }
        let file = outcome.counters.ok_or_else(|| CounterError::Parse {
            source_name: NAME,
            path: json.display().to_string(),
            reason: "kfdo-record returned no counters".into(),
        })?;
        Ok(emulated_counters(&file))
    }

    /// A command from a template: the shell runs natively, the program under QEMU
    /// wherever the template runs it, and the counts of every run are summed.
    fn count_launched(
        &self,
        run: &CountedRun<'_>,
        slot: &ProgramSlot,
    ) -> Result<Vec<Counter>, CounterError> {
        let dir = tempfile::tempdir()?;
        let launcher = Launcher::new(&slot.path, self.cache, None, Some(dir.path()))
            .map_err(|e| Emulated::fail(run, format!("could not be run: {e}"), String::new()))?;
        let argv = run.protocol.shell.argv(&slot.command_with(launcher.path()));
        let mut err = tempfile::tempfile()?;
        let status = run
            .protocol
            .command(&argv)?
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(err.try_clone()?)
            .status()?;
        let stderr = runner::tail_of(&mut err, 2000)?;
        if runner::ended_by_ctrl_c(&status) {
            return Err(Emulated::interrupted(run));
        }
        if !status.success() {
            return Err(Emulated::fail(
                run,
                runner::describe_status(&status),
                stderr,
            ));
        }
        let counts = launcher.counts().map_err(|e| {
            Emulated::fail(run, format!("could not be counted: {e}"), stderr.clone())
        })?;
        if counts.invocations == 0 {
            return Err(Emulated::fail(
                run,
                format!(
                    "never ran the program {} (the template has no `{}` the shell reached), so \
                     there is nothing to count",
                    slot.path.display(),
                    runner::PROGRAM_PLACEHOLDER
                ),
                stderr,
            ));
        }
        if counts.execs > 0 {
            let what = format!("{} exec call(s)", counts.execs);
            return Err(Emulated::exec_error(run, &what, stderr));
        }
        Ok(emulated_counters(&counts.file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(cmd: &str) -> Vec<String> {
        parse_simple_command(cmd).unwrap().argv
    }

    #[test]
    fn simple_commands_split_like_sh() {
        assert_eq!(
            words("./speedtest1  --size 5 --memdb"),
            ["./speedtest1", "--size", "5", "--memdb"]
        );
        assert_eq!(
            words(r#"exec ./a 'x y' "z w" a\ b --k=v"#),
            ["./a", "x y", "z w", "a b", "--k=v"]
        );
        let c = parse_simple_command("LC_ALL=C X= ./a A=1").unwrap();
        assert_eq!(
            c.env,
            [("LC_ALL".into(), "C".into()), ("X".into(), String::new())]
        );
        assert_eq!(c.argv, ["./a", "A=1"]);
        assert_eq!(words("'A=1' ./a"), ["A=1", "./a"]);
    }

    #[test]
    fn shell_syntax_is_refused_with_its_place() {
        for (cmd, what) in [
            ("./a | wc", "'|' at byte 4"),
            ("./a > out", "'>' at byte 4"),
            ("./a; ./b", "';' at byte 3"),
            ("./a && ./b", "'&' at byte 4"),
            ("./a $N", "'$' at byte 4"),
            ("./a *.txt", "'*' at byte 4"),
            ("./a \"$HOME\"", "'$' inside double quotes"),
            ("./a 'x", "unterminated ' quote"),
            ("X=1", "no program"),
            ("cd /tmp", "shell word 'cd'"),
        ] {
            let e = parse_simple_command(cmd).unwrap_err();
            assert!(e.contains(what), "{cmd}: {e}");
        }
        let e = direct_command(&["sh".into(), "-c".into(), "./a | wc".into()]).unwrap_err();
        assert!(
            e.contains("does not follow exec") && e.contains("cachegrind"),
            "{e}"
        );
        // --shell none: the argv as given.
        let c = direct_command(&["./a".into(), "1".into()]).unwrap();
        assert_eq!(c.argv, ["./a", "1"]);
    }

    #[test]
    fn rows_use_the_shared_names() {
        let mut file = kfdo_record::CountersFile {
            source: "kfdo-vlbr emulated counters".into(),
            model: kfdo_record::CacheModel::default(),
            total: Default::default(),
            processes: Vec::new(),
        };
        file.total.user.instructions = 1000;
        file.total.user.taken_branches = 100;
        file.total.user.l1i_misses = 7;
        let c = emulated_counters(&file);
        let names: Vec<&str> = c.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "instructions",
                "taken branches",
                "conditional branches",
                "L1i misses (model 32K 8-way)",
                "iTLB misses (model 64-entry)"
            ]
        );
        assert_eq!(c[0].value, 1000.0);
        assert!(c.iter().all(|x| x.source == "emulated"));
        file.total.kernel.instructions = 5;
        let with_kernel = emulated_counters(&file);
        assert_eq!(with_kernel[5].name, "kernel instructions");
        assert_eq!(
            with_kernel[9].name,
            "kernel iTLB misses (model 64-entry, 2M pages)"
        );
    }

    #[test]
    fn rows_carry_the_threads_and_the_sentence_claims_only_what_holds() {
        let mut file = kfdo_record::CountersFile {
            source: "kfdo-vlbr emulated counters".into(),
            model: kfdo_record::CacheModel::default(),
            total: Default::default(),
            processes: Vec::new(),
        };
        // A file from before threads were counted: unknown, no label.
        assert!(emulated_counters(&file).iter().all(|c| c.threads.is_none()));
        let process = |pid, threads| kfdo_record::emulated::counters::ProcessCounters {
            pid,
            threads,
            counts: Default::default(),
        };
        file.processes = vec![process(1, 1)];
        let one = emulated_counters(&file);
        assert!(one.iter().all(|c| c.threads == Some(1)));
        assert_eq!(one[0].determinism_label(), None);
        file.processes = vec![process(1, 5), process(2, 1)];
        let many = emulated_counters(&file);
        assert!(many.iter().all(|c| c.threads == Some(5)));
        assert_eq!(
            many[0].determinism_label().as_deref(),
            Some("not deterministic: 5 threads")
        );

        let src = Emulated {
            cache: kfdo_record::CacheModel::default(),
        };
        let exact = "deterministic (the same binary and input give the same numbers";
        assert!(!src.describe().contains(exact), "{}", src.describe());
        assert!(src.describe().contains("not for one that starts threads"));
        let single = src.describe_counted(&[("a", &one), ("b", &one)]);
        assert!(single.contains(exact), "{single}");
        let combined = determinism::combine(&[many.clone(), many.clone(), many]);
        let mixed = src.describe_counted(&[("a", &one), ("mt", &combined)]);
        assert!(!mixed.contains(exact), "{mixed}");
        assert!(
            mixed.contains("'mt' (not deterministic: 5 threads, counted 3 times)"),
            "{mixed}"
        );
    }

    /// A real run under QEMU (kfdo-testkit decides when qemu-x86_64 is missing): the
    /// counts are deterministic and the program's output does not leak.
    #[test]
    fn counts_a_real_program_deterministically() {
        if !kfdo_testkit::require_tools(&["qemu-x86_64"]) {
            return;
        }
        let src = Emulated::probe().unwrap();
        let protocol = runner::Protocol {
            shell: runner::Shell::None,
            ..runner::Protocol::new(0, runner::StopRule::Fixed(1))
        };
        let run = |argv: &[&str]| CountedRun {
            variant: "v",
            argv: argv.iter().map(|s| s.to_string()).collect(),
            program: None,
            protocol: &protocol,
        };
        let argv = ["sh", "-c", "LC_ALL=C exec /bin/echo 'counted run'"];
        let a = src.measure(&run(&argv)).unwrap();
        let b = src.measure(&run(&argv)).unwrap();
        assert_eq!(a, b);
        let ins = a.iter().find(|c| c.name == "instructions").unwrap().value;
        assert!(ins > 10_000.0, "{a:?}");
        let e = src
            .measure(&run(&["sh", "-c", "/bin/false"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("exited with status 1"), "{e}");
        let e = src
            .measure(&run(&["sh", "-c", "echo a | wc"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("'|' at byte 7"), "{e}");
    }

    /// A template with shell syntax is counted through the launcher: the counts of
    /// `{bin} a && {bin} bb | cat` are exactly those of its two runs, counted one by
    /// one the same way, and a run on its own matches the direct (no shell) count.
    #[test]
    fn a_template_with_shell_syntax_sums_every_run_of_the_program() {
        if !kfdo_testkit::require_tools(&["qemu-x86_64"]) {
            return;
        }
        let src = Emulated::probe().unwrap();
        let protocol = runner::Protocol::new(0, runner::StopRule::Fixed(1));
        let echo = std::path::Path::new("/bin/echo");
        let count = |template: &str| {
            let v = runner::Arm::from_template("v", template, echo);
            src.measure(&CountedRun::of(&v, &protocol))
        };
        let value = |c: &[Counter], name: &str| c.iter().find(|x| x.name == name).unwrap().value;
        let both = count("{bin} a && {bin} bb | cat >/dev/null").unwrap();
        let a = count("{bin} a >/dev/null").unwrap();
        let bb = count("{bin} bb | cat >/dev/null").unwrap();
        for name in ["instructions", "taken branches", "conditional branches"] {
            assert_eq!(
                value(&both, name),
                value(&a, name) + value(&bb, name),
                "{name}: {both:?} vs {a:?} + {bb:?}"
            );
        }
        assert!(value(&a, "instructions") > 10_000.0, "{a:?}");
        // Not run at all, or failing: errors that say so.
        let e = count("true && true").unwrap_err().to_string();
        assert!(e.contains("never ran the program /bin/echo"), "{e}");
        let e = count("{bin} a && false").unwrap_err().to_string();
        assert!(e.contains("exited with status 1"), "{e}");
    }

    /// A variant timed through a wrapper (as kfdo optimize times a cross build under
    /// `qemu-aarch64 ... {bin}`) is counted by its template: the program itself, not the
    /// wrapper (here `env`, which would exec echo: an error if it were counted).
    #[test]
    fn a_wrapped_timed_command_is_counted_by_its_template() {
        if !kfdo_testkit::require_tools(&["qemu-x86_64"]) {
            return;
        }
        let src = Emulated::probe().unwrap();
        let protocol = runner::Protocol::new(0, runner::StopRule::Fixed(1));
        let echo = std::path::Path::new("/bin/echo");
        let plain = runner::Arm::from_template("v", "{bin} a", echo);
        let wrapped = runner::Arm {
            command: "/usr/bin/env /bin/echo a".into(),
            ..plain.clone()
        };
        let a = src.measure(&CountedRun::of(&plain, &protocol)).unwrap();
        let b = src.measure(&CountedRun::of(&wrapped, &protocol)).unwrap();
        assert_eq!(a, b);
        // Counting the wrapper itself fails: its exec leaves QEMU, and the plugin's
        // capture with it.
        let bare = runner::Arm::new("v", "/usr/bin/env /bin/echo a");
        assert!(src.measure(&CountedRun::of(&bare, &protocol)).is_err());
    }
}
