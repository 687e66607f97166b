//! The two files Propeller's relink reads:
//!
//! * the cc profile, for clang's `-fbasic-block-sections=list=FILE` (lld's
//!   `--lto-basic-block-sections=FILE` under LTO), version 1: `v1`, then per hot
//!   function `f NAME [ALIAS...]` and one `c` line per cluster, `c` followed by the
//!   cluster's basic-block IDs (`c0 2 3 1`: the entry block 0, then 2, 3, 1; clusters
//!   are numbered by their order). Cluster 0 starts at the entry block and keeps the
//!   function's symbol; the blocks no cluster names go to the function's `.cold` part;
//! * the ld profile, for lld's `--symbol-ordering-file`: the hot clusters' symbols in
//!   the layout's order (`NAME`, `NAME.__part.N` for cluster N > 0), then the cold
//!   parts (`NAME.cold`), so hot code is packed at the start of `.text`.
//!
//! Both are written in a fixed order from the layout alone, so the same samples give
//! the same files.

use std::io::{self, Write};

use super::model::{ProgramCfg, ProgramLayout};

/// The cc profile. Functions appear in the CFG's (address) order.
pub fn write_cc_profile(
    w: &mut dyn Write,
    cfg: &ProgramCfg,
    layout: &ProgramLayout,
    aliases: &dyn Fn(usize) -> Vec<String>,
) -> io::Result<()> {
    writeln!(w, "v1")?;
    let mut funcs: Vec<_> = layout.functions.iter().collect();
    funcs.sort_by_key(|f| f.function);
    for f in funcs {
        let name = &cfg.functions[f.function].name;
        write!(w, "f {name}")?;
        for a in aliases(f.function) {
            write!(w, " {a}")?;
        }
        writeln!(w)?;
        for cluster in &f.clusters {
            let ids: Vec<String> = cluster.iter().map(u32::to_string).collect();
            writeln!(w, "c{}", ids.join(" "))?;
        }
    }
    Ok(())
}

/// The ld profile's symbols, in order.
pub fn ld_symbols(cfg: &ProgramCfg, layout: &ProgramLayout) -> Vec<String> {
    let mut out = Vec::new();
    for &(f, cluster) in &layout.order {
        let name = &cfg.functions[layout.functions[f].function].name;
        out.push(match cluster {
            0 => name.clone(),
            n => format!("{name}.__part.{n}"),
        });
    }
    let mut seen = std::collections::HashSet::new();
    for &(f, _) in &layout.order {
        let fl = &layout.functions[f];
        if !fl.cold.is_empty() && seen.insert(f) {
            out.push(format!("{}.cold", cfg.functions[fl.function].name));
        }
    }
    out
}

pub fn write_ld_profile(w: &mut dyn Write, symbols: &[String]) -> io::Result<()> {
    for s in symbols {
        writeln!(w, "{s}")?;
    }
    Ok(())
}
