//! `llvm-profdata merge --sample`, count for count.
//!
//! What LLVM does, and so what this does:
//! - every input's functions are merged into one map keyed by name; a function
//!   seen for the first time is merged into an empty one, so even a single
//!   input is scaled by its weight;
//! - each count (total, head, body, call target; inlinees recursively) becomes
//!   `count * weight + existing`, the product and the sum both saturating at
//!   `u64::MAX` (LLVM's `SaturatingMultiplyAdd`, which reports
//!   `counter_overflow` and goes on);
//! - inlinees at the same call site merge by callee name;
//! - the summary is not merged: the writer computes it from the merged
//!   profile (kfdo_afdo's writers do the same);
//! - any unreadable input fails the whole merge (LLVM's default
//!   `--failure-mode=any`); nothing is written then.

use std::path::{Path, PathBuf};

use kfdo_afdo::{FunctionSamples, Profile, SampleRecord};

use crate::error::ToolError;

/// One input of a merge and the weight its counts are multiplied by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightedInput {
    pub path: PathBuf,
    pub weight: u64,
}

/// Parse `W:FILE` (or llvm-profdata's `W,FILE`): W a positive integer.
pub fn parse_weighted(arg: &str) -> Result<WeightedInput, ToolError> {
    let bad = |why: &str| ToolError::BadWeight {
        arg: arg.to_owned(),
        why: why.to_owned(),
    };
    // The first separator splits, so a file name may hold ':' or ','.
    let cut = arg
        .find([':', ','])
        .ok_or_else(|| bad("no ':' after the weight"))?;
    let (w, file) = (&arg[..cut], &arg[cut + 1..]);
    let weight: u64 = w
        .parse()
        .map_err(|_| bad(&format!("weight {w:?} is not an integer")))?;
    if weight < 1 {
        return Err(bad("the weight must be at least 1"));
    }
    if file.is_empty() {
        return Err(bad("no file after the weight"));
    }
    Ok(WeightedInput {
        path: PathBuf::from(file),
        weight,
    })
}

/// How many counts saturated while merging (LLVM warns `counter overflow`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeStats {
    pub inputs: usize,
    pub overflows: u64,
}

/// Read every input (all of them first: one unreadable input fails the merge
/// before anything is written) and merge them in order.
pub fn merge_files(inputs: &[WeightedInput]) -> Result<(Profile, MergeStats), ToolError> {
    let profiles: Vec<(Profile, u64)> = inputs
        .iter()
        .map(|i| Ok((read_input(&i.path)?, i.weight)))
        .collect::<Result<_, ToolError>>()?;
    let mut out = Profile::new();
    let mut stats = MergeStats {
        inputs: profiles.len(),
        overflows: 0,
    };
    for (p, w) in &profiles {
        stats.overflows += merge_into(&mut out, p, *w);
    }
    Ok((out, stats))
}

fn read_input(path: &Path) -> Result<Profile, ToolError> {
    crate::read::read(path)
}

/// Merge `src` scaled by `weight` into `dst`; returns how many counts saturated.
pub fn merge_into(dst: &mut Profile, src: &Profile, weight: u64) -> u64 {
    let mut overflows = 0;
    // Flow-sensitive discriminators are a property of the build: any input
    // that has them makes the merged profile say so.
    dst.fs_discriminators |= src.fs_discriminators;
    for (name, fs) in &src.functions {
        merge_fn(dst.function_mut(name), fs, weight, &mut overflows);
    }
    overflows
}

/// `count * weight + acc`, saturating, counting saturations.
fn mul_add(count: u64, weight: u64, acc: u64, overflows: &mut u64) -> u64 {
    match count.checked_mul(weight).and_then(|p| p.checked_add(acc)) {
        Some(v) => v,
        None => {
            *overflows += 1;
            u64::MAX
        }
    }
}

fn merge_fn(dst: &mut FunctionSamples, src: &FunctionSamples, w: u64, ov: &mut u64) {
    dst.total_samples = mul_add(src.total_samples, w, dst.total_samples, ov);
    dst.head_samples = mul_add(src.head_samples, w, dst.head_samples, ov);
    for (loc, rec) in &src.body {
        merge_record(dst.body.entry(*loc).or_default(), rec, w, ov);
    }
    for (loc, callees) in &src.callsites {
        for (name, inl) in callees {
            merge_fn(dst.inlinee_mut(*loc, name), inl, w, ov);
        }
    }
}

fn merge_record(dst: &mut SampleRecord, src: &SampleRecord, w: u64, ov: &mut u64) {
    dst.count = mul_add(src.count, w, dst.count, ov);
    for (callee, &n) in &src.call_targets {
        let slot = dst.call_targets.entry(callee.clone()).or_insert(0);
        *slot = mul_add(n, w, *slot, ov);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kfdo_afdo::LineLocation;

    fn sample() -> Profile {
        let mut p = Profile::new();
        let f = p.function_mut("f");
        f.add_total(10);
        f.add_head(2);
        f.add_body(LineLocation::new(1, 0), 4);
        f.add_call_target(LineLocation::new(2, 3), "g", 5);
        let i = f.inlinee_mut(LineLocation::new(3, 0), "h");
        i.add_total(6);
        i.add_body(LineLocation::new(0, 0), 6);
        p
    }

    #[test]
    fn weights_scale_every_count_even_for_one_input() {
        let mut out = Profile::new();
        assert_eq!(merge_into(&mut out, &sample(), 3), 0);
        let f = &out.functions["f"];
        assert_eq!((f.total_samples, f.head_samples), (30, 6));
        assert_eq!(f.body_count(LineLocation::new(1, 0)), Some(12));
        assert_eq!(f.body[&LineLocation::new(2, 3)].call_targets["g"], 15);
        let h = f.inlinee(LineLocation::new(3, 0), "h").unwrap();
        assert_eq!((h.name.as_str(), h.total_samples), ("h", 18));
        merge_into(&mut out, &sample(), 1);
        assert_eq!(out.functions["f"].total_samples, 40);
    }

    #[test]
    fn saturates_and_counts_overflows() {
        let mut out = Profile::new();
        let ov = merge_into(&mut out, &sample(), u64::MAX / 4);
        // 10, 5, 6 and 6 times u64::MAX/4 overflow; 2 and 4 times it do not.
        assert_eq!(ov, 4);
        assert_eq!(
            out.functions["f"].body_count(LineLocation::new(1, 0)),
            Some((u64::MAX / 4) * 4)
        );
        assert_eq!(out.functions["f"].total_samples, u64::MAX);
        assert_eq!(out.functions["f"].head_samples, (u64::MAX / 4) * 2);
    }

    #[test]
    fn weighted_argument_forms() {
        let w = parse_weighted("3:a.prof").unwrap();
        assert_eq!((w.weight, w.path), (3, PathBuf::from("a.prof")));
        assert_eq!(parse_weighted("2,x:y").unwrap().path, PathBuf::from("x:y"));
        for bad in ["0:a", "a.prof", "x:a", "3:", "-1:a"] {
            let e = parse_weighted(bad).unwrap_err().to_string();
            assert!(e.contains("bad weighted input"), "{bad}: {e}");
        }
    }
}
