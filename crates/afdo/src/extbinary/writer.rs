//! Extbinary writer, byte-identical to `llvm-profdata merge --sample
//! --extbinary` for the same profile.

use std::io::Write;

use rustc_hash::FxHashMap;

use super::layout::{flags, put_uleb, sec, MAGIC_EXT_BINARY, VERSION};
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
    let summary_flags = if p.fs_discriminators {
        flags::SUMMARY_FS_DISCRIMINATOR
    } else {
        0
    };
    section(&mut out, sec::PROF_SUMMARY, summary_flags, &mut |o| {
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
    // One pass interns each name occurrence, in exactly the order the
    // profile section will need them, so writing needs no string lookups.
    // Top-level names are interned first, in map (= sorted) order; only the
    // other names need sorting, then the two lists are merged into ranks.
    let sorted = p.sorted_functions();
    let mut names = Interner::default();
    for k in p.functions.keys() {
        names.id(k);
    }
    let ntop = names.list.len();
    for fs in &sorted {
        names.collect(fs);
    }
    let Interner { list, stream, .. } = names;
    let mut others: Vec<u32> = (ntop as u32..list.len() as u32).collect();
    others.sort_unstable_by(|&a, &b| list[a as usize].cmp(list[b as usize]));
    let mut rank = vec![0u64; list.len()];
    let mut names: Vec<&str> = Vec::with_capacity(list.len());
    {
        let mut o = others.iter().copied().peekable();
        for top in 0..ntop {
            while let Some(&b) = o.peek() {
                if list[b as usize] < list[top] {
                    rank[b as usize] = names.len() as u64;
                    names.push(list[b as usize]);
                    o.next();
                } else {
                    break;
                }
            }
            rank[top] = names.len() as u64;
            names.push(list[top]);
        }
        for b in o {
            rank[b as usize] = names.len() as u64;
            names.push(list[b as usize]);
        }
    }
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
    let mut offsets: Vec<(u64, u64)> = Vec::with_capacity(sorted.len());
    section(&mut out, sec::LBR_PROFILE, 0, &mut |o| {
        let start = o.len();
        let mut ids = stream.iter().map(|&i| rank[i as usize]);
        for fs in &sorted {
            let off = (o.len() - start) as u64;
            put_uleb(o, fs.head_samples);
            let idx = write_body(o, fs, &mut ids);
            offsets.push((idx, off));
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

/// Names by first occurrence, and the stream of occurrences.
#[derive(Default)]
struct Interner<'a> {
    ids: FxHashMap<&'a str, u32>,
    list: Vec<&'a str>,
    stream: Vec<u32>,
}

impl<'a> Interner<'a> {
    fn id(&mut self, n: &'a str) -> u32 {
        let next = self.list.len() as u32;
        let id = *self.ids.entry(n).or_insert(next);
        if id == next {
            self.list.push(n);
        }
        id
    }

    /// Intern the names of `fs` in the order [`write_body`] writes them.
    fn collect(&mut self, fs: &'a FunctionSamples) {
        let id = self.id(&fs.name);
        self.stream.push(id);
        for rec in fs.body.values() {
            for (t, _) in rec.sorted_call_targets() {
                let id = self.id(t);
                self.stream.push(id);
            }
        }
        for m in fs.callsites.values() {
            for callee in m.values() {
                self.collect(callee);
            }
        }
    }
}

/// Write one function (or inlinee) body, taking its name indices from
/// `ids`; returns the function's own name index.
fn write_body(o: &mut Vec<u8>, fs: &FunctionSamples, ids: &mut impl Iterator<Item = u64>) -> u64 {
    let idx = ids.next().expect("interned");
    put_uleb(o, idx);
    put_uleb(o, fs.total_samples);
    put_uleb(o, fs.body.len() as u64);
    for (loc, rec) in &fs.body {
        put_uleb(o, loc.line_offset as u64);
        put_uleb(o, loc.discriminator as u64);
        put_uleb(o, rec.count);
        put_uleb(o, rec.call_targets.len() as u64);
        for (_, c) in rec.sorted_call_targets() {
            put_uleb(o, ids.next().expect("interned"));
            put_uleb(o, c);
        }
    }
    let n: usize = fs.callsites.values().map(|m| m.len()).sum();
    put_uleb(o, n as u64);
    for (loc, m) in &fs.callsites {
        for callee in m.values() {
            put_uleb(o, loc.line_offset as u64);
            put_uleb(o, loc.discriminator as u64);
            write_body(o, callee, ids);
        }
    }
    idx
}

#[cfg(test)]
mod tests {
    use super::super::reader::parse_extbinary;
    use super::*;

    #[test]
    fn flow_sensitive_discriminators_survive_a_round_trip() {
        let mut p = Profile::new();
        p.function_mut("f")
            .add_body(crate::LineLocation::new(1, 257), 7);
        for fs in [false, true] {
            p.fs_discriminators = fs;
            let bytes = encode(&p);
            let back = parse_extbinary(&bytes, "mem").unwrap();
            assert_eq!(back, p);
            // The flag sits where LLVM puts it: the summary section's entry, the
            // section-specific half of its flags (first entry after magic, version and
            // the section count).
            let mut head = Vec::new();
            put_uleb(&mut head, MAGIC_EXT_BINARY);
            put_uleb(&mut head, VERSION);
            let entry = head.len() + 8;
            let ty = u64::from_le_bytes(bytes[entry..entry + 8].try_into().unwrap());
            let fl = u64::from_le_bytes(bytes[entry + 8..entry + 16].try_into().unwrap());
            assert_eq!(ty, sec::PROF_SUMMARY);
            assert_eq!(fl & flags::SUMMARY_FS_DISCRIMINATOR != 0, fs);
        }
    }
}
