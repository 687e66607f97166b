//! `kfdo raw`: tools for raw Parquet files: the canonical dump, and a simulated fleet
//! split from one recording.

use std::path::{Path, PathBuf};

use kfdo_rawfleet::split::{split, SplitOptions};

use crate::output::Global;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Print a raw file canonically (footer keys, schema, one line per row): equal
    /// dumps mean equal content, whoever wrote the Parquet bytes.
    Dump {
        #[arg(value_name = "FILE.parquet")]
        file: PathBuf,
    },
    /// Split one recording into N hosts' raw files (a simulated fleet for tests and
    /// benches), reading it once.
    Split(SplitArgs),
}

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("dir").required(true).args(["output", "out"])))]
struct SplitArgs {
    /// The profiled binary.
    #[arg(long, value_name = "BIN")]
    binary: PathBuf,
    /// The recording to split.
    #[arg(long, value_name = "FILE")]
    perf_data: PathBuf,
    /// How many hosts (consecutive parts of the samples, in file order).
    #[arg(long, value_name = "N")]
    hosts: usize,
    /// Seed of the hosts' classes, count factors and two-file hosts.
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,
    /// Directory to write PREFIX-NNNN.parquet (and PREFIX-NNNN-2.parquet) into.
    #[arg(long, short = 'o', value_name = "DIR")]
    output: Option<PathBuf>,
    /// The old spelling of -o/--output.
    #[arg(long, value_name = "DIR", hide = true, conflicts_with = "output")]
    out: Option<PathBuf>,
    #[arg(long, value_name = "PREFIX", default_value = "host")]
    host_prefix: String,
    /// Host classes drawn from, comma-separated (default: none, class "").
    #[arg(long, value_name = "C,...", value_delimiter = ',')]
    classes: Vec<String>,
    /// No count factors: merging the files gives exactly the whole recording's counts.
    #[arg(long)]
    no_perturb: bool,
    /// Samples without branch stacks: count each IP once.
    #[arg(long)]
    ip_only: bool,
    /// Print what was written as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args, g: &Global) -> anyhow::Result<i32> {
    match a.command {
        Command::Dump { file } => {
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            kfdo_rawfleet::dump::dump(&file, &mut lock)?;
        }
        Command::Split(mut s) => {
            if let Some(old) = s.out.take() {
                g.deprecated("raw split --out DIR", "raw split -o DIR");
                s.output = Some(old);
            }
            let Some(out) = s.output.clone() else {
                anyhow::bail!(
                    "raw split needs -o DIR, the directory to write the hosts' files into"
                );
            };
            refuse_overwriting_inputs(&s, &out)?;
            let started = std::time::Instant::now();
            let opts = SplitOptions {
                binary: s.binary,
                perf_data: s.perf_data,
                hosts: s.hosts,
                seed: s.seed,
                out: out.clone(),
                prefix: s.host_prefix,
                classes: s.classes,
                perturb: !s.no_perturb,
                ip_only: s.ip_only,
            };
            let r = split(&opts)?;
            g.info(format!(
                "kfdo raw split: {} samples -> {} file(s) in {} ({} host(s) without samples \
                 of the binary) in {:.2}s",
                r.samples,
                r.files,
                out.display(),
                r.empty_hosts,
                started.elapsed().as_secs_f64()
            ));
            if s.json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            }
        }
    }
    Ok(0)
}

/// Refuses, before reading anything, a split whose files would replace the binary or
/// the recording (`PREFIX-NNNN.parquet` and `PREFIX-NNNN-2.parquet` in the directory).
fn refuse_overwriting_inputs(s: &SplitArgs, out: &Path) -> anyhow::Result<()> {
    let files: Vec<PathBuf> = (0..s.hosts)
        .flat_map(|h| {
            ["", "-2"].map(|second| out.join(format!("{}-{h:04}{second}.parquet", s.host_prefix)))
        })
        .collect();
    let outputs: Vec<kfdo_outfile::Out> = std::iter::once(out)
        .chain(files.iter().map(PathBuf::as_path))
        .map(|p| kfdo_outfile::Out::new("-o", p))
        .collect();
    let inputs: [&Path; 2] = [&s.binary, &s.perf_data];
    kfdo_outfile::refuse_overwriting_inputs(&outputs, &inputs)?;
    Ok(())
}
