//! How much of an old profile still fits a new build: the check that decides
//! whether last release's profile may be reused.
//!
//! A profile keys samples by (line offset from the function's declaration
//! line, discriminator). The new binary's DWARF gives the same keys for every
//! instruction: the outermost frame of its inline stack is the out-of-line
//! function, and that frame's line (the call line, for inlined code) and
//! discriminator are the key the compiler will look samples up by. So for each
//! profiled function:
//!
//! - **gone**: its name is neither a DWARF function (out of line or inlined)
//!   nor an ELF symbol of the new binary;
//! - **stale**: a profiled location no longer exists in the function, or —
//!   when the profile lists the function's cold locations too (count 0), as
//!   llvm-profgen's and kfdo's profiles do — the function has locations the
//!   profile does not know: lines were inserted or deleted, so the compiler
//!   would attach samples to the wrong lines;
//! - **fresh** otherwise.
//!
//! Only the function's own locations are compared (inlinees follow their
//! callers); a function the new build only inlines is checked for missing
//! locations against its inlined copies. Whether a profile lists cold
//! locations is decided for the whole profile (some record has count 0): a
//! function whose every line was sampled has no zero record of its own.
//!
//! Locations before the declaration line (offsets from 0x8000 up, i.e.
//! negative) are code of another file that the compiler left without an
//! inline scope (a header's inline function, say): their offset moves whenever
//! the function moves in its file, which is no edit of the function, so they
//! do not make it stale (their samples still count in `location_share`).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use kfdo_afdo::builder::{canonical_name, Discriminators, FS_DISCRIMINATOR_SYMBOL};
use kfdo_afdo::{FunctionSamples, LineLocation, Profile};
use kfdo_elf::{Binary, Code, Frame, Symbolizer};
use serde::Serialize;

use crate::error::ToolError;

/// A function of the old profile that no longer fits, with its samples.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StaleFunction {
    pub name: String,
    pub samples: u64,
    /// Share of the profile's total samples, 0..1.
    pub share: f64,
    /// Profiled locations the new build lacks (`offset` or `offset.disc`).
    pub missing_locations: Vec<String>,
    /// Locations of the new build the profile lacks.
    pub new_locations: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct StalenessReport {
    pub binary: String,
    pub functions: usize,
    pub fresh_functions: usize,
    /// Present in the binary but without line information to check against.
    pub unchecked_functions: usize,
    pub gone: Vec<StaleFunction>,
    pub stale: Vec<StaleFunction>,
    /// Share of the profile's samples in fresh functions, 0..1.
    pub matching_share: f64,
    /// Share of body samples at locations the new build still has, 0..1.
    pub location_share: f64,
}

/// Every function's locations in the binary: out of line, and inlined.
#[derive(Default)]
struct BinaryLocations {
    own: HashMap<String, BTreeSet<LineLocation>>,
    inlined: HashMap<String, BTreeSet<LineLocation>>,
    symbols: HashSet<String>,
}

fn frame_loc(f: &Frame, disc: Discriminators) -> LineLocation {
    LineLocation::new(f.line_offset(), disc.key(f.discriminator))
}

fn binary_locations(path: &Path) -> Result<BinaryLocations, ToolError> {
    let err = |source| ToolError::Binary {
        path: path.to_owned(),
        source,
    };
    let bin = Binary::open(path).map_err(err)?;
    let sym = Symbolizer::new(&bin).map_err(err)?;
    let code = Code::new(&bin).map_err(err)?;
    // Keys as the profile builder makes them for this binary.
    let disc = if bin.symbol_address(FS_DISCRIMINATOR_SYMBOL).is_some() {
        Discriminators::FlowSensitive
    } else {
        Discriminators::Encoded
    };
    let mut out = BinaryLocations::default();
    let mut frames = Vec::new();
    for (addr, _, _) in code.iter() {
        sym.frames(addr, &mut frames);
        for (depth, f) in frames.iter().enumerate() {
            let map = if depth == 0 {
                &mut out.own
            } else {
                &mut out.inlined
            };
            map.entry(f.func.to_string())
                .or_default()
                .insert(frame_loc(f, disc));
        }
    }
    for s in bin.symbols().symtab() {
        let name = String::from_utf8_lossy(s.name(bin.data()));
        out.symbols.insert(canonical_name(&name).to_owned());
    }
    Ok(out)
}

