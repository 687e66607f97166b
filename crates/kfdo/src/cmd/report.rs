//! `kfdo report`: the HTML page and the Markdown text of a results store.

use std::path::PathBuf;

use kfdo_bench::report::write::{write_report, ReportRequest};

use crate::json_out::JsonArgs;
use crate::output::Global;

#[derive(clap::Args)]
pub struct Args {
    /// Results store written by `kfdo compare` (and `kfdo heatmap --store`).
    #[arg(long, value_name = "FILE.db", default_value = "kfdo-bench.db")]
    store: PathBuf,
    /// Output directory: index.html (static, works offline) and report.md.
    #[arg(long, short = 'o', value_name = "DIR", default_value = "kfdo-report")]
    output: PathBuf,
    /// Title of the report.
    #[arg(long, default_value = "kfdo comparison report")]
    title: String,
    /// The analysis (all benchmarks, geometric means) as JSON.
    #[command(flatten)]
    json: JsonArgs,
    /// Also show two sample profiles' overlap and diff (`kfdo overlap`, `kfdo diff`);
    /// without a store the report holds only them.
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"])]
    profiles: Vec<PathBuf>,
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    let json = args.json.sink()?;
    refuse_overwriting_inputs(&args, json.user_file())?;
    let req = ReportRequest {
        store: args.store,
        output: args.output,
        title: args.title,
        json: json.path(),
    };
    let done = match args.profiles.as_slice() {
        [old, new] => {
            let section = super::diff::report_section(old, new, 20)?;
            kfdo_bench::report::profiles::write_report_with_profiles(&req, &section)?
        }
        _ => write_report(&req)?,
    };
    g.info(format!(
        "wrote {} and {} ({} benchmark(s), {} run(s))",
        done.index.display(),
        done.markdown.display(),
        done.benchmarks,
        done.runs
    ));
    json.text_summary(&format!("{}\n", done.index.display()), g);
    json.print()?;
    g.info(format!(
        "kfdo report: next: {}",
        crate::next_view::report(&done.index)
    ));
    Ok(0)
}

/// Refuses, before reading anything, an output (the directory, its index.html and
/// report.md, the JSON) that is the store or one of the profiles.
fn refuse_overwriting_inputs(args: &Args, json: Option<&std::path::Path>) -> anyhow::Result<()> {
    let inputs: Vec<&std::path::Path> = std::iter::once(&args.store)
        .chain(&args.profiles)
        .map(PathBuf::as_path)
        .collect();
    refuse_overwriting_report_inputs(&args.output, json, &inputs)
}

/// Refuses a report directory's outputs (the directory, its index.html and report.md,
/// the JSON) that are one of `inputs`: the rule of every command that writes a report.
pub(super) fn refuse_overwriting_report_inputs(
    output: &std::path::Path,
    json: Option<&std::path::Path>,
    inputs: &[&std::path::Path],
) -> anyhow::Result<()> {
    use kfdo_outfile::Out;
    let index = output.join("index.html");
    let md = output.join("report.md");
    let mut outputs = vec![
        Out::new("-o", output),
        Out::new("-o", &index),
        Out::new("-o", &md),
    ];
    outputs.extend(json.map(|j| Out::new("--json-out", j)));
    kfdo_outfile::refuse_overwriting_inputs(&outputs, inputs)?;
    Ok(())
}
