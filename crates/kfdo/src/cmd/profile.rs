//! `kfdo profile`: recordings -> AutoFDO sample profile (LLVM's, or GCC's gcov format;
//! or the unsymbolized counts, BOLT's fdata, Propeller's cc and ld profiles, one host's
//! raw Parquet file). Options in, `kfdo_convert::convert` called, its outcome printed.

use crate::counts;
use crate::next;
use crate::output::Global;
use kfdo_convert::{Compiler, Converted, Input, Output, OutputFormat, ProfileRequest};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The spellings of the unsymbolized text before it had one name ("raw" named the
/// fleet's Parquet files too): they still work, with a note naming the new one.
const OLD_SPELLINGS: [(&str, &str); 2] = [
    ("--raw", "--unsymbolized"),
    ("--raw-in", "--unsymbolized-in"),
];

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["perf_data", "perf_script", "unsymbolized_in", "from_raw"])))]
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
    /// Unsymbolized counts written by `kfdo profile --unsymbolized` or `llvm-profgen
    /// --skip-symbolization`.
    #[arg(long, alias = "raw-in", value_name = "FILE", num_args = 1..)]
    unsymbolized_in: Vec<PathBuf>,
    /// Raw Parquet files (`--raw-out`, `kfdo merge-raw`) of BIN's build-id; the recorder
    /// `ip` converts as --ip-only.
    #[arg(long, value_name = "FILE.parquet", num_args = 1..)]
    from_raw: Vec<PathBuf>,
    /// Where to write the profile (--format propeller: the prefix of OUT_cc_profile.txt
    /// and OUT_ld_profile.txt).
    #[arg(long, short, value_name = "OUT", required_unless_present = "raw_out")]
    output: Option<PathBuf>,
    /// Instead of a profile, write the branch counts as one host's raw Parquet file
    /// (for `kfdo merge-raw`): keyed by BIN's build-id, with host, time window, samples
    /// and recorder (lbr, brs, brbe, emulated; ip with --ip-only).
    #[arg(long, value_name = "FILE.parquet", conflicts_with_all = ["output", "unsymbolized", "format"])]
    raw_out: Option<PathBuf>,
    /// --raw-out: the host column (default: this machine's hostname).
    #[arg(long, value_name = "NAME", requires = "raw_out")]
    host: Option<String>,
    /// --raw-out: the host class, for `kfdo merge-raw --weight CLASS=W` (default: "").
    #[arg(long, value_name = "CLASS", requires = "raw_out", default_value = "")]
    host_class: String,
    /// Output format: an AutoFDO sample profile (LLVM text, extbinary; GCC's gcov),
    /// BOLT's fdata, or Propeller's profiles (BIN built with -fbasic-block-address-map).
    /// Default: the sample profile BIN's compiler reads (its DWARF producer): gcov for
    /// a binary GCC built, else extbinary.
    #[arg(long, value_enum)]
    format: Option<OutFormat>,
    /// --format gcov: the GCC major release that will read it (11 or 12; default: the
    /// `gcc` on PATH). The file's version must match that compiler's.
    #[arg(long, value_name = "N")]
    gcc_version: Option<u32>,
    /// Write the unsymbolized counts (llvm-profgen's `--skip-symbolization` text,
    /// mergeable) instead of a sample profile.
    #[arg(long, alias = "raw")]
    unsymbolized: bool,
    /// BIN is a vmlinux: count samples in `[kernel.kallsyms]`.
    #[arg(long)]
    kernel: bool,
    /// With --kernel: a kernel module (`.ko` with debug info) to profile too, merged into
    /// the one profile the kernel build reads (repeat for several).
    #[arg(long, value_name = "KO")]
    module: Vec<PathBuf>,
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
    /// Worker threads (default: one per core; the RAYON_NUM_THREADS environment variable
    /// sets the default).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum OutFormat {
    Text,
    Extbinary,
    /// BOLT's fdata (llvm-bolt -data=), as perf2bolt writes it.
    Bolt,
    /// Propeller's cc profile (clang -fbasic-block-sections=list=) and ld profile (lld
    /// --symbol-ordering-file), from the binary's BB address map.
    Propeller,
    /// GCC's AutoFDO profile (gcc -fauto-profile=) for --gcc-version N.
    Gcov,
}

