//! `kfdo compare`: run commands interleaved, store every run, print the
//! verdict with statistics and counters. With `--tag`, measure the running kernel
//! under a tag; with `--baseline-tag A --tag B`, judge two stored tags (kernels
//! measured in separate boots).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;

use kfdo_bench::compare::{self, CompareEvent, CompareOutcome, CompareRequest};
use kfdo_bench::counters::Choice;
use kfdo_bench::kept;
use kfdo_bench::pooling::Pooling;
use kfdo_bench::report::{fmt_time, text};
use kfdo_bench::runner::{Arm, Protocol, Shell, StopRule};
use kfdo_bench::tagged::{self, TagCompareRequest, TagRequest};

use crate::json_out::{JsonArgs, JsonSink};
use crate::output::Global;

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  kfdo compare --name O0 ./speedtest1-O0 --name O2 ./speedtest1-O2 --runs 10\n  \
                  kfdo compare 'make -s bench' 'make -s bench PGO=1' --ci-target 1 --max-runs 40 --counters cachegrind\n\n\
                  Runs are interleaved (A B, B A, A B, ...) after the warm-up. Every finished run is committed to the \
                  store at once; Ctrl-C stops after keeping them (exit status 130). Run `kfdo report` for HTML/Markdown.\n\n\
                  Kernels, one boot each (they cannot be interleaved):\n  \
                  kfdo compare --tag A --store kernels.db -- ./workload      # booted into kernel A\n  \
                  kfdo compare --tag B --store kernels.db -- ./workload      # after rebooting into B\n  \
                  kfdo compare --store kernels.db --baseline-tag A --tag B   # runs nothing"
)]
pub struct Args {
    /// Commands to compare (run with `sh -c` unless --shell none); the first is the baseline.
    /// With --tag, the words after `--` are the one command.
    #[arg(required_unless_present_any = ["tag", "baseline_tag"], value_name = "CMD")]
    commands: Vec<String>,
    /// Measure the running kernel: run the command as the variant NAME, storing `uname -r`
    /// and the kernel's build-id with the runs. Again after a reboot into the same kernel
    /// adds runs. With --baseline-tag and no command: the tag compared with the baseline.
    #[arg(long, value_name = "NAME")]
    tag: Option<String>,
    /// Compare the stored tag --tag with this stored tag (from separate boots, not
    /// interleaved); runs nothing. --benchmark picks the benchmark if several have both.
    #[arg(long, value_name = "NAME")]
    baseline_tag: Option<String>,
    /// With --tag: add runs to a tag recorded on another kernel instead of refusing.
    #[arg(long, requires = "tag")]
    force_tag: bool,
    /// Name of each command, in order (default: the command itself).
    #[arg(long = "name", short = 'n', value_name = "NAME")]
    names: Vec<String>,
    /// How each command was built (compiler flags ...), in order; shown in reports.
    #[arg(long = "flags", value_name = "FLAGS", allow_hyphen_values = true)]
    flags: Vec<String>,
    /// Name of the benchmark these runs belong to (default: the first command's program name).
    /// Runs of the same benchmark and variant names in the store are pooled.
    #[arg(long, value_name = "NAME")]
    benchmark: Option<String>,
    /// Timed runs of each command (default 10 unless --ci-target).
    #[arg(long, short = 'r', value_name = "N", conflicts_with = "ci_target")]
    runs: Option<usize>,
    /// Adaptive: run until the 95 % interval of every ratio to the baseline is within ±PCT percent.
    #[arg(long, value_name = "PCT")]
    ci_target: Option<f64>,
    /// Upper bound on timed runs per command with --ci-target [default: 30].
    #[arg(long, value_name = "N")]
    max_runs: Option<usize>,
    /// Lower bound on timed runs per command with --ci-target [default: 5].
    #[arg(long, value_name = "N")]
    min_runs: Option<usize>,
    /// Untimed runs of each command first (fills caches, wakes the CPU up).
    #[arg(long, short = 'w', value_name = "N", default_value_t = 1)]
    warmup: usize,
    /// Counter source: auto (hardware perf if supported, else cachegrind), perf, cachegrind, emulated (kfdo's QEMU plugin: exact instructions and branches, modelled L1i / iTLB misses, deterministic for a single-threaded program; one that starts threads is counted 3 times and labelled "not deterministic: N threads" with the spread; the command must be one program with arguments), none.
    #[arg(long, value_name = "SOURCE", default_value = "auto")]
    counters: Choice,
    /// Results store (SQLite), appended to.
    #[arg(long, value_name = "FILE.db", default_value = "kfdo-bench.db")]
    store: PathBuf,
    #[command(flatten)]
    json: JsonArgs,
    /// Shell that runs each command (`SHELL -c CMD`), or `none` to split on whitespace and exec directly.
    #[arg(long, value_name = "SHELL", default_value = "sh")]
    shell: String,
    /// Show the commands' standard output (discarded by default).
    #[arg(long)]
    show_output: bool,
    /// Pool this run with every earlier run of the same names, even of another program
    /// (by default a command whose program changed starts a new series).
    #[arg(long, conflicts_with_all = ["fresh", "tag", "baseline_tag"])]
    pool: bool,
    /// Ignore every earlier run and counter in the store: the verdict from this run only.
    #[arg(long, conflicts_with_all = ["tag", "baseline_tag"])]
    fresh: bool,
}

