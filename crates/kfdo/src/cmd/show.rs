//! `kfdo show`: print a profile as LLVM sample-profile text.

use crate::output::Global;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A profile kfdo writes: LLVM text or extbinary (also llvm-profgen's and
    /// llvm-profdata's), or a raw aggregate (printed as it is).
    profile: PathBuf,
}

pub fn run(a: Args, _g: &Global) -> anyhow::Result<i32> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    kfdo_convert::show(&a.profile, &mut out)?;
    Ok(0)
}
