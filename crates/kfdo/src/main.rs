//! The `kfdo` command: argument parsing and wiring only. Each subcommand lives in
//! `cmd/<name>.rs` and calls into the library crates, which do the work.
//!
//! # Layers
//!
//! Bottom first; each module uses only the layers below it (the `layering` test checks
//! them):
//!
//! 1. `output`: the global flags and how messages are printed.
//! 2. `counts` (the words for sample counts), `json_out` (where `--json` / `--json-out`
//!    go), `next` (each summary's next step) and `next_view` (the next step of the
//!    commands whose output is read as it is).
//! 3. `cmd`: one module per subcommand.
//!
//! Not checked: `main.rs` (it parses the arguments and calls `cmd`).

mod cmd;
mod counts;
mod json_out;
mod next;
mod next_view;
mod output;

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "kfdo",
    version,
    about = "Feedback-directed optimization: record, convert, build, judge"
)]
struct Cli {
    /// No progress bars or informational messages.
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Convert perf.data (or perf script text, unsymbolized counts, raw Parquet files) into
    /// an AutoFDO sample profile.
    Profile(cmd::profile::Args),
    /// Print any profile kfdo writes as LLVM sample-profile text.
    Show(cmd::show::Args),
    /// Merge AutoFDO sample profiles (weighted), as `llvm-profdata merge --sample`.
    Merge(cmd::merge::Args),
    /// Merge hosts' raw Parquet files (`profile --raw-out`) into one: by release, time
    /// window, with host caps and class weights.
    MergeRaw(cmd::merge_raw::Args),
    /// Raw Parquet files: canonical dump; split a recording into a simulated fleet.
    Raw(cmd::raw::Args),
    /// The sampler of every host: windows of perf, host files spooled and uploaded to
    /// an object store; `collect status` says what it did.
    Collect(cmd::collect::Args),
    /// Similarity of two sample profiles, as `llvm-profdata overlap --sample`.
    Overlap(cmd::overlap::Args),
    /// What changed between two profiles; with --binary, how stale OLD is for a new build.
    Diff(cmd::diff::Args),
    /// Record a branch-stack profile: hardware perf where it exists, emulated LBR where not.
    Record(cmd::record::Args),
    /// Say what this machine can record, and why not.
    Capabilities(cmd::capabilities::Args),
    /// Run commands A/B interleaved and judge them with statistics and counters.
    Compare(cmd::compare::Args),
    /// Write the HTML and Markdown report of stored comparisons.
    Report(cmd::report::Args),
    /// How far the emulated counters' changes predict the measured time's, over
    /// `kfdo optimize` outputs (programs, and kernels' native-time twins) or stores.
    CountersVsTime(cmd::counters_vs_time::Args),
    /// Draw a time x address heat map of samples in a binary's text.
    Heatmap(cmd::heatmap::Args),
    /// From a recipe: build, train, profile, rebuild and judge the variants; report.
    Optimize(cmd::optimize::Args),
}

fn main() {
    end_quietly_on_a_closed_pipe();
    let (args, old_json_spelling) =
        json_out::rewrite_old_json_spelling(std::env::args_os().collect());
    let cli = Cli::parse_from(&args);
    let global = output::Global { quiet: cli.quiet };
    if old_json_spelling {
        global.deprecated("--json FILE", "--json-out FILE");
    }
    if let Command::Profile(_) = &cli.command {
        for (old, new) in cmd::profile::old_spellings(&args[1..]) {
            global.deprecated(old, new);
        }
    }
    let result = match cli.command {
        Command::Profile(a) => cmd::profile::run(a, &global),
        Command::Show(a) => cmd::show::run(a, &global),
        Command::Merge(a) => cmd::merge::run(a, &global),
        Command::MergeRaw(a) => cmd::merge_raw::run(a, &global),
        Command::Collect(a) => cmd::collect::run(a, &global),
        Command::Raw(a) => cmd::raw::run(a, &global),
        Command::Overlap(a) => cmd::overlap::run(a, &global),
        Command::Diff(a) => cmd::diff::run(a, &global),
        Command::Record(a) => cmd::record::run(a, &global),
        Command::Capabilities(a) => cmd::capabilities::run(a, &global),
        Command::Compare(a) => cmd::compare::run(a, &global),
        Command::Report(a) => cmd::report::run(a, &global),
        Command::Heatmap(a) => cmd::heatmap::run(a, &global),
        Command::CountersVsTime(a) => cmd::counters_vs_time::run(a, &global),
        Command::Optimize(a) => cmd::optimize::run(a, &global),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("kfdo: error: {}", render_error(&e));
            std::process::exit(1);
        }
    }
}

/// `kfdo ... | head -1`: when the reader of stdout goes away, end as other Unix tools
/// do (killed by SIGPIPE, silently) instead of panicking in `println!` on EPIPE. Rust
/// ignores SIGPIPE at start-up; this restores the default. Child processes get the
/// default anyway (std resets it before exec), and kfdo writes to no other pipe.
fn end_quietly_on_a_closed_pipe() {
    // SAFETY: signal(2) with SIG_DFL installs no handler (no code runs in signal
    // context); it is called first thing in main, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// The error and its causes, joined by ": ", leaving out a cause whose text
/// the message already holds (our typed errors often quote their source).
fn render_error(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !msg.contains(&text) {
            if !msg.is_empty() {
                msg.push_str(": ");
            }
            msg.push_str(&text);
        }
    }
    msg
}
