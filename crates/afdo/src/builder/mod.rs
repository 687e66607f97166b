//! Building a line-based AutoFDO profile from a raw profile and the binary's
//! DWARF, with the semantics of llvm-profgen's `ProfileGenerator` (so that the
//! compiler sees the same numbers whichever converter made the profile):
//!
//! - **Body samples.** Each instruction's count is the sum of the fall-through
//!   ranges that cover it ([`ranges::disjoint_ranges`]). The instruction's
//!   inline stack (outermost first) selects a profile: the top-level function,
//!   then the inlinee at each call site. Every profile on the way gets
//!   `count * instruction size` added to its total (llvm-profgen accumulates
//!   per byte). The leaf location (line offset, base discriminator; the whole
//!   discriminator when they are flow-sensitive) keeps the MAX of
//!   `count * duplication factor` over its instructions (with
//!   `ip_only`: the SUM of counts, as `llvm-profgen --leading-ip-only` does).
//! - **Call targets and head samples.** A taken branch that lands on a
//!   function's entry adds its count to that function's head samples and, when
//!   its source has debug info, a call target at the source's leaf location.
//!   A call site's body count is then raised to the sum of its call targets.
//!
//! Accumulation runs in parallel over chunks of instructions. It is exact:
//! totals add and body samples take the maximum, both order-independent.

mod discriminator;
mod functions;
mod names;
mod ranges;

pub use discriminator::{
    base_discriminator, duplication_factor, Discriminators, FS_DISCRIMINATOR_SYMBOL,
};
pub use functions::Functions;
pub use names::canonical_name;
pub use ranges::disjoint_ranges;

use crate::model::{FunctionSamples, LineLocation, Profile};
use kfdo_aggregate::RawProfile;
use kfdo_elf::{Code, Frame, Symbolizer};
use rayon::prelude::*;

/// How counts at one source location combine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Branch-stack ranges: MAX over the location's instructions, scaled by
    /// the duplication factor.
    #[default]
    Lbr,
    /// Sampled IPs alone: SUM over the location's instructions.
    IpOnly,
}

/// Numbers about the build, for the user's summary line and `--json`.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct BuildStats {
    pub disjoint_ranges: usize,
    pub instructions: usize,
    pub instructions_without_debug_info: usize,
    pub branches_to_function_entries: usize,
}

/// Build the profile. `functions` comes from the symbolizer's function ranges.
pub fn build_profile(
    raw: &RawProfile,
    code: &Code,
    sym: &Symbolizer<'_>,
    functions: &Functions,
    mode: Mode,
    disc: Discriminators,
) -> (Profile, BuildStats) {
    let mut stats = BuildStats::default();

    // Zero-fill every function some range starts in, then split into disjoint ranges.
    let mut all: Vec<((u64, u64), u64)> = raw.ranges.iter().map(|(&k, &v)| (k, v)).collect();
    let mut zero: Vec<(u64, u64)> = Vec::new();
    for &(first, _) in raw.ranges.keys() {
        zero.extend(
            functions
                .ranges_of_function_at(first)
                .iter()
                .map(|&(s, e)| (s, e - 1)),
        );
    }
    zero.sort_unstable();
    zero.dedup();
    all.extend(zero.into_iter().map(|r| (r, 0)));
    let disjoint = disjoint_ranges(all);
    stats.disjoint_ranges = disjoint.len();

    // Every instruction in a disjoint range, with its count.
    let mut insns: Vec<(u64, u8, u64)> = Vec::new();
    for &((first, last), count) in &disjoint {
        let Some(mut i) = code.insn_at_or_after(first) else {
            continue;
        };
        while i < code.len() && code.addr(i) <= last {
            insns.push((code.addr(i), code.size(i), count));
            i += 1;
        }
    }
    stats.instructions = insns.len();

    let chunk = (insns.len() / (rayon::current_num_threads() * 8)).max(1024);
    let (mut profile, missing) = insns
        .par_chunks(chunk)
        .map(|part| {
            let mut p = Profile::new();
            let mut frames = Vec::new();
            let mut missing = 0usize;
            for &(addr, size, count) in part {
                frames.clear();
                sym.frames(addr, &mut frames);
                if frames.is_empty() {
                    missing += 1;
                    continue;
                }
                let leaf = leaf_profile(&mut p, &frames, count.saturating_mul(size as u64), disc);
                add_body(leaf, frames.last().unwrap(), count, mode, disc);
            }
            (p, missing)
        })
        .reduce(
            || (Profile::new(), 0),
            |(mut a, ma), (b, mb)| {
                merge_partial(&mut a, b, mode);
                (a, ma + mb)
            },
        );
    stats.instructions_without_debug_info = missing;

    // Branches onto function entries: head samples and call targets. Sorted so
    // that profiles are created in a deterministic order.
    let mut branches: Vec<_> = raw.branches.iter().map(|(&k, &v)| (k, v)).collect();
    branches.sort_unstable();
    let mut frames: Vec<Frame> = Vec::new();
    for ((from, to), count) in branches {
        let Some(callee) = functions.callee_at(to) else {
            continue;
        };
        stats.branches_to_function_entries += 1;
        frames.clear();
        sym.frames(from, &mut frames);
        if let Some(last) = frames.last() {
            let loc = LineLocation::new(last.line_offset(), disc.key(last.discriminator));
            leaf_profile(&mut profile, &frames, 0, disc).add_call_target(loc, callee, count);
        }
        profile.function_mut(callee).add_head(count);
    }
    for fs in profile.functions.values_mut() {
        raise_call_site_counts(fs);
    }
    profile.fs_discriminators = disc == Discriminators::FlowSensitive;
    (profile, stats)
}

