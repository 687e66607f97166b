//! `kfdo profile`: recordings -> AutoFDO sample profile (or the raw aggregate).

use crate::output::{AtomicOutput, Global};
use anyhow::{bail, Context};
use kfdo_afdo::builder::{build_profile, Functions, Mode};
use kfdo_afdo::Format;
use kfdo_aggregate::collect::{
    collect_perf_data, collect_perf_script, CollectOptions, CollectStats, SampleMode,
};
use kfdo_aggregate::target::TargetBinary;
use kfdo_aggregate::{CodeMap, RawProfile};
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["perf_data", "perf_script", "raw_in"])))]
pub struct Args {
    /// The profiled binary (for --kernel: the vmlinux), with DWARF debug info.
    #[arg(long, value_name = "BIN")]
    binary: PathBuf,
    /// perf.data files (several are merged; counts add).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    perf_data: Vec<PathBuf>,
    /// `perf script -F ip,brstack [--show-mmap-events]` text files.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    perf_script: Vec<PathBuf>,
    /// Raw profiles written by `kfdo profile --raw` or `llvm-profgen --skip-symbolization`.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    raw_in: Vec<PathBuf>,
    /// Where to write the profile.
    #[arg(long, short, value_name = "OUT")]
    output: PathBuf,
    /// Output format of the sample profile.
    #[arg(long, value_enum, default_value_t = OutFormat::Extbinary)]
    format: OutFormat,
    /// Write the unsymbolized raw aggregate (mergeable) instead of a sample profile.
    #[arg(long)]
    raw: bool,
    /// BIN is a vmlinux: count samples in `[kernel.kallsyms]`.
    #[arg(long)]
    kernel: bool,
    /// Samples without branch stacks (e.g. `perf record -e cpu-clock`): each IP counts once.
    #[arg(long)]
    ip_only: bool,
    /// Only samples of these processes.
    #[arg(long, value_name = "PID", num_args = 1..)]
    pid: Vec<u32>,
    /// The file name the binary ran under, when it differs from BIN's.
    #[arg(long, value_name = "NAME")]
    binary_name: Option<String>,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum OutFormat {
    Text,
    Extbinary,
}

#[derive(serde::Serialize)]
struct Summary {
    binary: String,
    output: String,
    format: &'static str,
    inputs: Vec<CollectStats>,
    ranges: usize,
    branches: usize,
    functions: usize,
    total_samples: u64,
    build: Option<kfdo_afdo::builder::BuildStats>,
    seconds: f64,
}

pub fn run(a: Args, g: &Global) -> anyhow::Result<i32> {
    let started = Instant::now();
    let bin = kfdo_elf::Binary::open(&a.binary)?;
    if a.kernel && !bin.is_kernel() {
        bail!(
            "{}: --kernel was given but this is not a vmlinux (no _text/_stext at a kernel address); \
             pass the uncompressed vmlinux with debug info, not a bzImage or a module",
            a.binary.display()
        );
    }
    // Fail before reading any input if the result could not be symbolized.
    let sym = if a.raw {
        None
    } else {
        Some(kfdo_elf::Symbolizer::new(&bin)?)
    };
    let code = kfdo_elf::Code::new(&bin)?;
    let codemap = CodeMap::from_code(&code);
    let target = TargetBinary::new(&bin, a.binary_name.as_deref(), a.kernel);
    let opts = CollectOptions {
        mode: if a.ip_only {
            SampleMode::IpOnly
        } else {
            SampleMode::Lbr
        },
        pids: a.pid.clone(),
    };

    let spinner = g.progress(None, "reading");
    let mut raw = RawProfile::default();
    let mut inputs = Vec::new();
    for p in &a.perf_data {
        spinner.set_message(format!("reading {}", p.display()));
        let (r, s) = collect_perf_data(p, &target, &codemap, &opts)?;
        raw.merge(r);
        inputs.push(s);
    }
    for p in &a.perf_script {
        spinner.set_message(format!("reading {}", p.display()));
        let (r, s) = collect_perf_script(p, &target, &codemap, &opts)?;
        raw.merge(r);
        inputs.push(s);
    }
    for p in &a.raw_in {
        let r = RawProfile::read_text(p, bin.preferred_base())?;
        raw.merge(r);
    }
    spinner.finish_and_clear();
    if raw.is_empty() {
        bail!(
            "no samples: the inputs hold no range or branch counts for {}",
            a.binary.display()
        );
    }

    let mut out = AtomicOutput::create(&a.output)?;
    let mut summary = Summary {
        binary: a.binary.display().to_string(),
        output: a.output.display().to_string(),
        format: if a.raw {
            "raw"
        } else {
            match a.format {
                OutFormat::Text => "text",
                OutFormat::Extbinary => "extbinary",
            }
        },
        inputs,
        ranges: raw.ranges.len(),
        branches: raw.branches.len(),
        functions: 0,
        total_samples: 0,
        build: None,
        seconds: 0.0,
    };
    if a.raw {
        raw.write_text(out.file(), bin.preferred_base())
            .with_context(|| format!("cannot write {}", a.output.display()))?;
    } else {
        let sym = sym.expect("symbolizer opened when not --raw");
        let functions = Functions::new(
            sym.function_ranges()
                .iter()
                .map(|f| (f.start, f.end, &*f.name, f.is_func_entry)),
        );
        let mode = if a.ip_only { Mode::IpOnly } else { Mode::Lbr };
        let (profile, stats) = build_profile(&raw, &code, &sym, &functions, mode);
        if profile.is_empty() {
            bail!(
                "{}: the samples hit {} instructions, none with line info: was it built with -g?",
                a.binary.display(),
                stats.instructions
            );
        }
        let fmt = match a.format {
            OutFormat::Text => Format::Text,
            OutFormat::Extbinary => Format::ExtBinary,
        };
        kfdo_afdo::write_profile(&profile, fmt, std::io::BufWriter::new(out.file()))
            .with_context(|| format!("cannot write {}", a.output.display()))?;
        summary.functions = profile.len();
        summary.total_samples = profile.total();
        summary.build = Some(stats);
    }
    out.commit()?;
    summary.seconds = started.elapsed().as_secs_f64();

    let samples: u64 = summary.inputs.iter().map(|s| s.samples_in_binary).sum();
    g.info(format!(
        "kfdo profile: {} samples in {} -> {} ranges, {} branches{} -> {} ({}) in {:.2}s",
        samples,
        a.binary.display(),
        summary.ranges,
        summary.branches,
        if a.raw {
            String::new()
        } else {
            format!(", {} functions", summary.functions)
        },
        a.output.display(),
        summary.format,
        summary.seconds
    ));
    if a.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    }
    Ok(0)
}
