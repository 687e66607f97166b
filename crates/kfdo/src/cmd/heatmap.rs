//! `kfdo heatmap`: time x address picture of the samples in one binary's
//! text, and its hot-text span.

use std::path::PathBuf;

use kfdo_bench::report::fmt_count;
use kfdo_heatmap::{self as heatmap, input::AddrSource, HeatmapRequest};

use crate::counts;
use crate::json_out::JsonArgs;
use crate::output::Global;

#[derive(Clone, Copy, clap::ValueEnum)]
enum Source {
    /// The sampled instruction pointers.
    Ip,
    /// The targets of the branches in each sample's branch stack.
    BranchTargets,
}

#[derive(clap::Args)]
#[command(
    after_help = "Writes PNG (the picture) and, beside it, SVG (the picture with axes, \
    function labels and a colour bar). Example:\n  perf record -e cpu-clock -o perf.data -- ./prog\n  \
    kfdo heatmap --binary ./prog perf.data -o heat.png --store kfdo-bench.db --label 'prog -O2'"
)]
pub struct Args {
    /// The binary (ELF program, or vmlinux) whose text is the y axis.
    #[arg(long, value_name = "BIN")]
    binary: PathBuf,
    /// perf.data recorded while the binary ran.
    #[arg(value_name = "PERF.DATA")]
    perf_data: PathBuf,
    /// Output PNG; the SVG goes beside it (same name, .svg).
    #[arg(long, short = 'o', value_name = "FILE.png", default_value = "heat.png")]
    output: PathBuf,
    #[arg(long, value_name = "N", default_value_t = 150)]
    time_buckets: usize,
    #[arg(long, value_name = "N", default_value_t = 180)]
    address_buckets: usize,
    /// Which addresses to plot.
    #[arg(long, value_enum, default_value = "ip")]
    source: Source,
    /// Fraction of samples the hot-text span must hold.
    #[arg(long, value_name = "F", default_value_t = 0.9)]
    hot_fraction: f64,
    /// Granule of the hot-text span in bytes (64: a cache line).
    #[arg(long, value_name = "BYTES", default_value_t = 64)]
    line_size: u64,
    /// Also add the heat map to this results store, for `kfdo report`.
    #[arg(long, value_name = "FILE.db")]
    store: Option<PathBuf>,
    /// Title of the heat map (default: the binary's file name).
    #[arg(long)]
    label: Option<String>,
    /// The summary (hot-text span, hottest functions, geometry) as JSON.
    #[command(flatten)]
    json: JsonArgs,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    let json = args.json.sink()?;
    refuse_overwriting_inputs(&args, json.user_file())?;
    let req = HeatmapRequest {
        time_buckets: args.time_buckets,
        address_buckets: args.address_buckets,
        source: match args.source {
            Source::Ip => AddrSource::Ip,
            Source::BranchTargets => AddrSource::BranchTargets,
        },
        hot_fraction: args.hot_fraction,
        line_size: args.line_size,
        store: args.store.clone(),
        label: args.label.clone(),
        json: json.path(),
        ..HeatmapRequest::new(&args.binary, &args.perf_data, &args.output)
    };
    let pb = g.progress(None, "reading");
    let done = heatmap::make(&req);
    pb.finish_and_clear();
    let done = done?;
    if let Some(db) = &args.store {
        g.info(format!("added the heat map to {}", db.display()));
    }
    let span = &done.span;
    let mut text = format!(
        "{}: {}, {}, {} [0x{:x}, 0x{:x}); hot text span ({:.0} %): {} bytes in {} lines of {} bytes, spread over 0x{:x}..0x{:x}",
        done.label,
        counts::recorded(done.samples_total),
        counts::in_binary(done.samples_in_binary, &args.binary),
        counts::in_text(done.samples_in_text, &args.binary),
        done.text_lo,
        done.text_hi,
        args.hot_fraction * 100.0,
        fmt_count(span.bytes as f64),
        span.lines,
        span.line_size,
        span.extent_lo,
        span.extent_hi
    );
    for f in done.functions.iter().take(5) {
        text.push_str(&format!(
            "\n  {:>6.2} %  {:>10} samples  0x{:x} {}",
            100.0 * f.samples as f64 / done.samples_in_text.max(1) as f64,
            counts::grouped(f.samples),
            f.addr,
            f.name
        ));
    }
    text.push('\n');
    json.text_summary(&text, g);
    json.print()?;
    g.info(format!(
        "wrote {} and {}",
        done.png.display(),
        done.svg.display()
    ));
    g.info(format!(
        "kfdo heatmap: next: {}",
        crate::next_view::heatmap(&done.svg, args.store.as_deref())
    ));
    Ok(0)
}

/// Refuses, before reading anything, an output (the picture, its SVG, the JSON, the
/// store it adds to) that is the binary or the recording.
fn refuse_overwriting_inputs(args: &Args, json: Option<&std::path::Path>) -> anyhow::Result<()> {
    use kfdo_outfile::Out;
    let svg = args.output.with_extension("svg");
    let mut outputs = vec![Out::new("-o", &args.output), Out::new("-o", &svg)];
    outputs.extend(json.map(|j| Out::new("--json-out", j)));
    outputs.extend(args.store.as_deref().map(|s| Out::new("--store", s)));
    let inputs: [&std::path::Path; 2] = [&args.binary, &args.perf_data];
    kfdo_outfile::refuse_overwriting_inputs(&outputs, &inputs)?;
    Ok(())
}
