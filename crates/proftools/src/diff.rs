//! What changed between two profiles of one program: the functions whose
//! share of all samples moved most, and the functions added and removed.
//!
//! Shares are of top-level total samples (what `kfdo show` prints on each
//! function's header line), so a function that keeps its count while the rest
//! of the program grows shows as losing share: that is what the compiler sees,
//! since hotness is relative to the profile's summary.
//!
//! Profiles of different programs diff into noise, so that is an error unless
//! forced: no function in common, or a whole-program similarity (the
//! [`crate::overlap`] figure) below `min_similarity`.

use std::path::Path;

use kfdo_afdo::Profile;
use serde::Serialize;

use crate::error::ToolError;
use crate::staleness::StalenessReport;

#[derive(Clone, Debug)]
pub struct DiffOptions {
    /// How many functions each list keeps.
    pub top: usize,
    /// Below this whole-program similarity (0..1) the profiles count as
    /// unrelated.
    pub min_similarity: f64,
    /// Diff even unrelated profiles.
    pub force: bool,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            top: 20,
            min_similarity: 0.10,
            force: false,
        }
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct FunctionChange {
    pub name: String,
    pub old_samples: u64,
    pub new_samples: u64,
    /// Share of the profile's total samples, 0..1.
    pub old_share: f64,
    pub new_share: f64,
    /// `new_share - old_share`.
    pub delta: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct DiffReport {
    pub old: String,
    pub new: String,
    pub old_samples: u64,
    pub new_samples: u64,
    pub common_functions: usize,
    pub added_functions: usize,
    pub removed_functions: usize,
    /// `llvm-profdata overlap`'s whole-program similarity, 0..1.
    pub similarity: f64,
    /// Functions in both, largest |delta| first.
    pub changed: Vec<FunctionChange>,
    /// Functions only in NEW, largest share first.
    pub added: Vec<FunctionChange>,
    /// Functions only in OLD, largest share first.
    pub removed: Vec<FunctionChange>,
    /// With a new binary: how much of OLD still matches it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub staleness: Option<StalenessReport>,
}

fn total(p: &Profile, path: &Path) -> Result<u64, ToolError> {
    match p.total() {
        0 => Err(ToolError::NoSamples {
            path: path.to_owned(),
        }),
        t => Ok(t),
    }
}

/// Diff `old` against `new` (read from `paths`).
pub fn diff_profiles(
    old: &Profile,
    new: &Profile,
    paths: (&Path, &Path),
    opts: &DiffOptions,
) -> Result<DiffReport, ToolError> {
    let (ot, nt) = (total(old, paths.0)?, total(new, paths.1)?);
    let common = old
        .functions
        .keys()
        .filter(|n| new.functions.contains_key(*n))
        .count();
    let overlap = crate::overlap::overlap_profiles(old, new, paths);
    // A profile with header totals but no body samples has no similarity.
    let similarity = overlap.as_ref().map_or(0.0, |o| o.similarity);
    if !opts.force {
        let (o, n) = (paths.0.display(), paths.1.display());
        if common == 0 {
            return Err(ToolError::Unrelated {
                msg: format!(
                    "{o} and {n} have no function in common: they are not profiles of one \
                     program (pass --force to diff them anyway)"
                ),
            });
        }
        if similarity < opts.min_similarity {
            return Err(ToolError::Unrelated {
                msg: format!(
                    "{o} and {n} look like profiles of different programs: {common} function(s) \
                     in common, whole-program similarity {:.3}% is below {:.3}% \
                     (--min-similarity; pass --force to diff them anyway)",
                    similarity * 100.0,
                    opts.min_similarity * 100.0
                ),
            });
        }
    }
    let share = |n: u64, t: u64| n as f64 / t as f64;
    let change = |name: &str| {
        let os = old.functions.get(name).map_or(0, |f| f.total_samples);
        let ns = new.functions.get(name).map_or(0, |f| f.total_samples);
        let (a, b) = (share(os, ot), share(ns, nt));
        FunctionChange {
            name: name.to_owned(),
            old_samples: os,
            new_samples: ns,
            old_share: a,
            new_share: b,
            delta: b - a,
        }
    };
    let mut changed = Vec::new();
    let mut removed = Vec::new();
    for name in old.functions.keys() {
        if new.functions.contains_key(name) {
            changed.push(change(name));
        } else {
            removed.push(change(name));
        }
    }
    let mut added: Vec<FunctionChange> = new
        .functions
        .keys()
        .filter(|n| !old.functions.contains_key(*n))
        .map(|n| change(n))
        .collect();
    let (added_n, removed_n) = (added.len(), removed.len());
    // Ties break by name so the report is the same run to run.
    changed.sort_by(|a, b| {
        b.delta
            .abs()
            .total_cmp(&a.delta.abs())
            .then_with(|| a.name.cmp(&b.name))
    });
    added.sort_by(|a, b| {
        b.new_share
            .total_cmp(&a.new_share)
            .then_with(|| a.name.cmp(&b.name))
    });
    removed.sort_by(|a, b| {
        b.old_share
            .total_cmp(&a.old_share)
            .then_with(|| a.name.cmp(&b.name))
    });
    for v in [&mut changed, &mut added, &mut removed] {
        v.truncate(opts.top);
    }
    Ok(DiffReport {
        old: paths.0.display().to_string(),
        new: paths.1.display().to_string(),
        old_samples: ot,
        new_samples: nt,
        common_functions: common,
        added_functions: added_n,
        removed_functions: removed_n,
        similarity,
        changed,
        added,
        removed,
        staleness: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kfdo_afdo::LineLocation;

    fn prof(fns: &[(&str, u64)]) -> Profile {
        let mut p = Profile::new();
        for &(n, c) in fns {
            let f = p.function_mut(n);
            f.add_total(c);
            f.add_body(LineLocation::new(1, 0), c);
        }
        p
    }

    #[test]
    fn ranks_by_share_change_and_lists_added_and_removed() {
        let old = prof(&[("a", 50), ("b", 30), ("gone", 20)]);
        let new = prof(&[("a", 20), ("b", 60), ("fresh", 20)]);
        let p = (Path::new("old"), Path::new("new"));
        let r = diff_profiles(&old, &new, p, &DiffOptions::default()).unwrap();
        assert_eq!(
            (r.common_functions, r.added_functions, r.removed_functions),
            (2, 1, 1)
        );
        assert_eq!(r.changed[0].name, "a");
        assert!((r.changed[0].delta + 0.3).abs() < 1e-12);
        assert!((r.changed[1].delta - 0.3).abs() < 1e-12);
        assert_eq!(r.added[0].name, "fresh");
        assert_eq!(r.removed[0].name, "gone");
    }

    #[test]
    fn unrelated_profiles_are_an_error_unless_forced() {
        let old = prof(&[("x", 10)]);
        let new = prof(&[("y", 10)]);
        let p = (Path::new("old.prof"), Path::new("new.prof"));
        let e = diff_profiles(&old, &new, p, &DiffOptions::default()).unwrap_err();
        assert!(e.to_string().contains("no function in common"), "{e}");
        let forced = DiffOptions {
            force: true,
            ..Default::default()
        };
        let r = diff_profiles(&old, &new, p, &forced).unwrap();
        assert_eq!((r.added_functions, r.removed_functions), (1, 1));
    }
}