/// The deprecation notes for the old spellings in a `kfdo profile` command line
/// (`args` without the program name): (old, new) for each one used.
pub fn old_spellings(args: &[OsString]) -> Vec<(&'static str, &'static str)> {
    let mut used = Vec::new();
    for (old, new) in OLD_SPELLINGS {
        let given = args.iter().any(|a| {
            a.to_str().is_some_and(|s| {
                s == old || s.strip_prefix(old).is_some_and(|r| r.starts_with('='))
            })
        });
        if given {
            used.push((old, new));
        }
    }
    used
}

pub fn run(a: Args, g: &Global) -> anyhow::Result<i32> {
    check_outputs(&a)?;
    if let Some(n) = a.threads {
        // The global pool is built on first use, so nothing has started it yet.
        rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(n))
            .build_global()
            .map_err(|e| anyhow::anyhow!("--threads {n}: {e}"))?;
    }
    let inputs: Vec<Input> = a
        .perf_data
        .iter()
        .cloned()
        .map(Input::PerfData)
        .chain(a.perf_script.iter().cloned().map(Input::PerfScript))
        .chain(a.unsymbolized_in.iter().cloned().map(Input::Unsymbolized))
        .chain(a.from_raw.iter().cloned().map(Input::Parquet))
        .collect();
    let output = a.output.clone().unwrap_or_default();
    let built_by = kfdo_convert::built_by(&a.binary);
    let req = ProfileRequest {
        format: if a.unsymbolized {
            OutputFormat::Unsymbolized
        } else {
            match format(&a, built_by) {
                OutFormat::Text => OutputFormat::Text,
                OutFormat::Extbinary => OutputFormat::Extbinary,
                OutFormat::Bolt => OutputFormat::Bolt,
                OutFormat::Propeller => OutputFormat::Propeller,
                OutFormat::Gcov => OutputFormat::Gcov,
            }
        },
        gcc_version: a.gcc_version,
        kernel: a.kernel,
        ip_only: a.ip_only,
        pids: a.pid.clone(),
        binary_name: a.binary_name.clone(),
        modules: a.module.clone(),
        ..ProfileRequest::new(&a.binary, inputs, &output)
    };
    let target = match &a.raw_out {
        Some(path) => Output::RawParquet(kfdo_convert::RawOut {
            path: path.clone(),
            host: host(&a)?,
            host_class: a.host_class.clone(),
        }),
        None => Output::Profile,
    };
    let spinner = g.progress(None, "reading");
    let converted = kfdo_convert::convert(&req, &target, &mut |p| {
        spinner.set_message(format!("reading {}", p.display()))
    });
    spinner.finish_and_clear();
    match converted? {
        Converted::Profile(summary) => print_profile(&a, &req, &summary, built_by, g),
        Converted::RawParquet(o) => print_raw_out(&a, &o, g),
    }
}

