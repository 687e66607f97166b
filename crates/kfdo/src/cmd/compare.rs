//! `kfdo compare`: run commands interleaved, store every run, print the
//! verdict with statistics and counters.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context;
use kfdo_bench::analysis::{self, BenchmarkAnalysis};
use kfdo_bench::counters::{self, Choice};
use kfdo_bench::report::{fmt_counter_cell, fmt_p, fmt_pct, fmt_speed, fmt_time};
use kfdo_bench::runner::{self, Ending, Event, Plan, RunError, Shell, StopRule, Variant};
use kfdo_bench::{env, stats, store::Store};

use crate::output::{AtomicOutput, Global};

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

fn default_benchmark(cmd: &str) -> String {
    let first = cmd
        .split_whitespace()
        .find(|w| !w.contains('='))
        .unwrap_or("benchmark");
    std::path::Path::new(first)
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| first.to_string())
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
            name: args.names.get(i).cloned().unwrap_or_else(|| c.clone()),
            command: c.clone(),
            flags: args.flags.get(i).cloned(),
        })
        .collect();
    for (i, v) in variants.iter().enumerate() {
        if variants[..i].iter().any(|w| w.name == v.name) {
            anyhow::bail!(
                "two commands are named '{}'; names must differ (--name)",
                v.name
            );
        }
        if v.command.trim().is_empty() {
            anyhow::bail!("command {} ('{}') is empty", i + 1, v.name);
        }
    }
    let stop_rule = match (args.runs, args.ci_target) {
        (_, Some(pct)) => {
            if !(pct > 0.0) {
                anyhow::bail!("--ci-target {pct}: give a positive percentage, e.g. --ci-target 1");
            }
            if args.max_runs < 2 {
                anyhow::bail!(
                    "--max-runs {}: need at least 2 runs for an interval",
                    args.max_runs
                );
            }
            StopRule::Adaptive {
                target_pct: pct,
                min_runs: args.min_runs.clamp(2, args.max_runs),
                max_runs: args.max_runs,
            }
        }
        (Some(0), None) => anyhow::bail!("--runs 0: need at least one timed run"),
        (Some(n), None) => StopRule::Fixed(n),
        (None, None) => StopRule::Fixed(10),
    };
    let plan = Plan {
        warmup: args.warmup,
        stop: stop_rule,
        shell: if args.shell == "none" {
            Shell::None
        } else {
            Shell::Shell(args.shell.clone())
        },
        show_output: args.show_output,
    };
    let benchmark = args
        .benchmark
        .clone()
        .unwrap_or_else(|| default_benchmark(&variants[0].command));

    // Pick the counter source up front, so a bad choice fails before any run.
    let (source, mut notes) = counters::select(args.counters)?;
    for n in &notes {
        g.info(format!("counters: {n}"));
    }

    let store = Store::open(&args.store)?;
    let environment = env::capture(env!("CARGO_PKG_VERSION"));
    let setup = env::setup_warnings(&environment);
    let settings = serde_json::json!({
        "plan": &plan,
        "counters": format!("{:?}", args.counters),
        "variants": &variants,
    });
    let session = store.begin_session(&benchmark, &environment, &settings)?;
    let ids: Vec<i64> = variants
        .iter()
        .map(|v| store.variant(&benchmark, v))
        .collect::<Result<_, _>>()?;
    let prior: Vec<Vec<f64>> = ids
        .iter()
        .map(|&id| store.wall_times(id))
        .collect::<Result<_, _>>()?;
    let prior_n: usize = prior.iter().map(|p| p.len()).sum();
    g.info(format!(
        "kfdo compare: benchmark '{benchmark}', {} variant(s), store {}{}",
        variants.len(),
        args.store.display(),
        if prior_n > 0 {
            format!(" ({prior_n} earlier runs pooled)")
        } else {
            String::new()
        }
    ));
    notes.extend(setup.iter().cloned());
    store.set_notes(session, &notes)?;

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
    let mut done = vec![0usize; variants.len()];
    let mut store_error: Option<anyhow::Error> = None;
    let cpu0 = env::cpu_times();
    let (u0, s0) = runner::children_cpu();
    let t0 = std::time::Instant::now();
    let result = runner::run(&variants, &plan, &prior, &stop, |ev| {
        match ev {
            Event::Warmup { variant, index } => {
                pb.set_message(format!(
                    "warm-up {} of '{}'",
                    index + 1,
                    variants[variant].name
                ));
                pb.tick();
            }
            Event::Run(r) => {
                if let Err(e) = store.add_run(session, ids[r.variant], r) {
                    let msg = e.to_string();
                    store_error = Some(e.into());
                    return Err(msg);
                }
                done[r.variant] += 1;
                pb.set_message(format!(
                    "run {} of '{}': {}",
                    r.index + 1,
                    variants[r.variant].name,
                    fmt_time(r.wall_s)
                ));
                pb.tick();
            }
            Event::Round { half_width_pct, .. } => {
                let worst = half_width_pct
                    .iter()
                    .skip(if half_width_pct.len() > 1 { 1 } else { 0 })
                    .cloned()
                    .fold(0.0, f64::max);
                pb.set_message(format!("interval ±{worst:.2} %"));
            }
        }
        Ok(())
    });
    let wall = t0.elapsed().as_secs_f64();
    let (u1, s1) = runner::children_cpu();
    pb.finish_and_clear();
    let finished: usize = done.iter().sum();

    if let (Some(a), Some(b)) = (cpu0, env::cpu_times()) {
        if let Some(w) = env::other_load_warning(
            b.busy_s - a.busy_s,
            (u1 - u0) + (s1 - s0),
            wall,
            env::logical_cpus(),
        ) {
            notes.push(w);
        }
    }

    let ending = match result {
        Ok(e) => e,
        Err(e) => {
            store.set_notes(session, &notes)?;
            store.finish_session(session, "failed")?;
            if let Some(se) = store_error {
                return Err(se.context("compare stopped: the results store could not be written"));
            }
            let kept = format!(
                "{finished} finished run(s) are kept in {}; `kfdo report --store {}` shows them",
                args.store.display(),
                args.store.display()
            );
            return Err(match e {
                RunError::Failed { .. } | RunError::Spawn { .. } => {
                    anyhow::anyhow!("{e}\n({kept})")
                }
                other => anyhow::Error::new(other).context(kept),
            });
        }
    };

    match &ending {
        Ending::Interrupted => {
            store.set_notes(session, &notes)?;
            store.finish_session(session, "interrupted")?;
            eprintln!(
                "kfdo compare: interrupted; {finished} finished run(s) are kept in {} (`kfdo report --store {}` shows them)",
                args.store.display(),
                args.store.display()
            );
            return Ok(130);
        }
        Ending::TargetMissed { half_width_pct } => notes.push(format!(
            "too few runs: the ±{:.2} % target was not reached in {} runs per variant (±{:.2} % now); \
             raise --max-runs, or quiet the machine",
            args.ci_target.unwrap_or(0.0),
            args.max_runs,
            half_width_pct
        )),
        Ending::Done | Ending::TargetReached => {}
    }
    store.set_notes(session, &notes)?;

    // Counters: one extra run per variant under the counter.
    if let Some(src) = &source {
        store.add_counter_source(session, src.name(), &src.describe())?;
        for (i, v) in variants.iter().enumerate() {
            if stop.load(Ordering::SeqCst) {
                store.finish_session(session, "interrupted")?;
                eprintln!(
                    "kfdo compare: interrupted while counting; the timed runs are kept in {}",
                    args.store.display()
                );
                return Ok(130);
            }
            g.info(format!(
                "counting '{}' with {}{}",
                v.name,
                src.name(),
                if src.name() == "cachegrind" {
                    " (one run, 20-50x slower than native; --counters none skips it)"
                } else {
                    ""
                }
            ));
            match src.measure(&v.name, &plan.shell.argv(&v.command)) {
                Ok(cs) => store.add_counters(session, ids[i], &cs)?,
                Err(e) => {
                    store.finish_session(session, "failed")?;
                    return Err(anyhow::Error::new(e).context(format!(
                        "counters failed; the timed runs are kept in {}",
                        args.store.display()
                    )));
                }
            }
        }
    }
    store.finish_session(session, "complete")?;

    // The verdict, from everything stored for this benchmark.
    let contents = store.load()?;
    let bench = contents
        .benchmarks
        .iter()
        .find(|b| b.name == benchmark)
        .context("the benchmark just stored is missing from the store")?;
    let mut analysis = analysis::analyze_benchmark(bench, stats::BOOTSTRAP_RESAMPLES);
    // Show only this session's variants, baseline first, in the given order.
    let order: Vec<usize> = variants
        .iter()
        .filter_map(|v| analysis.variants.iter().position(|a| a.name == v.name))
        .collect();
    if order.first() != Some(&0) {
        // The stored baseline is another variant: compare against ours.
        let picked: Vec<_> = order
            .iter()
            .map(|&i| analysis.variants[i].clone())
            .collect();
        analysis.variants = picked;
        analysis.baseline = variants[0].name.clone();
        let base = analysis.variants[0].wall_s.clone();
        analysis.variants[0].vs_baseline = None;
        for v in analysis.variants.iter_mut().skip(1) {
            v.vs_baseline = stats::compare_pair(&base, &v.wall_s, stats::BOOTSTRAP_RESAMPLES);
        }
    }
    print_summary(&analysis);
    for w in &analysis.warnings {
        g.info(format!("warning: {w}"));
    }
    if let Some(path) = &args.json {
        let mut out = AtomicOutput::create(path)?;
        let doc = serde_json::json!({
            "store": args.store.display().to_string(),
            "session": session,
            "ending": ending,
            "benchmark": analysis,
        });
        serde_json::to_writer_pretty(out.file(), &doc)?;
        out.commit()?;
        super::report::make_readable(path);
        g.info(format!("wrote {}", path.display()));
    }
    Ok(0)
}

