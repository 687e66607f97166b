//! `kfdo heatmap`: time x address picture of the samples in one binary's
//! text, and its hot-text span.

use std::path::PathBuf;

use kfdo_bench::heatmap::{self, input, Grid};
use kfdo_bench::report::fmt_count;
use kfdo_bench::store::Store;

use super::report::make_readable;
use crate::output::{AtomicOutput, Global};

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
    /// Write the summary (hot-text span, hottest functions, geometry) as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    if args.time_buckets == 0 || args.address_buckets == 0 {
        anyhow::bail!("--time-buckets and --address-buckets must be at least 1");
    }
    if !(args.hot_fraction > 0.0 && args.hot_fraction <= 1.0) {
        anyhow::bail!(
            "--hot-fraction {}: give a fraction in (0, 1], e.g. 0.9",
            args.hot_fraction
        );
    }
    let source = match args.source {
        Source::Ip => input::AddrSource::Ip,
        Source::BranchTargets => input::AddrSource::BranchTargets,
    };
    let pb = g.progress(None, "reading");
    let inp = input::read(&args.perf_data, &args.binary, source)?;
    pb.finish_and_clear();

    let grid = Grid::build(
        &inp.points,
        inp.text_lo,
        inp.text_hi,
        args.time_buckets,
        args.address_buckets,
    );
    let geo = heatmap::geometry(&grid);
    let png = heatmap::render_png(&grid, &geo)?;
    let span = heatmap::hot_text_span(
        inp.points.iter().map(|p| (p.addr, 1)),
        args.line_size,
        args.hot_fraction,
    );
    let label = args.label.clone().unwrap_or_else(|| {
        args.binary
            .file_name()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| args.binary.display().to_string())
    });
    let svg = heatmap::render_svg(
        &grid,
        &geo,
        &png,
        &label,
        &inp.functions,
        inp.samples_in_text,
    );

    let top: Vec<_> = inp.functions.iter().take(20).collect();
    let summary = serde_json::json!({
        "binary": args.binary.display().to_string(),
        "perf_data": args.perf_data.display().to_string(),
        "build_id": inp.build_id,
        "kernel": inp.kernel,
        "source": match args.source { Source::Ip => "ip", Source::BranchTargets => "branch-targets" },
        "text_lo": inp.text_lo,
        "text_hi": inp.text_hi,
        "samples_total": inp.samples_total,
        "samples_in_text": inp.samples_in_text,
        "hot_text_bytes": span.bytes,
        "hot_text_span": span,
        "time_ns": [grid.t0, grid.t1],
        "time_buckets": grid.time_buckets,
        "address_buckets": grid.addr_buckets,
        "geometry": geo,
        "functions": top,
    });

    let mut out = AtomicOutput::create(&args.output)?;
    std::io::Write::write_all(out.file(), &png)?;
    out.commit()?;
    make_readable(&args.output);
    let svg_path = args.output.with_extension("svg");
    let mut out = AtomicOutput::create(&svg_path)?;
    std::io::Write::write_all(out.file(), svg.as_bytes())?;
    out.commit()?;
    make_readable(&svg_path);
    if let Some(path) = &args.json {
        let mut out = AtomicOutput::create(path)?;
        serde_json::to_writer_pretty(out.file(), &summary)?;
        out.commit()?;
        make_readable(path);
    }
    if let Some(db) = &args.store {
        let store = Store::open(db)?;
        store.add_heatmap(
            &label,
            &args.binary.display().to_string(),
            &png,
            &svg,
            &summary,
        )?;
        g.info(format!("added the heat map to {}", db.display()));
    }

    println!(
        "{}: {} of {} samples in text [0x{:x}, 0x{:x}); hot text span ({:.0} %): {} bytes in {} lines of {} bytes, spread over 0x{:x}..0x{:x}",
        label,
        fmt_count(inp.samples_in_text as f64),
        fmt_count(inp.samples_total as f64),
        inp.text_lo,
        inp.text_hi,
        args.hot_fraction * 100.0,
        fmt_count(span.bytes as f64),
        span.lines,
        span.line_size,
        span.extent_lo,
        span.extent_hi
    );
    for f in inp.functions.iter().take(5) {
        println!(
            "  {:>6.2} %  {:>8}  0x{:x} {}",
            100.0 * f.samples as f64 / inp.samples_in_text.max(1) as f64,
            f.samples,
            f.addr,
            f.name
        );
    }
    g.info(format!(
        "wrote {} and {}",
        args.output.display(),
        svg_path.display()
    ));
    Ok(0)
}