/// What a profile conversion read and wrote, its next step, and `--json`.
fn print_profile(
    a: &Args,
    req: &ProfileRequest,
    summary: &kfdo_convert::ProfileOutcome,
    built_by: Option<Compiler>,
    g: &Global,
) -> anyhow::Result<i32> {
    let output = &req.output;
    if let Some(b) = &summary.bolt {
        g.info(format!(
            "kfdo profile: {} ({} with branch stacks, {} LBR records), {} -> {} records \
             of {} functions -> {} (bolt) in {:.2}s; traces: {}, {} not explained by the \
             functions' blocks, {} leaving the binary",
            counts::recorded(b.samples),
            b.samples_with_branches,
            b.lbr_entries,
            counts::in_binary(b.samples_in_binary, &a.binary),
            b.records,
            summary.functions,
            output.display(),
            summary.seconds,
            b.traces,
            b.invalid_traces,
            b.long_range_traces
        ));
        return finish(a, req, summary, built_by, g);
    }
    if let Some(p) = &summary.propeller {
        g.info(format!(
            "kfdo profile: {}, {} -> {} of {} mapped functions hot, {} hot blocks, \
             {} functions split; ext-TSP score {:.0} -> {:.0} ({:+.1} %) -> {} and {} in {:.2}s",
            recorded(summary),
            counts::in_binary(summary.samples_in_binary(), &a.binary),
            p.hot_functions,
            p.mapped_functions,
            p.hot_blocks,
            p.split_functions,
            p.ext_tsp_score_before,
            p.ext_tsp_score_after,
            100.0 * (p.ext_tsp_score_after / p.ext_tsp_score_before.max(f64::MIN_POSITIVE) - 1.0),
            p.cc_profile,
            p.ld_profile,
            summary.seconds
        ));
        if p.ambiguous_functions > 0 {
            g.info(format!(
                "  {} hot functions share their name with another function and keep their \
                 layout (build with -funique-internal-linkage-names to tell them apart)",
                p.ambiguous_functions
            ));
        }
        return finish(a, req, summary, built_by, g);
    }
    g.info(format!(
        "kfdo profile: {}, {} -> {} ranges, {} branches{} -> {} ({}) in {:.2}s",
        recorded(summary),
        counts::in_binary(summary.samples_in_binary(), &a.binary),
        summary.ranges,
        summary.branches,
        if a.unsymbolized {
            String::new()
        } else {
            format!(", {} functions", summary.functions)
        },
        output.display(),
        summary.format,
        summary.seconds
    ));
    for m in &summary.modules {
        g.info(format!(
            "  module {}: {} functions, {} samples",
            m.module, m.functions, m.total_samples
        ));
    }
    if let Some(gcc) = &summary.gcc {
        g.info(format!("  for {gcc}"));
    }
    finish(a, req, summary, built_by, g)
}

/// What reads the profile (and, for a sample profile of a binary without
/// discriminators, what is lost), then the JSON summary with the same `next`.
fn finish(
    a: &Args,
    req: &ProfileRequest,
    summary: &kfdo_convert::ProfileOutcome,
    built_by: Option<Compiler>,
    g: &Global,
) -> anyhow::Result<i32> {
    // A gcov file reads only in the GCC release it was written for.
    let compiler = match &summary.gcc {
        Some(gcc) => Some(Compiler::Gcc(gcc.major)),
        None => built_by,
    };
    let next = next::consume(&next::Written {
        format: req.format,
        kernel: req.kernel,
        binary: &a.binary,
        output: &req.output,
        propeller: summary
            .propeller
            .as_ref()
            .map(|p| (p.cc_profile.as_str(), p.ld_profile.as_str())),
        compiler,
    });
    g.info(format!("kfdo profile: next: {next}"));
    let llvm = matches!(req.format, OutputFormat::Extbinary | OutputFormat::Text);
    if llvm && summary.locations_with_discriminators == Some(0) {
        g.info(format!(
            "kfdo profile: note: {}",
            next::discriminators_note(&a.binary)
        ));
    }
    if a.json {
        crate::json_out::print_summary(&crate::json_out::WithNext {
            outcome: summary,
            next: &next,
        })?;
    }
    Ok(0)
}

/// `--format`, else the sample profile the compiler that built the binary reads: GCC
/// cannot read LLVM's formats (it refuses them: "AutoFDO profile magic number does
/// not match"), nor clang GCC's.
fn format(a: &Args, built_by: Option<Compiler>) -> OutFormat {
    a.format.unwrap_or(match built_by {
        Some(Compiler::Gcc(_)) => OutFormat::Gcov,
        _ => OutFormat::Extbinary,
    })
}

