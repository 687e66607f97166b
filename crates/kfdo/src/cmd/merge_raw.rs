//! `kfdo merge-raw`: many hosts' raw Parquet files into one, exactly as the fleet
//! contract says (selection, host cap, class weights), streaming. Inputs are local
//! files and directories, or `s3://` prefixes (`s3`: downloaded first).

mod s3;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use kfdo_objstore::S3Url;
use kfdo_rawfleet::merge::{merge, merge_files, parse_weight, MergeOptions};

use crate::output::Global;

#[derive(clap::Args)]
pub struct Args {
    /// Raw files, directories (every *.parquet under them, recursively), and s3:// (or
    /// s3a://) URLs: an object, or a prefix (taken as a folder) whose every *.parquet
    /// object is merged. Objects are downloaded, a few at a time, into a temporary
    /// folder (under $TMPDIR, removed afterwards) and named by their s3:// URLs in every
    /// message. The store and credentials come from AWS_ENDPOINT_URL (unset: AWS
    /// itself), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and
    /// AWS_REGION.
    #[arg(required = true, value_name = "DIR-or-FILE-or-S3-URL")]
    inputs: Vec<PathBuf>,
    /// The merged file, a local path (written whole or not at all; to put it in an
    /// object store, upload it afterwards).
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
    if a.output.to_str().is_some_and(S3Url::is_s3) {
        bail!(
            "-o {}: the merged file is written to a local path; upload it afterwards (for \
             example with `aws s3 cp`)",
            a.output.display()
        );
    }
    let inputs = a
        .inputs
        .iter()
        .map(|i| s3::Input::parse(i))
        .collect::<Result<Vec<_>, _>>()?;
    let out = [kfdo_outfile::Out::new("-o", &a.output)];
    let local: Vec<&Path> = inputs.iter().filter_map(s3::Input::local).collect();
    kfdo_outfile::refuse_overwriting_inputs(&out, &local)?;
    // A directory input takes every `*.parquet` under it (the fleet Spark job refuses
    // the same).
    kfdo_outfile::refuse_output_inside_input_dirs(&out, &local)?;
    keep_freed_memory();
    let r = if local.len() == inputs.len() {
        merge(&a.inputs, &opts, &a.output)?
    } else {
        // Found out before any download, not after.
        kfdo_outfile::check_writable("-o", &a.output)?;
        let tmp = tempfile::Builder::new()
            .prefix("kfdo-merge-raw-")
            .tempdir()
            .context("cannot make a temporary folder for the s3:// inputs (check TMPDIR)")?;
        remove_on_interrupt(tmp.path());
        let files = s3::resolve(&inputs, tmp.path(), g)?;
        // `tmp` is removed when dropped, after the merge or on its error.
        merge_files(&files, &opts, &a.output)?
    };
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
        crate::counts::grouped(r.rows_in as u64),
        crate::counts::grouped(r.rows_out as u64),
        crate::counts::grouped(r.samples as u64),
        a.output.display()
    ));
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    }
    Ok(0)
}

/// Ctrl-C or SIGTERM while downloading or merging: the downloads' folder goes too
/// (exit skips destructors).
fn remove_on_interrupt(dir: &Path) {
    let dir = dir.to_path_buf();
    let _ = ctrlc::set_handler(move || {
        let _ = std::fs::remove_dir_all(&dir);
        std::process::exit(130);
    });
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
