//! Propeller's profiles (the cc profile for clang's `-fbasic-block-sections=list=` and
//! the ld profile for lld's `--symbol-ordering-file`) from branch samples and the
//! binary's BB address map, as google/llvm-propeller's `create_llvm_prof
//! --format=propeller` makes them:
//!
//! * `model`: the whole-program CFG and the layout's result;
//! * `build`: the CFG from the map and the sampled branch / fall-through counts;
//! * `verify`: that the map still describes the code;
//! * `layout`: ext-TSP block order, cold splitting, call-chain clustering;
//! * `writer`: the two files.

pub mod build;
pub mod layout;
pub mod model;
pub mod verify;
pub mod writer;

use std::path::PathBuf;

use kfdo_aggregate::RawProfile;
use kfdo_elf::{BbAddrMap, Binary, ElfError};
use rustc_hash::FxHashMap;

pub use build::{BuildStats, StaleFunction};
pub use layout::LayoutParams;
pub use model::{ProgramCfg, ProgramLayout};

#[derive(Debug, thiserror::Error)]
pub enum PropellerError {
    #[error(transparent)]
    Elf(#[from] ElfError),
    #[error("{binary}: none of the {branch_weight} sampled branches lands in a function of its BB address map: the samples are of another build or another program; record the binary given here")]
    NoSamples { binary: PathBuf, branch_weight: u64 },
    #[error("{binary}: the BB address map does not match the samples of {}: {dubious} of {total} sampled branches into it land inside its blocks, as if its blocks moved after the map was written (a post-link rewrite, or another build's map); rebuild with -fbasic-block-address-map and record the binary that build makes", names.join(", "))]
    StaleSamples {
        binary: PathBuf,
        names: Vec<String>,
        dubious: u64,
        total: u64,
    },
    #[error("{binary}: the BB address map of {function} is stale: its block at {address:#x} does not start and end on instruction boundaries of the code there (the code was rewritten after linking, or the map is another build's); rebuild with -fbasic-block-address-map and record again")]
    StaleMap {
        binary: PathBuf,
        function: String,
        address: u64,
    },
}

/// What the conversion saw and did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PropellerStats {
    pub cfg: BuildStats,
    /// Hot functions whose name another mapped function also has: a cluster list
    /// names functions, so these are left in their order.
    pub ambiguous_functions: usize,
    pub hot_blocks: usize,
    /// Functions split into a hot and a `.cold` part.
    pub split_functions: usize,
    /// Sum over hot functions of the ext-TSP score, before and after.
    pub intra_score_before: f64,
    pub intra_score_after: f64,
}

/// Both profiles as text, and the statistics.
#[derive(Clone, Debug)]
pub struct PropellerProfile {
    pub cc_profile: String,
    pub ld_profile: String,
    pub stats: PropellerStats,
}