/// Before reading anything (a large recording takes minutes): every output can be
/// written, and none is one of the inputs (`-o p.data` for `--perf-data p.data` would
/// replace the recording with its profile).
fn check_outputs(a: &Args) -> anyhow::Result<()> {
    let mut outputs: Vec<(&str, PathBuf)> = Vec::new();
    if let Some(o) = &a.output {
        match a.format {
            Some(OutFormat::Propeller) if !a.unsymbolized => {
                let (cc, ld) = kfdo_convert::propeller_paths(o);
                outputs.extend([("-o", cc), ("-o", ld)]);
            }
            _ => outputs.push(("-o", o.clone())),
        }
    }
    if let Some(r) = &a.raw_out {
        outputs.push(("--raw-out", r.clone()));
    }
    let outputs: Vec<kfdo_outfile::Out> = outputs
        .iter()
        .map(|(opt, p)| kfdo_outfile::Out::new(opt, p))
        .collect();
    let inputs: Vec<&Path> = std::iter::once(&a.binary)
        .chain(&a.perf_data)
        .chain(&a.perf_script)
        .chain(&a.unsymbolized_in)
        .chain(&a.from_raw)
        .chain(&a.module)
        .map(PathBuf::as_path)
        .collect();
    kfdo_outfile::check_outputs(&outputs, &inputs)?;
    Ok(())
}

/// `--raw-out --host`, else this machine's hostname.
fn host(a: &Args) -> anyhow::Result<String> {
    match &a.host {
        Some(h) => Ok(h.clone()),
        None => this_hostname().ok_or_else(|| {
            anyhow::anyhow!("cannot tell this machine's hostname: give --host NAME")
        }),
    }
}

/// `--raw-out`: what one host's raw Parquet file holds, its next step, and `--json`.
fn print_raw_out(a: &Args, o: &kfdo_convert::RawOutOutcome, g: &Global) -> anyhow::Result<i32> {
    let path = a.raw_out.as_deref().unwrap_or(Path::new(&o.output));
    g.info(format!(
        "kfdo profile: {}, {} (build-id {}, recorder {}) on host {} -> {} rows -> {} in {:.2}s",
        counts::recorded(o.samples_recorded),
        counts::in_binary(u64::try_from(o.samples).unwrap_or(0), &a.binary),
        if o.build_id.is_empty() {
            "none"
        } else {
            &o.build_id
        },
        o.recorder,
        o.host,
        o.rows,
        o.output,
        o.seconds
    ));
    let mut flags: Vec<String> = Vec::new();
    if a.kernel {
        flags.push("--kernel".into());
    }
    let next = next::from_raw_command(&flags, &a.binary, path);
    g.info(format!(
        "kfdo profile: next: {next} (or `kfdo merge-raw` with other hosts' files)"
    ));
    if a.json {
        crate::json_out::print_summary(&crate::json_out::WithNext {
            outcome: o,
            next: &next,
        })?;
    }
    Ok(0)
}

fn this_hostname() -> Option<String> {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .map(|s| s.trim().to_string())
        .find(|s| !s.is_empty())
}

/// "N samples recorded (all processes)": the recordings' samples, of every process
/// (unsymbolized and raw Parquet inputs hold only the binary's: then their count).
fn recorded(summary: &kfdo_convert::ProfileOutcome) -> String {
    counts::recorded(summary.inputs.iter().map(|s| s.samples).sum())
}

#[cfg(test)]
mod tests {
    use super::old_spellings;
    use std::ffi::OsString;

    fn found(words: &[&str]) -> Vec<(&'static str, &'static str)> {
        let args: Vec<OsString> = words.iter().map(OsString::from).collect();
        old_spellings(&args)
    }

    /// Each old spelling is found once, joined by `=` or not; the raw Parquet flags,
    /// which keep their names, are not mistaken for them.
    #[test]
    fn old_spellings_are_found_by_their_whole_name() {
        assert_eq!(
            found(&["profile", "--raw", "--raw-in", "a", "b", "-o", "o"]),
            [
                ("--raw", "--unsymbolized"),
                ("--raw-in", "--unsymbolized-in")
            ]
        );
        assert_eq!(
            found(&["profile", "--raw-in=a", "--raw", "-o", "o"]),
            [
                ("--raw", "--unsymbolized"),
                ("--raw-in", "--unsymbolized-in")
            ]
        );
        assert_eq!(
            found(&[
                "profile",
                "--raw-out",
                "h.parquet",
                "--from-raw",
                "m.parquet"
            ]),
            []
        );
        assert_eq!(
            found(&["profile", "--unsymbolized", "--unsymbolized-in", "a"]),
            []
        );
    }
}
