//! `kfdo diff`: what changed between two profiles of one program, and with
//! `--binary`, how much of the old profile still fits a new build.

use std::path::PathBuf;

use kfdo_proftools::{check_staleness, diff_profiles, DiffOptions};

use crate::output::Global;

#[derive(clap::Args)]
pub struct Args {
    /// The old profile (any format kfdo reads).
    old: PathBuf,
    /// The new profile.
    new: PathBuf,
    /// Also check OLD against this new build (its DWARF line table and
    /// symbols): functions gone, functions whose lines changed, the share of
    /// samples that still matches.
    #[arg(long, value_name = "NEW_BIN")]
    binary: Option<PathBuf>,
    /// How many functions each list shows.
    #[arg(long, value_name = "N", default_value_t = 20)]
    top: usize,
    /// Below this whole-program similarity (percent) OLD and NEW count as
    /// profiles of different programs, an error unless --force.
    #[arg(long, value_name = "PERCENT", default_value_t = 10.0)]
    min_similarity: f64,
    /// Diff even profiles that look unrelated.
    #[arg(long)]
    force: bool,
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args, _g: &Global) -> anyhow::Result<i32> {
    let old = kfdo_proftools::read(&a.old)?;
    let new = kfdo_proftools::read(&a.new)?;
    let opts = DiffOptions {
        top: a.top,
        min_similarity: a.min_similarity / 100.0,
        force: a.force,
    };
    let mut r = diff_profiles(&old, &new, (&a.old, &a.new), &opts)?;
    if let Some(bin) = &a.binary {
        let mut st = check_staleness(&old, bin)?;
        st.gone.truncate(a.top.max(st.gone.len().min(1000)));
        r.staleness = Some(st);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print!("{}", r.to_text());
    }
    Ok(0)
}

/// The report's section for two profiles (`kfdo report --profiles OLD NEW`):
/// the overlap figures and the diff's tables, diffed even when unrelated (the
/// report then shows how little they share).
pub fn report_section(
    old_path: &std::path::Path,
    new_path: &std::path::Path,
    top: usize,
) -> anyhow::Result<kfdo_bench::report::profiles::ProfilesSection> {
    use kfdo_bench::report::profiles::{ProfilesSection, Table};
    use kfdo_proftools::render::pct;
    let old = kfdo_proftools::read(old_path)?;
    let new = kfdo_proftools::read(new_path)?;
    let o = kfdo_proftools::overlap_profiles(&old, &new, (old_path, new_path))?;
    let opts = DiffOptions {
        top,
        force: true,
        ..Default::default()
    };
    let d = diff_profiles(&old, &new, (old_path, new_path), &opts)?;
    let n = crate::counts::grouped;
    let figures = vec![
        (
            "old profile".into(),
            format!("{} ({} samples)", d.old, n(d.old_samples)),
        ),
        (
            "new profile".into(),
            format!("{} ({} samples)", d.new, n(d.new_samples)),
        ),
        ("whole-program similarity".into(), pct(o.similarity)),
        ("samples in both".into(), pct(o.sample_overlap)),
        (
            "functions in both".into(),
            format!("{} ({})", pct(o.function_overlap), n(o.overlap_functions)),
        ),
        (
            "hot functions in both".into(),
            format!(
                "{} ({})",
                pct(o.hot_function_overlap),
                n(o.overlap_hot_functions)
            ),
        ),
        (
            "hot blocks in both".into(),
            format!("{} ({})", pct(o.hot_block_overlap), n(o.overlap_hot_blocks)),
        ),
        (
            "functions added / removed".into(),
            format!("{} / {}", d.added_functions, d.removed_functions),
        ),
    ];
    let table = |caption: &str, v: &[kfdo_proftools::FunctionChange]| Table {
        caption: caption.into(),
        header: ["old share", "new share", "change", "function"]
            .map(String::from)
            .to_vec(),
        rows: v
            .iter()
            .map(|c| {
                vec![
                    pct(c.old_share),
                    pct(c.new_share),
                    format!("{:+.3}%", c.delta * 100.0),
                    c.name.clone(),
                ]
            })
            .collect(),
    };
    Ok(ProfilesSection {
        title: "Profiles: overlap and diff".into(),
        figures,
        tables: vec![
            table("Share of samples changed most", &d.changed),
            table("Added functions", &d.added),
            table("Removed functions", &d.removed),
        ],
    })
}