/// Lays out `bin` from `raw` (its link-time-address counts). Errors: no map (built
/// without `-fbasic-block-address-map`), a map LLVM never wrote, no sample in a mapped
/// function, or a map that no longer fits the code or the samples.
pub fn propeller_profile(
    bin: &Binary,
    raw: &RawProfile,
    params: &LayoutParams,
) -> Result<PropellerProfile, PropellerError> {
    let map = BbAddrMap::read(bin)?;
    let names = BbAddrMap::function_names(bin);
    // As llvm-propeller by default: only functions of the `.text` output section (a
    // relocatable object has one section per function: all count).
    let text: Vec<(u64, u64)> = bin
        .sections()
        .iter()
        .filter(|s| s.name == ".text")
        .map(|s| (s.addr, s.addr + s.size))
        .collect();
    let in_text = |a: u64| bin.is_relocatable() || text.iter().any(|&(lo, hi)| lo <= a && a < hi);
    let (mut cfg, cfg_stats, stale) = build::build_cfg(&map, &names, &in_text, raw);
    if cfg_stats.hot_functions == 0 {
        return Err(PropellerError::NoSamples {
            binary: bin.path().to_owned(),
            branch_weight: cfg_stats.branch_weight,
        });
    }
    if !stale.is_empty() {
        return Err(PropellerError::StaleSamples {
            binary: bin.path().to_owned(),
            dubious: stale.iter().map(|s| s.dubious_weight).sum(),
            total: stale.iter().map(|s| s.branch_weight).sum(),
            names: stale.into_iter().take(5).map(|s| s.name).collect(),
        });
    }
    let by_address: FxHashMap<u64, &kfdo_elf::BbFunction> =
        map.functions.iter().map(|f| (f.address(), f)).collect();
    for f in cfg.functions.iter().filter(|f| f.is_hot()) {
        if let Some(address) = by_address
            .get(&f.address)
            .and_then(|m| verify::misplaced_block(bin, m))
        {
            return Err(PropellerError::StaleMap {
                binary: bin.path().to_owned(),
                function: f.name.clone(),
                address,
            });
        }
    }
    let ambiguous_functions = cool_ambiguous(&mut cfg);

    let layout = layout::code_layout(&cfg, params);
    let aliases = aliases(bin);
    let alias_of = |i: usize| -> Vec<String> {
        let f = &cfg.functions[i];
        aliases
            .get(&f.address)
            .map(|v| v.iter().filter(|n| **n != f.name).cloned().collect())
            .unwrap_or_default()
    };
    let mut cc = Vec::new();
    writer::write_cc_profile(&mut cc, &cfg, &layout, &alias_of).expect("writing to memory");
    let mut ld = Vec::new();
    writer::write_ld_profile(&mut ld, &writer::ld_symbols(&cfg, &layout))
        .expect("writing to memory");
    let stats = PropellerStats {
        cfg: cfg_stats,
        ambiguous_functions,
        hot_blocks: layout
            .functions
            .iter()
            .map(|f| f.clusters.iter().map(Vec::len).sum::<usize>())
            .sum(),
        split_functions: layout
            .functions
            .iter()
            .filter(|f| !f.cold.is_empty())
            .count(),
        intra_score_before: layout.functions.iter().map(|f| f.intra_score_before).sum(),
        intra_score_after: layout.functions.iter().map(|f| f.intra_score_after).sum(),
    };
    Ok(PropellerProfile {
        cc_profile: String::from_utf8(cc).expect("names are UTF-8"),
        ld_profile: String::from_utf8(ld).expect("names are UTF-8"),
        stats,
    })
}

/// Makes hot functions that share their name with another mapped function cold (a
/// cluster list could not tell them apart); returns how many hot ones there were.
fn cool_ambiguous(cfg: &mut ProgramCfg) -> usize {
    let mut count: FxHashMap<&str, usize> = FxHashMap::default();
    for f in &cfg.functions {
        *count.entry(f.name.as_str()).or_default() += 1;
    }
    let dup: Vec<bool> = cfg
        .functions
        .iter()
        .map(|f| count[f.name.as_str()] > 1)
        .collect();
    let mut hot = 0;
    for (f, dup) in cfg.functions.iter_mut().zip(&dup) {
        if *dup && f.is_hot() {
            hot += 1;
            f.edges.clear();
            f.nodes.iter_mut().for_each(|n| n.freq = 0);
        }
    }
    cfg.inter_edges
        .retain(|e| !dup[e.src.function] && !dup[e.sink.function]);
    hot
}

/// Every function symbol's name, by address (`f` lines list a function's aliases).
fn aliases(bin: &Binary) -> FxHashMap<u64, Vec<String>> {
    const STT_FUNC: u8 = 2;
    let mut out: FxHashMap<u64, Vec<String>> = FxHashMap::default();
    for s in bin.symbols().symtab() {
        if s.st_type == STT_FUNC && s.section.is_some() {
            let name = String::from_utf8_lossy(s.name(bin.data())).into_owned();
            let v = out.entry(s.addr).or_default();
            if !v.contains(&name) {
                v.push(name);
            }
        }
    }
    out
}
