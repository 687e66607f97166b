//! `kfdo show`: print a profile as LLVM sample-profile text.

use crate::output::Global;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A profile kfdo writes: LLVM text or extbinary (also llvm-profgen's and
    /// llvm-profdata's), or a raw aggregate (printed as it is).
    profile: PathBuf,
}

pub fn run(a: Args, _g: &Global) -> anyhow::Result<i32> {
    let data = std::fs::read(&a.profile)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", a.profile.display()))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if looks_raw(&data) {
        out.write_all(&data)?;
    } else {
        let name = a.profile.display().to_string();
        let p = kfdo_afdo::parse_profile(&data, &name)?;
        kfdo_afdo::write_profile(&p, kfdo_afdo::Format::Text, &mut out)?;
    }
    out.flush()?;
    Ok(0)
}

/// A raw aggregate starts with a line holding only a decimal count.
fn looks_raw(data: &[u8]) -> bool {
    let first = data.split(|&b| b == b'\n').next().unwrap_or(&[]);
    !first.is_empty() && first.iter().all(|b| b.is_ascii_digit())
}
