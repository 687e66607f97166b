//! `kfdo merge`: merge AutoFDO sample profiles, weighted, as
//! `llvm-profdata merge --sample` does.

use std::path::PathBuf;

use kfdo_proftools::kfdo_afdo::{write_profile_file, Format};
use kfdo_proftools::{merge_files, parse_weighted, WeightedInput};

use crate::output::Global;

#[derive(Clone, Copy, clap::ValueEnum)]
enum OutFormat {
    Text,
    Extbinary,
}

#[derive(clap::Args)]
pub struct Args {
    /// Profiles to merge with weight 1 (LLVM text or extbinary, any mix).
    files: Vec<PathBuf>,
    /// A profile whose counts are multiplied by W (a positive integer), as
    /// llvm-profdata's --weighted-input=W,FILE (W,FILE is accepted too).
    #[arg(long = "weight", value_name = "W:FILE")]
    weighted: Vec<String>,
    /// Output profile (written whole or not at all).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: PathBuf,
    #[arg(long, value_enum, default_value = "extbinary")]
    format: OutFormat,
    /// Print what was merged as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args, g: &Global) -> anyhow::Result<i32> {
    // Plain inputs first, then weighted ones: llvm-profdata's order (the result
    // does not depend on it; saturating sums commute).
    let mut inputs: Vec<WeightedInput> = a
        .files
        .iter()
        .map(|p| WeightedInput {
            path: p.clone(),
            weight: 1,
        })
        .collect();
    for w in &a.weighted {
        inputs.push(parse_weighted(w)?);
    }
    if inputs.is_empty() {
        anyhow::bail!("no profile to merge: give FILE... and/or --weight W:FILE");
    }
    let paths: Vec<&std::path::Path> = inputs.iter().map(|i| i.path.as_path()).collect();
    kfdo_outfile::refuse_overwriting_inputs(&[kfdo_outfile::Out::new("-o", &a.output)], &paths)?;
    let (profile, stats) = merge_files(&inputs)?;
    if stats.overflows > 0 {
        eprintln!(
            "kfdo: warning: {} count(s) saturated at 2^64-1 while merging (llvm-profdata: counter overflow)",
            crate::counts::grouped(stats.overflows)
        );
    }
    let fmt = match a.format {
        OutFormat::Text => Format::Text,
        OutFormat::Extbinary => Format::ExtBinary,
    };
    write_profile_file(&profile, fmt, &a.output)?;
    let next = crate::next_view::merged(&a.output);
    if a.json {
        crate::json_out::print_summary(&Summary {
            output: &a.output,
            inputs: inputs
                .iter()
                .map(|i| InputSummary {
                    file: &i.path,
                    weight: i.weight,
                })
                .collect(),
            functions: profile.len(),
            total_samples: profile.total(),
            overflows: stats.overflows,
            next: &next,
        })?;
    }
    g.info(format!(
        "merged {} profile(s): {} functions, {} samples -> {}",
        inputs.len(),
        profile.len(),
        crate::counts::grouped(profile.total()),
        a.output.display()
    ));
    g.info(format!("kfdo merge: next: {next}"));
    Ok(0)
}

/// `kfdo merge --json`.
#[derive(serde::Serialize)]
struct Summary<'a> {
    output: &'a std::path::Path,
    inputs: Vec<InputSummary<'a>>,
    functions: usize,
    total_samples: u64,
    overflows: u64,
    next: &'a str,
}

/// One merged profile and its weight.
#[derive(serde::Serialize)]
struct InputSummary<'a> {
    file: &'a std::path::Path,
    weight: u64,
}
