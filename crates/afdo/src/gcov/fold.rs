//! The profile as GCC 11 and 12 see it, so that what is written is what the
//! compiler will use: nothing is lost to a later entry replacing an earlier
//! one of the same key in GCC's maps.

use crate::model::{FunctionSamples, LineLocation, Profile};

/// The largest count GCC can hold: its `gcov_type` is a signed 64-bit integer.
pub(crate) const MAX_GCOV_COUNT: u64 = i64::MAX as u64;

/// The name GCC looks `name` up by: everything before the first '.'
/// (`get_original_name` in auto-profile.cc cuts both the file's names and the
/// compiled function's assembler name there, so `foo.isra.0`,
/// `foo.constprop.0`, `foo.part.0` and `foo.cold` are all `foo`).
pub fn gcc_name(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// `p` keyed as GCC 11 and 12 key it, which is what [`super::write_gcov`]
/// writes and [`super::parse_gcov`] reads back exactly:
///
/// - names cut at the first '.' ([`gcc_name`]); top-level functions and
///   inlinees that then share a name are merged (counts add: they are
///   different copies of the code, each run separately);
/// - discriminators dropped (GCC 11/12 key positions by line alone): a
///   line's count is the largest of its discriminators' counts (GCC gives a
///   block the largest count of its statements, and the copies a
///   discriminator tells apart are the blocks of one line), its call targets
///   add; inlinees at one line add;
/// - counts capped at `i64::MAX`; totals recomputed as GCC computes them (the
///   sum of the position counts of the function and all its inlinees);
///   inlinees carry no head count (the format has none for them).
pub fn gcc_view(p: &Profile) -> Profile {
    let mut out = Profile::new();
    for fs in p.functions.values() {
        let folded = fold(fs, true);
        match out.functions.get_mut(&folded.name) {
            Some(d) => d.merge(&folded),
            None => {
                out.functions.insert(folded.name.clone(), folded);
            }
        }
    }
    for fs in out.functions.values_mut() {
        cap_and_total(fs);
    }
    out
}

/// One function folded: its own positions by line, its inlinees folded and
/// merged by (line, GCC name). Merging two folded profiles with
/// [`FunctionSamples::merge`] adds their counts line by line.
fn fold(fs: &FunctionSamples, top_level: bool) -> FunctionSamples {
    let mut out = FunctionSamples::new(gcc_name(&fs.name));
    out.head_samples = if top_level { fs.head_samples } else { 0 };
    for (loc, rec) in &fs.body {
        let d = out
            .body
            .entry(LineLocation::new(loc.line_offset, 0))
            .or_default();
        d.count = d.count.max(rec.count);
        for (target, &n) in &rec.call_targets {
            d.add_call_target(gcc_name(target), n);
        }
    }
    for (loc, callees) in &fs.callsites {
        let site = LineLocation::new(loc.line_offset, 0);
        for callee in callees.values() {
            let folded = fold(callee, false);
            let m = out.callsites.entry(site).or_default();
            match m.get_mut(&folded.name) {
                Some(d) => d.merge(&folded),
                None => {
                    m.insert(folded.name.clone(), folded);
                }
            }
        }
    }
    out
}

/// Caps every count at what GCC can hold and sets each total to GCC's sum.
fn cap_and_total(fs: &mut FunctionSamples) -> u64 {
    fs.head_samples = fs.head_samples.min(MAX_GCOV_COUNT);
    let mut total = 0u64;
    for rec in fs.body.values_mut() {
        rec.count = rec.count.min(MAX_GCOV_COUNT);
        for n in rec.call_targets.values_mut() {
            *n = (*n).min(MAX_GCOV_COUNT);
        }
        total = total.saturating_add(rec.count);
    }
    for callees in fs.callsites.values_mut() {
        for c in callees.values_mut() {
            total = total.saturating_add(cap_and_total(c));
        }
    }
    fs.total_samples = total;
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cut_at_the_first_dot() {
        assert_eq!(gcc_name("foo.constprop.0"), "foo");
        assert_eq!(gcc_name("foo.part.0.isra.1"), "foo");
        assert_eq!(gcc_name("_Z3fooi.cold"), "_Z3fooi");
        assert_eq!(gcc_name("main"), "main");
    }

    #[test]
    fn discriminators_fold_by_max_and_clones_add() {
        let mut p = Profile::new();
        let f = p.function_mut("work");
        f.head_samples = 2;
        f.add_body(LineLocation::new(3, 0), 10);
        f.add_body(LineLocation::new(3, 2), 30);
        f.add_call_target(LineLocation::new(4, 1), "g.isra.0", 5);
        f.add_call_target(LineLocation::new(4, 3), "g", 6);
        f.inlinee_mut(LineLocation::new(5, 1), "h")
            .add_body(LineLocation::new(0, 0), 7);
        f.inlinee_mut(LineLocation::new(5, 2), "h.part.0")
            .add_body(LineLocation::new(0, 1), 8);
        p.function_mut("work.constprop.0")
            .add_body(LineLocation::new(3, 0), 1);
        let g = gcc_view(&p);
        assert_eq!(g.len(), 1);
        let w = &g.functions["work"];
        assert_eq!(w.body_count(LineLocation::new(3, 0)), Some(31));
        assert_eq!(w.body[&LineLocation::new(4, 0)].call_targets["g"], 11);
        let h = w.inlinee(LineLocation::new(5, 0), "h").unwrap();
        assert_eq!(h.body_count(LineLocation::new(0, 0)), Some(15));
        assert_eq!(h.total_samples, 15);
        // 31 at line 3, 0 at line 4 (calls only), 15 in the inlinee.
        assert_eq!(w.total_samples, 46);
        assert_eq!(w.head_samples, 2);
    }
}
