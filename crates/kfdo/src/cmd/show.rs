//! `kfdo show`: print a profile as LLVM sample-profile text, or a binary's
//! basic-block address map.

use crate::output::Global;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["profile", "bb_addr_map"])))]
pub struct Args {
    /// A profile kfdo writes: LLVM text or extbinary (also llvm-profgen's and
    /// llvm-profdata's), or unsymbolized counts (printed as they are).
    profile: Option<PathBuf>,

    /// Print the basic-block address map (.llvm_bb_addr_map, clang's
    /// -fbasic-block-address-map) of this binary instead: each function's blocks
    /// with their IDs, addresses, sizes and flags.
    #[arg(long, value_name = "BINARY")]
    bb_addr_map: Option<PathBuf>,
}

pub fn run(a: Args, _g: &Global) -> anyhow::Result<i32> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match (a.profile, a.bb_addr_map) {
        (_, Some(binary)) => kfdo_convert::show_bb_addr_map(&binary, &mut out)?,
        (Some(profile), None) => kfdo_convert::show(&profile, &mut out)?,
        (None, None) => unreachable!("clap requires one of them"),
    }
    Ok(0)
}