/// The function's own locations in the profile.
fn profile_locations(f: &FunctionSamples) -> BTreeSet<LineLocation> {
    let mut s: BTreeSet<LineLocation> = f.body.keys().copied().collect();
    s.extend(f.callsites.keys().copied());
    s
}

/// Whether the profile lists cold locations (count 0) of the functions it
/// holds, as llvm-profgen and kfdo do, so that a location the profile lacks
/// is a changed line rather than an unsampled one.
fn lists_cold_locations(p: &Profile) -> bool {
    p.functions
        .values()
        .any(|f| f.body.values().any(|r| r.count == 0))
}

/// A location of the function's own file (see the module comment).
fn own_line(l: &LineLocation) -> bool {
    l.line_offset < 0x8000
}

/// Check `profile` (read from `profile_path`) against the binary at `binary`.
pub fn check_staleness(profile: &Profile, binary: &Path) -> Result<StalenessReport, ToolError> {
    let bl = binary_locations(binary)?;
    let total = profile.total();
    let share = |n: u64| {
        if total > 0 {
            n as f64 / total as f64
        } else {
            0.0
        }
    };
    let mut r = StalenessReport {
        binary: binary.display().to_string(),
        functions: profile.len(),
        ..Default::default()
    };
    let (mut fresh_samples, mut body_all, mut body_kept) = (0u64, 0u64, 0u64);
    let complete = lists_cold_locations(profile);
    for (name, f) in &profile.functions {
        let body: u64 = f.body.values().map(|r| r.count).sum();
        body_all += body;
        let (own, inlined) = (bl.own.get(name), bl.inlined.get(name));
        let entry = |missing: Vec<String>, new_locations: Vec<String>| StaleFunction {
            name: name.clone(),
            samples: f.total_samples,
            share: share(f.total_samples),
            missing_locations: missing,
            new_locations,
        };
        let Some(have) = own.or(inlined) else {
            if bl.symbols.contains(name) {
                // In the symbol table only (no DWARF): nothing to compare.
                r.unchecked_functions += 1;
                fresh_samples += f.total_samples;
                body_kept += body;
            } else {
                r.gone.push(entry(Vec::new(), Vec::new()));
            }
            continue;
        };
        let want = profile_locations(f);
        let missing: Vec<LineLocation> = want
            .difference(have)
            .filter(|l| own_line(l))
            .copied()
            .collect();
        // A function known only by its head samples has no locations to compare.
        let extra: Vec<LineLocation> = if own.is_some() && complete && !f.body.is_empty() {
            have.difference(&want)
                .filter(|l| own_line(l))
                .copied()
                .collect()
        } else {
            Vec::new()
        };
        body_kept += f
            .body
            .iter()
            .filter(|(l, _)| have.contains(l))
            .map(|(_, r)| r.count)
            .sum::<u64>();
        if missing.is_empty() && extra.is_empty() {
            r.fresh_functions += 1;
            fresh_samples += f.total_samples;
        } else {
            let s = |v: Vec<LineLocation>| v.iter().map(|l| l.to_string()).collect();
            r.stale.push(entry(s(missing), s(extra)));
        }
    }
    for v in [&mut r.gone, &mut r.stale] {
        v.sort_by(|a, b| b.samples.cmp(&a.samples).then_with(|| a.name.cmp(&b.name)));
    }
    r.matching_share = share(fresh_samples);
    r.location_share = if body_all > 0 {
        body_kept as f64 / body_all as f64
    } else {
        0.0
    };
    Ok(r)
}
