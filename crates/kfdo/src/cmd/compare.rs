//! `kfdo compare` (not yet implemented).

use crate::output::Global;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args, _g: &Global) -> anyhow::Result<i32> {
    anyhow::bail!("kfdo compare is not implemented yet")
}
