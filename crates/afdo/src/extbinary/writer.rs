//! Extbinary writer, byte-identical to `llvm-profdata merge --sample
//! --extbinary` for the same profile.

use std::io::Write;

use rustc_hash::{FxHashMap, FxHashSet};

use super::{flags, put_uleb, sec, MAGIC_EXT_BINARY, VERSION};
use crate::error::AfdoError;
use crate::model::{FunctionSamples, Profile};
use crate::summary::ProfileSummary;

/// Suffix LLVM gives unique internal-linkage names (`FunctionSamples::UniqSuffix`).
const UNIQ_SUFFIX: &str = ".__uniq.";

/// Write `p` as an extbinary profile. Nothing is written if the profile
/// cannot be represented (see [`Profile::validate`]).
pub fn write_extbinary(p: &Profile, mut w: impl Write) -> Result<(), AfdoError> {
    p.validate().map_err(AfdoError::Invalid)?;
    let out = encode(p);
    w.write_all(&out)?;
    w.flush()?;
    Ok(())
}

struct Sec {
    ty: u64,
    flags: u64,
    offset: u64,
    size: u64,
}

/// Header order of the sections (`SectionHdrLayout` for the default layout).
const LAYOUT: [u64; 7] = [
    sec::PROF_SUMMARY,
    sec::NAME_TABLE,
    sec::CS_NAME_TABLE,
    sec::FUNC_OFFSET_TABLE,
    sec::LBR_PROFILE,
    sec::PROFILE_SYMBOL_LIST,
    sec::FUNC_METADATA,
];

fn encode(p: &Profile) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 * p.functions.len() + 1024);
    put_uleb(&mut out, MAGIC_EXT_BINARY);
    put_uleb(&mut out, VERSION);
    out.extend_from_slice(&(LAYOUT.len() as u64).to_le_bytes());
    let table_at = out.len();
    out.resize(table_at + 32 * LAYOUT.len(), 0xff);
    let mut secs: Vec<Sec> = Vec::with_capacity(LAYOUT.len());
    let mut section = |out: &mut Vec<u8>, ty: u64, flags: u64, f: &mut dyn FnMut(&mut Vec<u8>)| {
        let start = out.len();
        f(out);
        secs.push(Sec {
            ty,
            flags,
            offset: start as u64,
            size: (out.len() - start) as u64,
        });
    };

    // Summary.
    let s = ProfileSummary::compute(p);
    section(&mut out, sec::PROF_SUMMARY, 0, &mut |o| {
        put_uleb(o, s.total_count);
        put_uleb(o, s.max_count);
        put_uleb(o, s.max_function_count);
        put_uleb(o, s.num_counts);
        put_uleb(o, s.num_functions);
        put_uleb(o, s.detailed.len() as u64);
        for e in &s.detailed {
            put_uleb(o, e.cutoff as u64);
            put_uleb(o, e.min_count);
            put_uleb(o, e.num_counts);
        }
    });

    // Name table: every function, inlinee and call-target name, sorted.
    // The top-level names come sorted from the map; only the others need
    // sorting, then the two lists are merged.
    let mut unique: FxHashSet<&str> = FxHashSet::default();
    unique.extend(p.functions.keys().map(|k| k.as_str()));
    let mut others: Vec<&str> = Vec::new();
    for fs in p.functions.values() {
        fs.visit(&mut |f, _| {
            if unique.insert(&f.name) {
                others.push(&f.name);
            }
            for r in f.body.values() {
                for k in r.call_targets.keys() {
                    if unique.insert(k) {
                        others.push(k);
                    }
                }
            }
        });
    }
    drop(unique);
    others.sort_unstable();
    let names = merge_sorted(p.functions.keys().map(|k| k.as_str()), &others);
    let index: FxHashMap<&str, u64> = names
        .iter()
        .enumerate()
        .map(|(i, &n)| (n, i as u64))
        .collect();
    let name_flags = if names.iter().any(|n| n.contains(UNIQ_SUFFIX)) {
        flags::NAME_UNIQ_SUFFIX
    } else {
        0
    };
    section(&mut out, sec::NAME_TABLE, name_flags, &mut |o| {
        put_uleb(o, names.len() as u64);
        for n in &names {
            o.extend_from_slice(n.as_bytes());
            o.push(0);
        }
    });

    section(&mut out, sec::CS_NAME_TABLE, 0, &mut |o| put_uleb(o, 0));

    // Function profiles, remembering where each starts.
    let sorted = p.sorted_functions();
    let mut offsets: Vec<(u64, u64)> = Vec::with_capacity(sorted.len());
    section(&mut out, sec::LBR_PROFILE, 0, &mut |o| {
        let start = o.len();
        for fs in &sorted {
            offsets.push((index[fs.name.as_str()], (o.len() - start) as u64));
            put_uleb(o, fs.head_samples);
            write_body(o, fs, &index);
        }
    });

    section(&mut out, sec::PROFILE_SYMBOL_LIST, 0, &mut |_| {});

    section(&mut out, sec::FUNC_OFFSET_TABLE, 0, &mut |o| {
        put_uleb(o, offsets.len() as u64);
        for &(idx, off) in &offsets {
            put_uleb(o, idx);
            put_uleb(o, off);
        }
    });

    section(&mut out, sec::FUNC_METADATA, 0, &mut |_| {});

    // Section header table, in layout order.
    for (i, ty) in LAYOUT.iter().enumerate() {
        let s = secs
            .iter()
            .find(|s| s.ty == *ty)
            .expect("every section written");
        let at = table_at + 32 * i;
        for (j, v) in [s.ty, s.flags, s.offset, s.size].into_iter().enumerate() {
            out[at + 8 * j..at + 8 * j + 8].copy_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// Merge two sorted, disjoint lists of names.
fn merge_sorted<'a>(a: impl Iterator<Item = &'a str>, b: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::with_capacity(b.len() + a.size_hint().0);
    let mut b = b.iter().copied().peekable();
    for x in a {
        while let Some(&y) = b.peek() {
            if y < x {
                out.push(y);
                b.next();
            } else {
                break;
            }
        }
        out.push(x);
    }
    out.extend(b);
    out
}

fn write_body(o: &mut Vec<u8>, fs: &FunctionSamples, index: &FxHashMap<&str, u64>) {
    put_uleb(o, index[fs.name.as_str()]);
    put_uleb(o, fs.total_samples);
    put_uleb(o, fs.body.len() as u64);
    for (loc, rec) in &fs.body {
        put_uleb(o, loc.line_offset as u64);
        put_uleb(o, loc.discriminator as u64);
        put_uleb(o, rec.count);
        put_uleb(o, rec.call_targets.len() as u64);
        for (name, c) in rec.sorted_call_targets() {
            put_uleb(o, index[name]);
            put_uleb(o, c);
        }
    }
    let n: usize = fs.callsites.values().map(|m| m.len()).sum();
    put_uleb(o, n as u64);
    for (loc, m) in &fs.callsites {
        for callee in m.values() {
            put_uleb(o, loc.line_offset as u64);
            put_uleb(o, loc.discriminator as u64);
            write_body(o, callee, index);
        }
    }
}
