//! `kfdo compare`: run commands interleaved, store every run, print the
//! verdict with statistics and counters.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use kfdo_bench::compare::{self, CompareEvent, CompareOutcome, CompareRequest};
use kfdo_bench::counters::Choice;
use kfdo_bench::report::{fmt_time, text};
use kfdo_bench::runner::{Plan, Shell, StopRule, Variant};

use crate::output::Global;

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  kfdo compare --name O0 ./speedtest1-O0 --name O2 ./speedtest1-O2 --runs 10\n  \
                  kfdo compare 'make -s bench' 'make -s bench PGO=1' --ci-target 1 --max-runs 40 --counters cachegrind\n\n\
                  Runs are interleaved (A B, B A, A B, ...) after the warm-up. Every finished run is committed to the \
                  store at once; Ctrl-C stops after keeping them (exit status 130). Run `kfdo report` for HTML/Markdown."
)]
pub struct Args {
    /// Commands to compare (run with `sh -c` unless --shell none); the first is the baseline.
    #[arg(required = true, value_name = "CMD")]
    commands: Vec<String>,
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
    /// Upper bound on timed runs per command with --ci-target.
    #[arg(long, value_name = "N", default_value_t = 30)]
    max_runs: usize,
    /// Lower bound on timed runs per command with --ci-target.
    #[arg(long, value_name = "N", default_value_t = 5)]
    min_runs: usize,
    /// Untimed runs of each command first (fills caches, wakes the CPU up).
    #[arg(long, short = 'w', value_name = "N", default_value_t = 1)]
    warmup: usize,
    /// Counter source: auto (hardware perf if supported, else cachegrind), perf, cachegrind, emulated (kfdo's QEMU plugin: exact instructions and branches, modelled L1i / iTLB misses, deterministic; the command must be one program with arguments), none.
    #[arg(long, value_name = "SOURCE", default_value = "auto")]
    counters: Choice,
    /// Results store (SQLite), appended to.
    #[arg(long, value_name = "FILE.db", default_value = "kfdo-bench.db")]
    store: PathBuf,
    /// Also write the verdict as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Shell that runs each command (`SHELL -c CMD`), or `none` to split on whitespace and exec directly.
    #[arg(long, value_name = "SHELL", default_value = "sh")]
    shell: String,
    /// Show the commands' standard output (discarded by default).
    #[arg(long)]
    show_output: bool,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
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
    let variants: Vec<Variant> = args
        .commands
        .iter()
        .enumerate()
        .map(|(i, c)| Variant {
            flags: args.flags.get(i).cloned(),
            ..Variant::new(args.names.get(i).unwrap_or(c), c)
        })
        .collect();
    let stop_rule = StopRule::from_options(args.runs, args.ci_target, args.min_runs, args.max_runs)
        .map_err(anyhow::Error::msg)?;
    let req = CompareRequest {
        variants,
        benchmark: args.benchmark.clone(),
        plan: Plan {
            shell: if args.shell == "none" {
                Shell::None
            } else {
                Shell::Shell(args.shell.clone())
            },
            show_output: args.show_output,
            ..Plan::new(args.warmup, stop_rule)
        },
        counters: args.counters,
        store: args.store.clone(),
        json: args.json.clone(),
    };

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        let pressed = AtomicBool::new(false);
        // A second Ctrl-C leaves at once; the store already holds every finished run.
        let _ = ctrlc::set_handler(move || {
            if pressed.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
            stop.store(true, Ordering::SeqCst);
        });
    }

    let pb = g.progress(None, "compare");
    let store = args.store.display().to_string();
    let outcome = compare::compare(&req, &stop, &mut |ev| match ev {
        CompareEvent::CounterNote(n) => g.info(format!("counters: {n}")),
        CompareEvent::Started {
            benchmark,
            variants,
            prior_runs,
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
    });
    pb.finish_and_clear();
    match outcome? {
        CompareOutcome::Interrupted {
            finished,
            while_counting: false,
            ..
        } => {
            eprintln!(
                "kfdo compare: interrupted; {finished} finished run(s) are kept in {store} (`kfdo report --store {store}` shows them)"
            );
            Ok(130)
        }
        CompareOutcome::Interrupted {
            while_counting: true,
            ..
        } => {
            eprintln!(
                "kfdo compare: interrupted while counting; the timed runs are kept in {store}"
            );
            Ok(130)
        }
        CompareOutcome::Complete { analysis, .. } => {
            print!("{}", text::summary(&analysis));
            for w in &analysis.warnings {
                g.info(format!("warning: {w}"));
            }
            if let Some(path) = &args.json {
                g.info(format!("wrote {}", path.display()));
            }
            Ok(0)
        }
    }
}