/// What the options ask for.
enum Mode {
    /// Commands interleaved (no tag).
    Commands,
    /// The running kernel under a tag.
    RecordTag { tag: String, command: String },
    /// Two stored tags judged.
    CompareTags { baseline: String, tag: String },
}

fn mode(args: &Args) -> anyhow::Result<Mode> {
    let store = args.store.display();
    if let (Some(t), false) = (&args.tag, args.names.is_empty()) {
        // --name names variants, and a tag is its own variant's name.
        anyhow::bail!(
            "with --tag the variant is named by the tag ('{t}'); name the benchmark with \
             --benchmark NAME, not --name"
        );
    }
    match (&args.baseline_tag, &args.tag) {
        (None, None) => Ok(Mode::Commands),
        (Some(a), None) => anyhow::bail!(
            "--baseline-tag {a} needs --tag NAME, the stored tag to compare with it: \
             `kfdo compare --store {store} --baseline-tag {a} --tag NAME`"
        ),
        (Some(a), Some(b)) => {
            if !args.commands.is_empty() {
                anyhow::bail!(
                    "--baseline-tag compares tags already in results store {store} and runs \
                     nothing, but a command was given; record each tag first with `--tag NAME -- \
                     CMD` (`kfdo compare --tag NAME --store {store} -- CMD`, booted into its \
                     kernel), then `kfdo compare --store {store} --baseline-tag {a} --tag {b}`"
                );
            }
            if args.force_tag {
                anyhow::bail!("--force-tag applies when recording a tag (`--tag NAME -- CMD`), not with --baseline-tag");
            }
            Ok(Mode::CompareTags {
                baseline: a.clone(),
                tag: b.clone(),
            })
        }
        (None, Some(t)) => {
            if args.commands.is_empty() {
                anyhow::bail!(
                    "--tag {t} measures the running kernel with a command: `kfdo compare --tag \
                     {t} --store {store} -- CMD`; to compare stored tags, add --baseline-tag NAME"
                );
            }
            if args.flags.len() > 1 {
                anyhow::bail!("--tag measures one command: give --flags once");
            }
            // `-- ./workload --size 5` is one command, as ssh joins its words.
            Ok(Mode::RecordTag {
                tag: t.clone(),
                command: args.commands.join(" "),
            })
        }
    }
}

fn protocol(args: &Args) -> anyhow::Result<Protocol> {
    let stop_rule = StopRule::from_options(args.runs, args.ci_target, args.min_runs, args.max_runs)
        .map_err(anyhow::Error::msg)?;
    Ok(Protocol {
        shell: if args.shell == "none" {
            Shell::None
        } else {
            Shell::Shell(args.shell.clone())
        },
        show_output: args.show_output,
        ..Protocol::new(args.warmup, stop_rule)
    })
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    let json = args.json.sink()?;
    if let Some(file) = json.user_file() {
        // The store is read (earlier runs are pooled) and appended to: the verdict must
        // not replace it. And a verdict that cannot be written is found out before the
        // runs, not after them.
        let out = [kfdo_outfile::Out::new("--json-out", file)];
        kfdo_outfile::refuse_overwriting_inputs(&out, &[&args.store])?;
        kfdo_outfile::check_writable("--json-out", file)?;
    }
    let mode = mode(&args)?;
    refuse_writing_over_command_files(&args, &mode, json.user_file())?;
    match mode {
        Mode::Commands => run_commands(args, &json, g),
        Mode::RecordTag { tag, command } => record_tag(&args, tag, command, &json, g),
        Mode::CompareTags { baseline, tag } => compare_tags(&args, baseline, tag, &json, g),
    }
}

/// Neither the verdict nor the store may land on a file the compared commands run or
/// name (`--json-out prog './prog 1000'` would replace the benchmarked program).
fn refuse_writing_over_command_files(
    args: &Args,
    mode: &Mode,
    json: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    use kfdo_outfile::{CommandLine, Out};
    let commands: Vec<(CommandLine, Option<&std::path::Path>)> = match mode {
        Mode::Commands => args
            .commands
            .iter()
            .map(|c| (CommandLine::Shell(c), None))
            .collect(),
        Mode::RecordTag { command, .. } => vec![(CommandLine::Shell(command), None)],
        Mode::CompareTags { .. } => return Ok(()),
    };
    let mut outputs = vec![Out::new("--store", &args.store)];
    outputs.extend(json.map(|f| Out::new("--json-out", f)));
    kfdo_outfile::refuse_overwriting_command_files(&outputs, &commands)?;
    Ok(())
}

