//! `kfdo merge-raw`: many hosts' raw Parquet files into one, exactly as the fleet
//! contract says (selection, host cap, class weights), streaming.

use std::path::{Path, PathBuf};

use kfdo_rawfleet::merge::{merge, parse_weight, MergeOptions};

use crate::output::Global;

#[derive(clap::Args)]
pub struct Args {
    /// Raw files, and directories (every *.parquet under them, recursively).
    #[arg(required = true, value_name = "DIR-or-FILE")]
    inputs: Vec<PathBuf>,
    /// The merged file (written whole or not at all).
    #[arg(long, short = 'o', value_name = "OUT.parquet")]
    output: PathBuf,
    /// Keep files of this build-id only (one release); the others are dropped and
    /// counted. Without it, inputs of several build-ids are an error.
    #[arg(long, value_name = "ID")]
    build_id: Option<String>,
    /// Keep files whose window starts at or after NS (perf clock, ns).
    #[arg(long, value_name = "NS")]
    since: Option<i64>,
    /// Keep files whose window ends at or before NS.
    #[arg(long, value_name = "NS")]
    until: Option<i64>,
    /// Drop unreadable, truncated or newer-schema files (counted) instead of failing.
    #[arg(long)]
    skip_bad: bool,
    /// Most samples one host may contribute: a host with S > N samples (over all its
    /// files) has every count c scaled to floor(c*N/S).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    host_cap: Option<u64>,
    /// Weigh a host class: counts become floor(c*W*1000/1000), W with at most 3
    /// decimals (repeat for several classes; unlisted classes weigh 1).
    #[arg(long, value_name = "CLASS=W")]
    weight: Vec<String>,
    /// Print what was merged as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args, g: &Global) -> anyhow::Result<i32> {
    let mut weights = Vec::new();
    for w in &a.weight {
        weights.push(parse_weight(w)?);
    }
    let opts = MergeOptions {
        build_id: a.build_id.clone(),
        since: a.since,
        until: a.until,
        skip_bad: a.skip_bad,
        host_cap: a.host_cap,
        weights,
    };
    let out = [kfdo_outfile::Out::new("-o", &a.output)];
    let inputs: Vec<&Path> = a.inputs.iter().map(PathBuf::as_path).collect();
    kfdo_outfile::refuse_overwriting_inputs(&out, &inputs)?;
    // A directory input takes every `*.parquet` under it (the fleet Spark job refuses
    // the same).
    kfdo_outfile::refuse_output_inside_input_dirs(&out, &inputs)?;
    keep_freed_memory();
    let r = merge(&a.inputs, &opts, &a.output)?;
    for bad in &r.dropped_bad {
        g.info(format!("kfdo merge-raw: dropped (--skip-bad): {bad}"));
    }
    g.info(format!(
        "kfdo merge-raw: {} file(s) in, {} kept from {} host(s) ({} capped); dropped: {} \
         build-id, {} window, {} bad; rows {} in -> {} out, {} samples -> {}",
        r.files_in,
        r.kept,
        r.hosts,
        r.capped_hosts,
        r.dropped_build_id,
        r.dropped_window,
        r.dropped_bad.len(),
        r.rows_in,
        r.rows_out,
        r.samples,
        a.output.display()
    ));
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    }
    Ok(0)
}

/// The merge allocates and frees runs of hundreds of MiB (a file's rows, each level of
/// the run merge): glibc would return each to the kernel (mmap / trim) and take fresh
/// zeroed pages for the next. Keeping freed memory for reuse removes most of that page
/// faulting (docs/performance.md, "Fleet merge", has the before and after); the peak
/// stays bounded by the merge's own live data.
fn keep_freed_memory() {
    // SAFETY: mallopt only sets allocator tunables; called before the merge's threads
    // start, it races with no allocation.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}