fn print_summary(a: &BenchmarkAnalysis) {
    let width = a
        .variants
        .iter()
        .map(|v| v.name.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 40);
    println!("benchmark '{}' (baseline '{}')", a.name, a.baseline);
    for v in &a.variants {
        let Some(s) = &v.wall else {
            println!("  {:width$}  no runs", v.name);
            continue;
        };
        print!(
            "  {:width$}  {:>10} ± {:<10} median {:>10}  CV {:>5.1} %  {:>3} runs",
            v.name,
            fmt_time(s.mean),
            fmt_time(s.stddev),
            fmt_time(s.median),
            s.cv_pct,
            s.n
        );
        if let Some(c) = &v.vs_baseline {
            print!(
                "  time {:.4} [{:.4}, {:.4}] {:>8}  p={}{:<2}  {}",
                c.ratio.estimate,
                c.ratio.lo,
                c.ratio.hi,
                fmt_pct(c.change_pct()),
                c.welch.map(|w| fmt_p(w.p)).unwrap_or_else(|| "–".into()),
                c.mark,
                if c.significant {
                    fmt_speed(c.ratio.estimate)
                } else {
                    "no significant difference".into()
                }
            );
        }
        println!();
    }
    if !a.counters.is_empty() {
        print!("  {:28} {:12}", "counter", "source");
        for v in &a.variants {
            print!(" {:>24}", truncate(&v.name, 24));
        }
        println!();
        for row in &a.counters {
            print!("  {:28} {:12}", row.name, row.source);
            let base = row.values.first().copied().flatten();
            for (i, val) in row.values.iter().enumerate() {
                print!(" {:>24}", fmt_counter_cell(i, base, *val));
            }
            println!();
        }
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).chain(std::iter::once('…')).collect()
    }
}