fn compare_tags(
    args: &Args,
    baseline: String,
    tag: String,
    json: &JsonSink,
    g: &Global,
) -> anyhow::Result<i32> {
    let done = tagged::compare_tags(&TagCompareRequest {
        store: args.store.clone(),
        baseline,
        tag,
        benchmark: args.benchmark.clone(),
        json: json.path(),
    })?;
    json.text_summary(&done.summary(), g);
    for w in &done.analysis.warnings {
        g.info(format!("warning: {w}"));
    }
    if let Some(path) = json.user_file() {
        g.info(format!("wrote {}", path.display()));
    }
    g.info(next_step(&args.store));
    json.print()?;
    Ok(0)
}

fn record_tag(
    args: &Args,
    tag: String,
    command: String,
    json: &JsonSink,
    g: &Global,
) -> anyhow::Result<i32> {
    let req = TagRequest {
        tag,
        command,
        flags: args.flags.first().cloned(),
        benchmark: args.benchmark.clone(),
        protocol: protocol(args)?,
        counters: args.counters,
        store: args.store.clone(),
        json: json.path(),
        force: args.force_tag,
    };
    let (stop, session) = stop_on_ctrl_c(args.store.clone());
    let pb = g.progress(None, "compare");
    let store = args.store.display().to_string();
    let done = tagged::record_tag(&req, &stop, &mut progress(g, &pb, &store, &session));
    pb.finish_and_clear();
    let done = done?;
    g.info(format!(
        "tag '{}' of benchmark '{}': kernel {}{}",
        req.tag,
        done.benchmark,
        done.kernel,
        match done.earlier_sessions {
            0 => String::new(),
            n => format!(" (runs added to {n} earlier session(s) of the tag)"),
        }
    ));
    finish(done.outcome, args, json, g)
}

fn run_commands(args: Args, json: &JsonSink, g: &Global) -> anyhow::Result<i32> {
    if args.names.len() > args.commands.len() {
        anyhow::bail!(
            "{} --name given for {} command(s); give one name per command, in order",
            args.names.len(),
            args.commands.len()
        );
    }
    if args.flags.len() > args.commands.len() {
        anyhow::bail!(
            "{} --flags given for {} command(s)",
            args.flags.len(),
            args.commands.len()
        );
    }
    let arms: Vec<Arm> = args
        .commands
        .iter()
        .enumerate()
        .map(|(i, c)| Arm {
            flags: args.flags.get(i).cloned(),
            ..Arm::new(args.names.get(i).unwrap_or(c), c)
        })
        .collect();
    let req = CompareRequest {
        arms,
        benchmark: args.benchmark.clone(),
        protocol: protocol(&args)?,
        counters: args.counters,
        store: args.store.clone(),
        json: json.path(),
    };
    let (stop, session) = stop_on_ctrl_c(args.store.clone());
    let pb = g.progress(None, "compare");
    let store = args.store.display().to_string();
    let pooling = match (args.pool, args.fresh) {
        (true, _) => Pooling::Pool,
        (_, true) => Pooling::Fresh,
        _ => Pooling::NewSeries,
    };
    let outcome = compare::compare_pooled(
        &req,
        pooling,
        &stop,
        &mut progress(g, &pb, &store, &session),
    );
    pb.finish_and_clear();
    finish(outcome?, &args, json, g)
}

/// A stop flag set by Ctrl-C, and the session it stops (set when the comparison has
/// started one); a second Ctrl-C leaves at once, marking the session interrupted (the
/// store already holds every finished run).
fn stop_on_ctrl_c(store: PathBuf) -> (Arc<AtomicBool>, Arc<AtomicI64>) {
    let stop = Arc::new(AtomicBool::new(false));
    let session = Arc::new(AtomicI64::new(0));
    let (flag, current) = (stop.clone(), session.clone());
    let pressed = AtomicBool::new(false);
    let _ = ctrlc::set_handler(move || {
        if pressed.swap(true, Ordering::SeqCst) {
            match current.load(Ordering::SeqCst) {
                0 => eprintln!("kfdo compare: stopped at once by a second Ctrl-C, before any run"),
                id => eprintln!("kfdo compare: {}", kept::abandon(&store, id)),
            }
            std::process::exit(130);
        }
        flag.store(true, Ordering::SeqCst);
    });
    (stop, session)
}

