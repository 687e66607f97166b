//! `kfdo heatmap` as one typed call: read the samples of a binary out of a perf.data,
//! draw the picture (PNG, and an SVG with axes and labels beside it), measure the hot
//! text span, write the files whole or not at all, and add the map to a results store.

use std::path::{Path, PathBuf};

use crate::frame::{frame_png, plot_origin};
use crate::grid::{encode_png, geometry, render_plot, Geometry, Grid};
use crate::input::{self, AddrSource, InputError};
use crate::points::HotFunction;
use crate::span::{hot_text_span, HotSpan};
use crate::svg::render_svg;
use kfdo_bench::store::{Store, StoreError};

#[derive(Debug, Clone)]
pub struct HeatmapRequest {
    /// The binary (ELF program, or vmlinux) whose text is the y axis.
    pub binary: PathBuf,
    pub perf_data: PathBuf,
    /// The PNG; the SVG goes beside it (same name, .svg).
    pub output: PathBuf,
    pub time_buckets: usize,
    pub address_buckets: usize,
    pub source: AddrSource,
    /// Fraction of samples the hot-text span must hold.
    pub hot_fraction: f64,
    /// Granule of the hot-text span in bytes (64: a cache line).
    pub line_size: u64,
    /// Also add the heat map to this results store, for `kfdo report`.
    pub store: Option<PathBuf>,
    /// Title (default: the binary's file name).
    pub label: Option<String>,
    /// Also write the summary (span, hottest functions, geometry) as JSON here.
    pub json: Option<PathBuf>,
}

impl HeatmapRequest {
    /// The defaults of `kfdo heatmap`.
    pub fn new(binary: &Path, perf_data: &Path, output: &Path) -> HeatmapRequest {
        HeatmapRequest {
            binary: binary.to_path_buf(),
            perf_data: perf_data.to_path_buf(),
            output: output.to_path_buf(),
            time_buckets: 150,
            address_buckets: 180,
            source: AddrSource::Ip,
            hot_fraction: 0.9,
            line_size: 64,
            store: None,
            label: None,
            json: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct HeatmapOutcome {
    pub label: String,
    pub png: PathBuf,
    pub svg: PathBuf,
    pub samples_total: u64,
    pub samples_in_binary: u64,
    pub samples_in_text: u64,
    pub text_lo: u64,
    pub text_hi: u64,
    pub span: HotSpan,
    /// Functions with samples, hottest first.
    pub functions: Vec<HotFunction>,
}

#[derive(Debug, thiserror::Error)]
pub enum HeatmapError {
    #[error("{0}")]
    Request(String),
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("cannot render the heat map: {0}")]
    Render(#[from] image::ImageError),
    #[error(transparent)]
    Output(#[from] kfdo_outfile::OutputError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write the JSON summary: {0}")]
    Json(#[from] serde_json::Error),
}

pub fn make(req: &HeatmapRequest) -> Result<HeatmapOutcome, HeatmapError> {
    if req.time_buckets == 0 || req.address_buckets == 0 {
        return Err(HeatmapError::Request(
            "--time-buckets and --address-buckets must be at least 1".into(),
        ));
    }
    if !(req.hot_fraction > 0.0 && req.hot_fraction <= 1.0) {
        return Err(HeatmapError::Request(format!(
            "--hot-fraction {}: give a fraction in (0, 1], e.g. 0.9",
            req.hot_fraction
        )));
    }
    let inp = input::read(&req.perf_data, &req.binary, req.source)?;
    let grid = Grid::build(
        &inp.points,
        inp.text_lo,
        inp.text_hi,
        req.time_buckets,
        req.address_buckets,
    );
    let (png_left, png_top) = plot_origin();
    let geo = Geometry {
        png_left,
        png_top,
        ..geometry(&grid)
    };
    let plot = render_plot(&grid, &geo);
    let png = encode_png(&plot)?;
    // The file is a picture of its own, with axes; the SVG and the store embed the plot.
    let framed = encode_png(&frame_png(&grid, &geo, &plot))?;
    let span = hot_text_span(
        inp.points.iter().map(|p| (p.addr, 1)),
        req.line_size,
        req.hot_fraction,
    );
    let label = req.label.clone().unwrap_or_else(|| {
        req.binary
            .file_name()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| req.binary.display().to_string())
    });
    let svg = render_svg(
        &grid,
        &geo,
        &png,
        &label,
        &inp.functions,
        inp.samples_in_text,
    );
    let top: Vec<_> = inp.functions.iter().take(20).collect();
    let summary = serde_json::json!({
        "binary": req.binary.display().to_string(),
        "perf_data": req.perf_data.display().to_string(),
        "build_id": inp.build_id,
        "kernel": inp.kernel,
        "source": match req.source { AddrSource::Ip => "ip", AddrSource::BranchTargets => "branch-targets" },
        "text_lo": inp.text_lo,
        "text_hi": inp.text_hi,
        "samples_total": inp.samples_total,
        "samples_in_binary": inp.samples_in_binary,
        "samples_in_text": inp.samples_in_text,
        "hot_text_bytes": span.bytes,
        "hot_text_span": span,
        "time_ns": [grid.t0, grid.t1],
        "time_buckets": grid.time_buckets,
        "address_buckets": grid.addr_buckets,
        "geometry": geo,
        "functions": top,
    });

    kfdo_outfile::write_readable(&req.output, &framed)?;
    let svg_path = req.output.with_extension("svg");
    kfdo_outfile::write_readable(&svg_path, svg.as_bytes())?;
    if let Some(path) = &req.json {
        kfdo_outfile::write_readable(path, &serde_json::to_vec_pretty(&summary)?)?;
    }
    if let Some(db) = &req.store {
        Store::open(db)?.add_heatmap(
            &label,
            &req.binary.display().to_string(),
            &png,
            &svg,
            &summary,
        )?;
    }
    Ok(HeatmapOutcome {
        label,
        png: req.output.clone(),
        svg: svg_path,
        samples_total: inp.samples_total,
        samples_in_binary: inp.samples_in_binary,
        samples_in_text: inp.samples_in_text,
        text_lo: inp.text_lo,
        text_hi: inp.text_hi,
        span,
        functions: inp.functions,
    })
}
