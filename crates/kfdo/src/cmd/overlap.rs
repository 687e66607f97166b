//! `kfdo overlap`: how similar two sample profiles are, with the figures of
//! `llvm-profdata overlap --sample`.

use std::path::PathBuf;

use crate::output::Global;

#[derive(clap::Args)]
pub struct Args {
    /// The base profile (any format kfdo reads).
    base: PathBuf,
    /// The profile compared with it.
    test: PathBuf,
    /// Print the figures (and every function's) as JSON.
    #[arg(long)]
    json: bool,
    /// In text, also list this many functions, heaviest in base first.
    #[arg(long, value_name = "N", default_value_t = 0)]
    functions: usize,
}

pub fn run(a: Args, _g: &Global) -> anyhow::Result<i32> {
    let base = kfdo_proftools::read(&a.base)?;
    let test = kfdo_proftools::read(&a.test)?;
    let r = kfdo_proftools::overlap_profiles(&base, &test, (&a.base, &a.test))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(0);
    }
    print!("{}", r.to_text());
    if a.functions > 0 {
        use kfdo_proftools::render::pct;
        println!(
            "  {:>9} {:>9} {:>10} {:>9}  function",
            "base", "test", "similarity", "overlap"
        );
        for f in r.functions.iter().take(a.functions) {
            println!(
                "  {:>9} {:>9} {:>10} {:>9}  {}",
                pct(f.base_weight),
                pct(f.test_weight),
                pct(f.similarity),
                pct(f.sample_overlap),
                f.name
            );
        }
    }
    Ok(0)
}