/// What a running comparison shows: lines on stderr, the rest on the spinner; without
/// a spinner (stderr is not a terminal: a log, `2>&1 | tee`), a plain line per finished
/// run, at most one a second, so a long comparison is seen to go on.
fn progress<'a>(
    g: &'a Global,
    pb: &'a indicatif::ProgressBar,
    store: &'a str,
    session: &'a AtomicI64,
) -> impl FnMut(CompareEvent<'_>) + 'a {
    let mut plain = (pb.is_hidden() && !g.quiet).then(|| PlainLines::new(1.0));
    move |ev| {
        if let CompareEvent::Started { session: id, .. } = ev {
            session.store(id, Ordering::SeqCst);
        }
        if let (Some(p), Some(line)) = (&mut plain, ev.progress_line()) {
            p.print(line);
        }
        show(g, pb, store, ev)
    }
}

/// Progress lines for a log: the first of each phase at once, then at most one per
/// `every_s` seconds (a line per run of a 1 ms command would drown the log).
struct PlainLines {
    every: std::time::Duration,
    last: Option<(std::time::Instant, &'static str)>,
}

impl PlainLines {
    fn new(every_s: f64) -> PlainLines {
        PlainLines {
            every: std::time::Duration::from_secs_f64(every_s),
            last: None,
        }
    }

    fn print(&mut self, (phase, line): (&'static str, String)) {
        if self
            .last
            .is_some_and(|(t, p)| p == phase && t.elapsed() < self.every)
        {
            return;
        }
        self.last = Some((std::time::Instant::now(), phase));
        eprintln!("{line}");
    }
}

fn show(g: &Global, pb: &indicatif::ProgressBar, store: &str, ev: CompareEvent<'_>) {
    match ev {
        CompareEvent::CounterNote(n) => g.info(format!("counters: {n}")),
        // Loud even with --quiet: the verdict is not on the runs it was before.
        CompareEvent::SeriesChanged(change) => eprintln!("kfdo compare: {change}"),
        CompareEvent::StoreUpgraded { runs } => g.info(format!(
            "kfdo compare: results store {store} upgraded: runs now record the program they \
             ran; its {runs} earlier run(s) did not, so they form a series of their own"
        )),
        CompareEvent::Started {
            benchmark,
            variants,
            prior_runs,
            ..
        } => g.info(format!(
            "kfdo compare: benchmark '{benchmark}', {variants} variant(s), store {store}{}",
            if prior_runs > 0 {
                format!(" ({prior_runs} earlier runs pooled)")
            } else {
                String::new()
            }
        )),
        CompareEvent::Warmup { variant, index } => {
            pb.set_message(format!("warm-up {} of '{variant}'", index + 1));
            pb.tick();
        }
        CompareEvent::Run { variant, run } => {
            pb.set_message(format!(
                "run {} of '{variant}': {}",
                run.index + 1,
                fmt_time(run.wall_s)
            ));
            pb.tick();
        }
        CompareEvent::Round {
            worst_half_width_pct,
        } => pb.set_message(format!("interval ±{worst_half_width_pct:.2} %")),
        CompareEvent::Counting { variant, source } => {
            pb.finish_and_clear();
            g.info(format!(
                "counting '{variant}' with {source}{}",
                if source == "cachegrind" {
                    " (one run, 20-50x slower than native; --counters none skips it)"
                } else {
                    ""
                }
            ))
        }
    }
}

/// Prints how a run comparison ended; its exit status.
fn finish(
    outcome: CompareOutcome,
    args: &Args,
    json: &JsonSink,
    g: &Global,
) -> anyhow::Result<i32> {
    let store = args.store.display();
    match outcome {
        CompareOutcome::Interrupted(kept) => {
            eprintln!("kfdo compare: {kept}; `kfdo report --store {store}` shows them");
            Ok(130)
        }
        CompareOutcome::Complete {
            analysis,
            counters_from,
            ..
        } => {
            let mut text = text::summary(&analysis);
            for origin in &counters_from {
                text.push_str(&format!("  ({origin})\n"));
            }
            json.text_summary(&text, g);
            for w in &analysis.warnings {
                g.info(format!("warning: {w}"));
            }
            if let Some(path) = json.user_file() {
                g.info(format!("wrote {}", path.display()));
            }
            g.info(next_step(&args.store));
            json.print()?;
            Ok(0)
        }
    }
}

/// The step after a verdict: the report of the store it was added to (every command
/// ends with the next one).
fn next_step(store: &std::path::Path) -> String {
    format!(
        "kfdo compare: next: kfdo report --store {} (the verdict with its figures, as \
         HTML and Markdown, into kfdo-report/)",
        shell_words::quote(&store.to_string_lossy())
    )
}