/// A call site ran at least as often as the calls counted from it: raise its
/// body count to the sum of its call targets (llvm-profgen's
/// `updateCallsiteSamples`). The MAX rule can leave it lower when the call
/// instruction sits in a short range that fewer samples cover. llvm-profgen-19
/// does this for top-level functions only, not inside inlinee profiles; we
/// match it (the conformance tests check) so both converters agree.
fn raise_call_site_counts(fs: &mut FunctionSamples) {
    for rec in fs.body.values_mut() {
        let calls = rec
            .call_targets
            .values()
            .fold(0u64, |a, &b| a.saturating_add(b));
        rec.count = rec.count.max(calls);
    }
}

/// Walk `frames` (outermost first) down to the leaf's profile, adding `total`
/// to every profile on the way.
fn leaf_profile<'p>(
    p: &'p mut Profile,
    frames: &[Frame],
    total: u64,
    disc: Discriminators,
) -> &'p mut FunctionSamples {
    let mut fs = p.function_mut(&frames[0].func);
    fs.add_total(total);
    for pair in frames.windows(2) {
        let (caller, callee) = (&pair[0], &pair[1]);
        let site = LineLocation::new(caller.line_offset(), disc.key(caller.discriminator));
        fs = fs.inlinee_mut(site, &callee.func);
        fs.add_total(total);
    }
    fs
}

fn add_body(fs: &mut FunctionSamples, leaf: &Frame, count: u64, mode: Mode, disc: Discriminators) {
    let loc = LineLocation::new(leaf.line_offset(), disc.key(leaf.discriminator));
    match mode {
        Mode::IpOnly => fs.add_body(loc, count),
        Mode::Lbr => {
            let scaled = count.saturating_mul(disc.duplication(leaf.discriminator) as u64);
            let prev = fs.body_count(loc).unwrap_or(0);
            // `prev <= scaled`, not `<`: an equal count still creates the record.
            if prev <= scaled {
                fs.add_body(loc, scaled - prev);
            }
        }
    }
}

/// Combine two partial profiles built from disjoint instruction sets: totals
/// add; body samples take the maximum in LBR mode (each side already holds its
/// maximum) and add in IP-only mode.
fn merge_partial(dst: &mut Profile, src: Profile, mode: Mode) {
    for (name, fs) in src.functions {
        match dst.functions.get_mut(&name) {
            Some(d) => merge_partial_fn(d, fs, mode),
            None => {
                dst.functions.insert(name, fs);
            }
        }
    }
}

fn merge_partial_fn(dst: &mut FunctionSamples, src: FunctionSamples, mode: Mode) {
    dst.add_total(src.total_samples);
    dst.add_head(src.head_samples);
    for (loc, rec) in src.body {
        let d = dst.body.entry(loc).or_default();
        d.count = match mode {
            Mode::Lbr => d.count.max(rec.count),
            Mode::IpOnly => d.count.saturating_add(rec.count),
        };
    }
    for (loc, callees) in src.callsites {
        let site = dst.callsites.entry(loc).or_default();
        for (name, fs) in callees {
            match site.get_mut(&name) {
                Some(d) => merge_partial_fn(d, fs, mode),
                None => {
                    site.insert(name, fs);
                }
            }
        }
    }
}
