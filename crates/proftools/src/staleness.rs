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
//! Inlinees are checked where they are inlined: a helper inlined into `main`
//! is a profile inside `main`'s (at the call site's location), keyed by lines of
//! the helper, and the compiler reads it against the helper's inlined code in
//! the new build. So each inlinee's locations are compared with those of the new
//! build's copy inlined at the same call site of the same caller (else, when the
//! new build does not inline it there, with its locations in any copy), and a
//! mismatch makes the out-of-line function that holds the inlinee stale. An
//! inlinee's locations are written `SITE>NAME:LOCATION` (nested:
//! `SITE>NAME:SITE>NAME:LOCATION`); an inlinee the new build has no code of at
//! all is `SITE>NAME`. A function the new build only inlines is checked for
//! missing locations against its inlined copies. Whether a profile lists cold
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
    /// Share of body samples (inlinees' included) at locations the new build
    /// still has, 0..1.
    pub location_share: f64,
}

/// One function's locations in one inline context of the binary, and those of
/// every function inlined into it, by (call site, callee).
#[derive(Default)]
struct Scope {
    locs: BTreeSet<LineLocation>,
    inlined: HashMap<(LineLocation, String), Scope>,
}

/// Every function's locations in the binary: out of line (with what is inlined
/// into it), and inlined anywhere.
#[derive(Default)]
struct BinaryLocations {
    own: HashMap<String, Scope>,
    inlined: HashMap<String, BTreeSet<LineLocation>>,
    symbols: HashSet<String>,
}

impl BinaryLocations {
    /// One instruction's inline stack, outermost (the out-of-line function) first.
    fn add_stack(&mut self, frames: &[Frame], disc: Discriminators) {
        let Some(outer) = frames.first() else {
            return;
        };
        let mut scope = self.own.entry(outer.func.to_string()).or_default();
        scope.locs.insert(frame_loc(outer, disc));
        for pair in frames.windows(2) {
            let (caller, callee) = (&pair[0], &pair[1]);
            let loc = frame_loc(callee, disc);
            scope = scope
                .inlined
                .entry((frame_loc(caller, disc), callee.func.to_string()))
                .or_default();
            scope.locs.insert(loc);
            self.inlined
                .entry(callee.func.to_string())
                .or_default()
                .insert(loc);
        }
    }

    /// The function's locations in any copy: out of line, else inlined.
    fn any_copy(&self, name: &str) -> Option<&BTreeSet<LineLocation>> {
        self.own
            .get(name)
            .map(|s| &s.locs)
            .or_else(|| self.inlined.get(name))
    }
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
        out.add_stack(&frames, disc);
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

/// What comparing one out-of-line function (and its inlinees) found.
#[derive(Default)]
struct Comparison {
    missing: Vec<String>,
    new_locations: Vec<String>,
    /// Body samples, all and at locations the new build still has.
    body_all: u64,
    body_kept: u64,
}

impl Comparison {
    /// Compare `f`'s own locations (named with `prefix`) with `have`, the new
    /// build's; `context`: the locations are those of this very inline context
    /// (or out-of-line copy), so the build's locations the profile lacks count.
    fn locations(
        &mut self,
        f: &FunctionSamples,
        have: &BTreeSet<LineLocation>,
        context: bool,
        complete: bool,
        prefix: &str,
    ) {
        let want = profile_locations(f);
        let name = |l: &LineLocation| format!("{prefix}{l}");
        self.missing
            .extend(want.difference(have).filter(|l| own_line(l)).map(name));
        // A function known only by its head samples has no locations to compare.
        if context && complete && !f.body.is_empty() {
            self.new_locations
                .extend(have.difference(&want).filter(|l| own_line(l)).map(name));
        }
        self.body_all += f.body.values().map(|r| r.count).sum::<u64>();
        self.body_kept += f
            .body
            .iter()
            .filter(|(l, _)| have.contains(l))
            .map(|(_, r)| r.count)
            .sum::<u64>();
    }

