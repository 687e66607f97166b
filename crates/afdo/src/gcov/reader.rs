//! Reading GCC's AutoFDO profile, strictly: where GCC reads zeros past the end
//! of a truncated file and carries on, this reader names the byte offset.

use std::path::Path;

use super::fold::MAX_GCOV_COUNT;
use super::layout::{has_magic, GcovVersion, TAG_FILE_NAMES, TAG_FUNCTION};
use crate::error::AfdoError;
use crate::model::{FunctionSamples, LineLocation, Profile};

/// Inline nesting deeper than this is a corrupt file, not a program (and
/// would otherwise exhaust the stack).
const MAX_DEPTH: usize = 512;

/// Reads the file at `path`; see [`parse_gcov`].
pub fn read_gcov(path: &Path, expect: Option<GcovVersion>) -> Result<Profile, AfdoError> {
    let data = std::fs::read(path).map_err(|source| AfdoError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_gcov(&data, &path.display().to_string(), expect)
}

/// Parses a GCC AutoFDO profile; `file` names it in errors. With `expect`,
/// a file of another version is refused (the compiler of that release would
/// refuse it too); without, either known version is read. Names are kept as
/// stored (GCC cuts them at the first '.' when it reads them); discriminators
/// are kept; totals are computed as GCC computes them; inlinees have no head
/// count. The module section and anything after it are not needed.
pub fn parse_gcov(
    data: &[u8],
    file: &str,
    expect: Option<GcovVersion>,
) -> Result<Profile, AfdoError> {
    let mut r = Reader {
        data,
        pos: 0,
        file,
        version: GcovVersion::Gcc12,
        names: Vec::new(),
    };
    if !has_magic(data) {
        let msg = if data.get(..4) == Some(b"gcda") {
            "big-endian gcda magic: GCC on x86 reads its AutoFDO profile in little-endian order; \
             write it on (or for) a little-endian machine"
                .to_owned()
        } else {
            "not a GCC AutoFDO profile (no \"gcda\" magic 0x67636461); \
             write one with `kfdo profile --format gcov --gcc-version N`"
                .to_owned()
        };
        return Err(r.err_at(0, msg));
    }
    r.pos = 4;
    let number = r.u32("the version")?;
    let version = check_version(&r, number, expect)?;
    match sections(data, file, version) {
        // create_gcov --gcov_version=2 writes GCC 11's strings under GCC 12's
        // number; gcc-12 crashes on such a file (a segmentation fault in
        // strlen when we tried), so say what it is rather than where it broke.
        Err(e)
            if version == GcovVersion::Gcc12
                && sections(data, file, GcovVersion::Gcc11).is_ok() =>
        {
            Err(r.err_at(
                TABLE_AT,
                format!(
                    "version 2 (GCC 12) but the strings are stored as GCC 11 stores them \
                     (lengths in 4-byte words), as create_gcov --gcov_version=2 writes them; \
                     GCC 12 misreads such a file (gcc-12 crashed on one): write it with \
                     `kfdo profile --format gcov --gcc-version 12` (reading it as GCC 12's \
                     layout failed: {e})"
                ),
            ))
        }
        other => other,
    }
}

/// Where the string table starts: after the magic, the version and the stamp.
const TABLE_AT: usize = 12;

/// Everything after the version word, in `version`'s layout.
fn sections(data: &[u8], file: &str, version: GcovVersion) -> Result<Profile, AfdoError> {
    let mut r = Reader {
        data,
        pos: 8,
        file,
        version,
        names: Vec::new(),
    };
    r.u32("the stamp")?;

    r.tag(TAG_FILE_NAMES, "the string table")?;
    r.u32("the string table's length")?;
    let n = r.u32("the number of strings")?;
    for i in 0..n {
        let s = r.string(i)?;
        r.names.push(s);
    }

    r.tag(TAG_FUNCTION, "the function profiles")?;
    r.u32("the function section's length")?;
    let n = r.u32("the number of functions")?;
    let mut p = Profile::new();
    for _ in 0..n {
        let head = r.counter("a head count")?;
        let mut fs = r.instance(0)?;
        fs.head_samples = head;
        // GCC keeps the last profile of a name (`map_[name] = s`).
        p.functions.insert(fs.name.clone(), fs);
    }

    // The module section: GCC reads zeros at the end of the file, so it may be
    // absent; when present its count must be 0 (GCC asserts it).
    if r.pos < data.len() {
        r.u32("the module section's tag")?;
        r.u32("the module section's length")?;
        let at = r.pos;
        let modules = r.u32("the number of modules")?;
        if modules != 0 {
            return Err(r.err_at(
                at,
                format!(
                    "{modules} modules: GCC 11/12 assert the module count is 0 and stop with an \
                     internal compiler error (LIPO's module groups are not supported); \
                     rewrite the profile without them"
                ),
            ));
        }
    }
    Ok(p)
}

/// The version check, with the message that says what the file is and what to do.
fn check_version(
    r: &Reader<'_>,
    number: u32,
    expect: Option<GcovVersion>,
) -> Result<GcovVersion, AfdoError> {
    let regen = |gcc: u32| {
        format!("write the profile with `kfdo profile --format gcov --gcc-version {gcc}` (or create_gcov --gcov_version={})",
            if gcc == 11 { 1 } else { 2 })
    };
    match (GcovVersion::from_number(number), expect) {
        (Some(v), None) => Ok(v),
        (Some(v), Some(e)) if v == e => Ok(v),
        (Some(v), Some(e)) => Err(r.err_at(
            4,
            format!(
                "AutoFDO profile version {} is {}'s format, but GCC {} was asked for: it reads \
                 version {} only and rejects this file (\"AutoFDO profile version {} does not \
                 match {}\"); {}",
                v.number(),
                v.releases(),
                e.gcc_major(),
                e.number(),
                v.number(),
                e.number(),
                regen(e.gcc_major())
            ),
        )),
        (None, e) => {
            let ascii = number.to_be_bytes();
            let what = if ascii.iter().all(|b| b.is_ascii_graphic()) {
                format!(
                    "version {number:#x} (\"{}\") is a GCOV_VERSION, the version of GCC's coverage \
                     files (.gcda from -fprofile-arcs; create_gcov writes GCC 4.7's \"407*\" by \
                     default), which no GCC release's -fauto-profile accepts",
                    String::from_utf8_lossy(&ascii)
                )
            } else {
                format!("version {number} is no GCC release's AutoFDO profile version")
            };
            let gcc = e.map_or(12, |v| v.gcc_major());
            Err(r.err_at(
                4,
                format!(
                    "{what} (GCC 11 reads version 1, GCC 12 version 2); {}",
                    regen(gcc)
                ),
            ))
        }
    }
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    file: &'a str,
    version: GcovVersion,
    names: Vec<String>,
}

impl Reader<'_> {
    fn err_at(&self, offset: usize, msg: String) -> AfdoError {
        AfdoError::Binary {
            file: self.file.to_owned(),
            offset: offset as u64,
            msg,
        }
    }

    fn bytes(&mut self, n: usize, what: &str) -> Result<&[u8], AfdoError> {
        if self.data.len() - self.pos < n {
            return Err(self.err_at(
                self.pos,
                format!(
                    "truncated: the file ends ({} bytes) inside {what} (GCC would read zeros \
                     here and silently lose the rest of the profile); write the profile again",
                    self.data.len()
                ),
            ));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u32(&mut self, what: &str) -> Result<u32, AfdoError> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn counter(&mut self, what: &str) -> Result<u64, AfdoError> {
        let at = self.pos;
        let lo = self.u32(what)? as u64;
        let v = lo | (self.u32(what)? as u64) << 32;
        if v > MAX_GCOV_COUNT {
            return Err(self.err_at(
                at,
                format!("{what} {v} is negative as GCC's signed 64-bit gcov_type"),
            ));
        }
        Ok(v)
    }

    fn tag(&mut self, tag: u32, what: &str) -> Result<(), AfdoError> {
        let at = self.pos;
        let t = self.u32(what)?;
        if t != tag {
            return Err(self.err_at(
                at,
                format!("expected {what} (tag {tag:#010x}), found {t:#010x}"),
            ));
        }
        Ok(())
    }

    /// String number `i` of the table, in the version's layout.
    fn string(&mut self, i: u32) -> Result<String, AfdoError> {
        let at = self.pos;
        let what = format!("string {i} of the string table");
        let len = self.u32(&what)? as usize;
        let bytes = match self.version {
            GcovVersion::Gcc11 => self.bytes(len.saturating_mul(4), &what)?,
            GcovVersion::Gcc12 => self.bytes(len, &what)?,
        };
        let Some(nul) = bytes.iter().position(|&b| b == 0) else {
            return Err(self.err_at(
                at,
                format!(
                    "{what} is not NUL-terminated (length {len}); is the version right? \
                     GCC 11's strings count 4-byte words, GCC 12's count bytes"
                ),
            ));
        };
        String::from_utf8(bytes[..nul].to_vec())
            .map_err(|_| self.err_at(at, format!("{what} is not UTF-8")))
    }

    /// The string `index` refers to; `at` is where the index was read.
    fn name(&self, index: u64, at: usize, what: &str) -> Result<String, AfdoError> {
        match self.names.get(index as usize) {
            Some(n) if !n.is_empty() => Ok(n.clone()),
            Some(_) => Err(self.err_at(at, format!("{what} names the empty string {index}"))),
            None => Err(self.err_at(
                at,
                format!(
                    "{what} names string {index}, but the table has {}",
                    self.names.len()
                ),
            )),
        }
    }

    /// A function instance and its inlinees. Every position count is added to
    /// the totals of the instance and of all its callers (GCC's stack walk),
    /// done here by returning the subtree's sum.
    fn instance(&mut self, depth: usize) -> Result<FunctionSamples, AfdoError> {
        if depth > MAX_DEPTH {
            return Err(self.err_at(self.pos, format!("inlinees nested over {MAX_DEPTH} deep")));
        }
        let at = self.pos;
        let idx = self.u32("a function's name index")?;
        let name = self.name(idx as u64, at, "a function")?;
        let mut fs = FunctionSamples::new(name);
        let npos = self.u32("a function's number of positions")?;
        let nsites = self.u32("a function's number of call sites")?;
        let mut total = 0u64;
        for _ in 0..npos {
            let loc = location(self.u32("a position's offset")?);
            let ntargets = self.u32("a position's number of call targets")?;
            let count = self.counter("a position's count")?;
            total = total.saturating_add(count);
            // GCC assigns: a repeated position replaces the earlier one's count.
            let rec = fs.body.entry(loc).or_default();
            rec.count = count;
            for _ in 0..ntargets {
                self.u32("a call target's value-profile type")?;
                let at = self.pos;
                let t = self.counter("a call target's name index")?;
                let target = self.name(t, at, "a call target")?;
                let n = self.counter("a call target's count")?;
                rec.call_targets.insert(target, n);
            }
        }
        for _ in 0..nsites {
            let loc = location(self.u32("a call site's offset")?);
            let callee = self.instance(depth + 1)?;
            total = total.saturating_add(callee.total_samples);
            fs.callsites
                .entry(loc)
                .or_default()
                .insert(callee.name.clone(), callee);
        }
        fs.total_samples = total;
        Ok(fs)
    }
}

fn location(offset: u32) -> LineLocation {
    LineLocation::new(offset >> 16, offset & 0xffff)
}
