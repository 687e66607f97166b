//! Writing GCC's AutoFDO profile.

use std::collections::BTreeMap;
use std::io::Write;

use super::fold::gcc_view;
use super::layout::{
    GcovVersion, GCOV_DATA_MAGIC, HIST_TYPE_INDIR_CALL, TAG_FILE_NAMES, TAG_FUNCTION,
    TAG_MODULE_GROUPING,
};
use crate::error::AfdoError;
use crate::model::{FunctionSamples, LineLocation, Profile};

/// Writes `p` as the AutoFDO profile GCC release `version` reads, keyed as
/// GCC 11/12 key it ([`super::gcc_view`]: names cut at the first '.',
/// discriminators folded into their line). The file is built in memory and
/// written in one piece, so nothing is written when the profile cannot be
/// represented (a line offset above 0xffff, a bad name).
pub fn write_gcov(p: &Profile, version: GcovVersion, mut w: impl Write) -> Result<(), AfdoError> {
    p.validate().map_err(AfdoError::Invalid)?;
    let g = gcc_view(p);
    let strings = StringTable::of(&g);
    if strings.names[1..].iter().any(|n| n.is_empty()) {
        return Err(AfdoError::Invalid(
            "a function or call target name starts with '.': GCC cuts names at their first '.', \
             which leaves nothing to look it up by"
                .to_owned(),
        ));
    }

    let mut out = Words::default();
    out.u32(GCOV_DATA_MAGIC);
    out.u32(version.number());
    out.u32(0);

    let names = out.section(TAG_FILE_NAMES);
    out.u32(strings.names.len() as u32);
    for name in &strings.names {
        out.string(name, version);
    }
    out.end_section(names, version);

    let funcs = out.section(TAG_FUNCTION);
    out.u32(g.len() as u32);
    for fs in g.sorted_functions() {
        out.counter(fs.head_samples);
        instance(&mut out, fs, &strings);
    }
    out.end_section(funcs, version);

    // GCC 11/12 read a module count and assert it is zero (LIPO's modules are gone).
    let modules = out.section(TAG_MODULE_GROUPING);
    out.u32(0);
    out.end_section(modules, version);

    w.write_all(&out.bytes)?;
    w.flush()?;
    Ok(())
}

/// One function instance and, recursively, its inlinees (GCC's
/// `read_function_instance` order: name, counts, positions, call sites).
fn instance(out: &mut Words, fs: &FunctionSamples, strings: &StringTable) {
    out.u32(strings.index(&fs.name));
    out.u32(fs.body.len() as u32);
    let sites: usize = fs.callsites.values().map(|m| m.len()).sum();
    out.u32(sites as u32);
    for (loc, rec) in &fs.body {
        out.u32(offset(*loc));
        out.u32(rec.call_targets.len() as u32);
        out.counter(rec.count);
        for (target, n) in rec.sorted_call_targets() {
            out.u32(HIST_TYPE_INDIR_CALL);
            out.counter(strings.index(target) as u64);
            out.counter(n);
        }
    }
    for (loc, callees) in &fs.callsites {
        for callee in callees.values() {
            out.u32(offset(*loc));
            instance(out, callee, strings);
        }
    }
}

/// GCC's combined location: line offset in the high 16 bits, discriminator
/// in the low 16 (0 after folding). `validate` bounds the offset.
fn offset(loc: LineLocation) -> u32 {
    loc.line_offset << 16 | (loc.discriminator & 0xffff)
}

/// Every name the profile uses, sorted, with an empty placeholder at index 0:
/// GCC's `string_table::get_name` asserts `index > 0`, so a callee or call
/// target at index 0 would stop the compiler with an internal error.
struct StringTable {
    names: Vec<String>,
    index: BTreeMap<String, u32>,
}

impl StringTable {
    fn of(p: &Profile) -> StringTable {
        let mut set = std::collections::BTreeSet::new();
        for fs in p.functions.values() {
            fs.visit(&mut |f, _| {
                set.insert(f.name.clone());
                for rec in f.body.values() {
                    set.extend(rec.call_targets.keys().cloned());
                }
            });
        }
        let names: Vec<String> = std::iter::once(String::new()).chain(set).collect();
        let index = names
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, n)| (n.clone(), i as u32))
            .collect();
        StringTable { names, index }
    }

    fn index(&self, name: &str) -> u32 {
        self.index[name]
    }
}

/// The file being built: little-endian words, counters as two words (low,
/// high), strings in the release's layout.
#[derive(Default)]
struct Words {
    bytes: Vec<u8>,
}

impl Words {
    fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    fn counter(&mut self, v: u64) {
        self.u32(v as u32);
        self.u32((v >> 32) as u32);
    }

    fn string(&mut self, s: &str, version: GcovVersion) {
        match version {
            // gcov_write_string of GCC 11: (len + 4) / 4 words, NUL-padded.
            GcovVersion::Gcc11 => {
                let words = (s.len() + 4) / 4;
                self.u32(words as u32);
                self.bytes.extend_from_slice(s.as_bytes());
                self.bytes.resize(self.bytes.len() + words * 4 - s.len(), 0);
            }
            // gcov_write_string of GCC 12: len + 1 bytes, the NUL included.
            GcovVersion::Gcc12 => {
                self.u32(s.len() as u32 + 1);
                self.bytes.extend_from_slice(s.as_bytes());
                self.bytes.push(0);
            }
        }
    }

    /// Starts a section: its tag and a length to fill in; returns where the
    /// length is.
    fn section(&mut self, tag: u32) -> usize {
        self.u32(tag);
        self.u32(0);
        self.bytes.len() - 4
    }

    /// Fills in the section's length, in words for GCC 11 and in bytes for
    /// GCC 12 (each release's gcov-io unit; GCC skips it when reading).
    fn end_section(&mut self, at: usize, version: GcovVersion) {
        let bytes = self.bytes.len() - (at + 4);
        let len = match version {
            GcovVersion::Gcc11 => bytes.div_ceil(4),
            GcovVersion::Gcc12 => bytes,
        } as u32;
        self.bytes[at..at + 4].copy_from_slice(&len.to_le_bytes());
    }
}