    /// Compare the inlinees of `f` with the new build's copies inlined at the
    /// same call sites of `scope` (the new build's `f` in the same context), or
    /// with any copy where the new build does not inline them there.
    fn inlinees(
        &mut self,
        f: &FunctionSamples,
        scope: Option<&Scope>,
        bl: &BinaryLocations,
        complete: bool,
        prefix: &str,
    ) {
        for (site, callees) in &f.callsites {
            for (name, g) in callees {
                let here = scope.and_then(|s| s.inlined.get(&(*site, name.clone())));
                let inner = format!("{prefix}{site}>{name}:");
                match (here, bl.any_copy(name)) {
                    (Some(s), _) => {
                        self.locations(g, &s.locs, true, complete, &inner);
                        self.inlinees(g, Some(s), bl, complete, &inner);
                    }
                    (None, Some(have)) => {
                        self.locations(g, have, false, complete, &inner);
                        self.inlinees(g, None, bl, complete, &inner);
                    }
                    // In the symbol table only (no DWARF): nothing to compare.
                    (None, None) if bl.symbols.contains(name) => {}
                    (None, None) => {
                        self.missing.push(format!("{prefix}{site}>{name}"));
                        self.body_all += g.body.values().map(|r| r.count).sum::<u64>();
                    }
                }
            }
        }
    }
}

/// Check `profile` (read from `profile_path`) against the binary at `binary`.
pub fn check_staleness(profile: &Profile, binary: &Path) -> Result<StalenessReport, ToolError> {
    let bl = binary_locations(binary)?;
    Ok(compare(profile, &bl, binary))
}

fn compare(profile: &Profile, bl: &BinaryLocations, binary: &Path) -> StalenessReport {
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
        let entry = |missing: Vec<String>, new_locations: Vec<String>| StaleFunction {
            name: name.clone(),
            samples: f.total_samples,
            share: share(f.total_samples),
            missing_locations: missing,
            new_locations,
        };
        let own = bl.own.get(name);
        let Some(have) = own.map(|s| &s.locs).or_else(|| bl.inlined.get(name)) else {
            let body: u64 = f.body.values().map(|r| r.count).sum();
            body_all += body;
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
        let mut c = Comparison::default();
        c.locations(f, have, own.is_some(), complete, "");
        c.inlinees(f, own, bl, complete, "");
        body_all += c.body_all;
        body_kept += c.body_kept;
        if c.missing.is_empty() && c.new_locations.is_empty() {
            r.fresh_functions += 1;
            fresh_samples += f.total_samples;
        } else {
            r.stale.push(entry(c.missing, c.new_locations));
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
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use kfdo_afdo::SampleRecord;

    fn frame(func: &str, line: u32, start_line: u32) -> Frame {
        Frame {
            func: func.into(),
            line,
            column: 0,
            start_line,
            discriminator: 0,
        }
    }

    /// `main` (declared at line 20) calls `step` (declared at line 3) at line 24,
    /// and `step`'s code is inlined there, at lines `step_lines`.
    fn build(step_lines: &[u32]) -> BinaryLocations {
        let mut bl = BinaryLocations::default();
        bl.add_stack(&[frame("main", 21, 20)], Discriminators::Encoded);
        for &line in step_lines {
            bl.add_stack(
                &[frame("main", 24, 20), frame("step", line, 3)],
                Discriminators::Encoded,
            );
        }
        bl
    }

    /// The profile of the build with `step` at lines 4 to 6: every location
    /// listed, one of them cold.
    fn profile() -> Profile {
        let mut p = Profile::default();
        let main = p.function_mut("main");
        main.add_total(100);
        main.body
            .insert(LineLocation::new(1, 0), SampleRecord::default());
        let step = main.inlinee_mut(LineLocation::new(4, 0), "step");
        step.add_total(100);
        for (offset, n) in [(1, 60), (2, 40), (3, 0)] {
            step.add_body(LineLocation::new(offset, 0), n);
        }
        p
    }

    #[test]
    fn an_inlinee_that_still_fits_keeps_its_caller_fresh() {
        let r = compare(&profile(), &build(&[4, 5, 6]), Path::new("new"));
        assert_eq!((r.fresh_functions, r.stale.len()), (1, 0));
        assert_eq!(r.location_share, 1.0);
    }

    #[test]
    fn lines_inserted_into_an_inlinee_make_its_caller_stale() {
        // Two lines inserted at the top of `step`: its code now spans lines 4 to 8.
        let r = compare(&profile(), &build(&[4, 5, 6, 7, 8]), Path::new("new"));
        assert_eq!(r.fresh_functions, 0);
        let names: Vec<&str> = r.stale.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["main"]);
        assert_eq!(r.stale[0].new_locations, ["4>step:4", "4>step:5"]);
        assert_eq!(r.matching_share, 0.0);
    }

    #[test]
    fn an_inlinee_without_code_in_the_new_build_is_named() {
        let mut bl = BinaryLocations::default();
        bl.add_stack(&[frame("main", 21, 20)], Discriminators::Encoded);
        bl.add_stack(&[frame("main", 24, 20)], Discriminators::Encoded);
        let r = compare(&profile(), &bl, Path::new("new"));
        assert_eq!(r.stale[0].missing_locations, ["4>step"]);
        assert_eq!(r.location_share, 0.0);
    }
}
