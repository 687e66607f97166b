//! Extbinary reader: kfdo's own files and those of `llvm-profgen` /
//! `llvm-profdata` (LLVM 19). Unknown sections are skipped; every length and
//! count is checked against the bytes that remain, so corrupt input gives an
//! error naming the byte offset, never a panic or a huge allocation.

use std::path::Path;

use super::layout::{flags, sec, MAGIC_BINARY, MAGIC_EXT_BINARY, VERSION};
use crate::error::AfdoError;
use crate::model::{FunctionSamples, LineLocation, Profile, MAX_LINE_OFFSET};
use crate::summary::{ProfileSummary, SummaryEntry};

/// Deepest inline nesting accepted. Real profiles stay far below; the bound
/// keeps the recursive code that handles a profile later (merge, writers,
/// drop) within any thread's stack.
pub const MAX_DEPTH: usize = 256;

/// Read an extbinary profile from a file.
pub fn read_extbinary(path: &Path) -> Result<Profile, AfdoError> {
    let data = std::fs::read(path).map_err(|source| AfdoError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_extbinary(&data, &path.display().to_string())
}

/// Parse an extbinary profile held in memory; `file` names it in errors.
pub fn parse_extbinary(data: &[u8], file: &str) -> Result<Profile, AfdoError> {
    parse_extbinary_with_summary(data, file).map(|(p, _)| p)
}

/// Parse an extbinary profile and return the summary stored in it, if any.
pub fn parse_extbinary_with_summary(
    data: &[u8],
    file: &str,
) -> Result<(Profile, Option<ProfileSummary>), AfdoError> {
    let mut c = Cursor {
        data,
        pos: 0,
        end: data.len(),
        file,
    };
    let magic = c.uleb()?;
    if magic != MAGIC_EXT_BINARY {
        let msg = if magic == MAGIC_BINARY {
            "this is LLVM's older binary sample-profile format, not extbinary; convert it with \
             `llvm-profdata merge --sample --extbinary`"
        } else {
            "not an LLVM extbinary sample profile (wrong magic number)"
        };
        return Err(c.err_at(0, msg.to_owned()));
    }
    let vpos = c.pos;
    let version = c.uleb()?;
    if version != VERSION {
        return Err(c.err_at(
            vpos,
            format!("unsupported extbinary version {version} (expected {VERSION})"),
        ));
    }
    let npos = c.pos;
    let nsec = c.u64_le()?;
    if nsec > (c.remaining() / 32) as u64 {
        return Err(c.err_at(
            npos,
            format!(
                "section header table claims {nsec} sections but only {} bytes follow",
                c.remaining()
            ),
        ));
    }
    struct Hdr {
        at: usize,
        ty: u64,
        flags: u64,
        start: usize,
        end: usize,
    }
    let mut hdrs = Vec::with_capacity(nsec as usize);
    for _ in 0..nsec {
        let at = c.pos;
        let ty = c.u64_le()?;
        let fl = c.u64_le()?;
        let off = c.u64_le()?;
        let size = c.u64_le()?;
        let end = off.checked_add(size).filter(|&e| e <= data.len() as u64);
        let Some(end) = end else {
            return Err(c.err_at(
                at,
                format!(
                    "section of type {ty:#x} at offset {off} with size {size} runs past the end of the file ({} bytes); the file is truncated or corrupt",
                    data.len()
                ),
            ));
        };
        hdrs.push(Hdr {
            at,
            ty,
            flags: fl,
            start: off as usize,
            end: end as usize,
        });
    }
    let section = |h: &Hdr| -> Result<Cursor, AfdoError> {
        let c = Cursor {
            data,
            pos: h.start,
            end: h.end,
            file,
        };
        if h.flags & flags::COMPRESS != 0 && h.start < h.end {
            return Err(c.err_at(
                h.at,
                "compressed sections are not supported; rewrite the profile uncompressed with \
                 `llvm-profdata merge --sample --extbinary` (without --compress-all-sections)"
                    .to_owned(),
            ));
        }
        Ok(c)
    };

    // Names first: the profile sections refer to them by index.
    let mut names: Vec<String> = Vec::new();
    let mut have_names = false;
    let mut summary = None;
    let mut fs_discriminators = false;
    for h in &hdrs {
        match h.ty {
            sec::NAME_TABLE => {
                let mut c = section(h)?;
                read_name_table(&mut c, h.flags, &mut names)?;
                have_names = true;
            }
            sec::CS_NAME_TABLE => {
                let mut c = section(h)?;
                if c.pos < c.end && c.uleb()? != 0 {
                    return Err(c.err_at(
                        h.start,
                        "context-sensitive (CSSPGO) profiles are not supported; flatten with \
                         `llvm-profdata merge --sample --gen-cs-nested-profile=false` or \
                         produce a non-CS profile"
                            .to_owned(),
                    ));
                }
            }
            sec::PROF_SUMMARY => {
                fs_discriminators = h.flags & flags::SUMMARY_FS_DISCRIMINATOR != 0;
                let mut c = section(h)?;
                summary = Some(read_summary(&mut c)?);
            }
            _ => {}
        }
    }
    let mut funcs: Vec<(u64, FunctionSamples)> = Vec::new();
    for h in &hdrs {
        if h.ty != sec::LBR_PROFILE {
            continue;
        }
        let mut c = section(h)?;
        if !have_names && c.pos < c.end {
            return Err(c.err_at(
                h.at,
                "function profiles but no name table section".to_owned(),
            ));
        }
        while c.pos < c.end {
            let head = c.uleb()?;
            let at = c.pos;
            let idx = c.uleb()?;
            c.pos = at;
            let mut fs = read_body(&mut c, &names)?;
            fs.head_samples = head;
            funcs.push((idx, fs));
        }
    }
    let mut profile = into_profile(funcs, &names);
    profile.fs_discriminators = fs_discriminators;
    Ok((profile, summary))
}

/// Build the profile's map in one go from the functions sorted by name
/// (merging repeated names), instead of one search per function: a map
/// search compares names scattered over the heap, which dominated reading.
/// LLVM's writers sort the name table, so sorting by index is sorting by
/// name; other tables fall back to comparing the names.
fn into_profile(mut funcs: Vec<(u64, FunctionSamples)>, names: &[String]) -> Profile {
    if names.windows(2).all(|w| w[0] < w[1]) {
        funcs.sort_by_key(|f| f.0);
    } else {
        funcs.sort_by(|a, b| a.1.name.cmp(&b.1.name));
    }
    let mut merged: Vec<(String, FunctionSamples)> = Vec::with_capacity(funcs.len());
    for (_, f) in funcs {
        if let Some(last) = merged.last_mut() {
            if last.1.name == f.name {
                last.1.merge(&f);
                continue;
            }
        }
        merged.push((f.name.clone(), f));
    }
    Profile {
        functions: merged.into_iter().collect(),
        fs_discriminators: false,
    }
}

fn read_name_table(c: &mut Cursor, fl: u64, names: &mut Vec<String>) -> Result<(), AfdoError> {
    let at = c.pos;
    let n = c.uleb()?;
    let fixed = fl & flags::NAME_FIXED_LENGTH_MD5 != 0;
    let md5 = fl & flags::NAME_MD5 != 0;
    let min = if fixed { 8 } else { 1 };
    if n > (c.remaining() / min) as u64 {
        return Err(c.err_at(
            at,
            format!(
                "name table claims {n} names but only {} bytes follow",
                c.remaining()
            ),
        ));
    }
    names.clear();
    names.reserve(n as usize);
    for _ in 0..n {
        let name = if fixed {
            c.u64_le()?.to_string()
        } else if md5 {
            c.uleb()?.to_string()
        } else {
            let start = c.pos;
            let rest = &c.data[start..c.end];
            let Some(len) = rest.iter().position(|&b| b == 0) else {
                return Err(c.err_at(start, "name without a NUL terminator".to_owned()));
            };
            c.pos = start + len + 1;
            String::from_utf8_lossy(&rest[..len]).into_owned()
        };
        names.push(name);
    }
    Ok(())
}

fn read_summary(c: &mut Cursor) -> Result<ProfileSummary, AfdoError> {
    let mut s = ProfileSummary {
        total_count: c.uleb()?,
        max_count: c.uleb()?,
        max_function_count: c.uleb()?,
        num_counts: c.uleb()?,
        num_functions: c.uleb()?,
        detailed: Vec::new(),
    };
    let at = c.pos;
    let n = c.uleb()?;
    if n > (c.remaining() / 3) as u64 {
        return Err(c.err_at(
            at,
            format!("summary claims {n} entries, more than the section holds"),
        ));
    }
    for _ in 0..n {
        let cpos = c.pos;
        let cutoff = c.uleb()?;
        let cutoff = u32::try_from(cutoff)
            .map_err(|_| c.err_at(cpos, format!("summary cutoff {cutoff} out of range")))?;
        s.detailed.push(SummaryEntry {
            cutoff,
            min_count: c.uleb()?,
            num_counts: c.uleb()?,
        });
    }
    Ok(s)
}

/// One function profile with its inlinees. Iterative (an explicit stack),
/// so hostile nesting cannot overflow the thread's stack.
fn read_body(c: &mut Cursor, names: &[String]) -> Result<FunctionSamples, AfdoError> {
    struct Frame {
        fs: FunctionSamples,
        callsites_left: u64,
        loc: LineLocation,
    }
    let (fs, n) = read_node(c, names)?;
    let mut stack = vec![Frame {
        fs,
        callsites_left: n,
        loc: LineLocation::new(0, 0),
    }];
    loop {
        let top = stack.last_mut().expect("non-empty");
        if top.callsites_left > 0 {
            top.callsites_left -= 1;
            let loc = c.loc()?;
            if stack.len() > MAX_DEPTH {
                return Err(c.err(format!("inline nesting deeper than {MAX_DEPTH}")));
            }
            let (fs, n) = read_node(c, names)?;
            stack.push(Frame {
                fs,
                callsites_left: n,
                loc,
            });
            continue;
        }
        let done = stack.pop().expect("non-empty");
        let Some(parent) = stack.last_mut() else {
            return Ok(done.fs);
        };
        let m = parent.fs.callsites.entry(done.loc).or_default();
        match m.get_mut(&done.fs.name) {
            Some(existing) => existing.merge(&done.fs),
            None => {
                m.insert(done.fs.name.clone(), done.fs);
            }
        }
    }
}

/// Name, total and body records of one function; returns it with the
/// number of inlined call sites that follow.
fn read_node(c: &mut Cursor, names: &[String]) -> Result<(FunctionSamples, u64), AfdoError> {
    let name = c.name(names)?;
    let mut fs = FunctionSamples::new(name);
    fs.total_samples = c.uleb()?;
    let n = c.count(4, "body records")?;
    for _ in 0..n {
        let loc = c.loc()?;
        let count = c.uleb()?;
        let rec = fs.body.entry(loc).or_default();
        rec.add_count(count);
        let nt = c.count(2, "call targets")?;
        for _ in 0..nt {
            let t = c.name(names)?;
            let tc = c.uleb()?;
            rec.add_call_target(t, tc);
        }
    }
    let n = c.count(6, "inlined call sites")?;
    Ok((fs, n))
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    end: usize,
    file: &'a str,
}

impl<'a> Cursor<'a> {
    fn err_at(&self, offset: usize, msg: String) -> AfdoError {
        AfdoError::Binary {
            file: self.file.to_owned(),
            offset: offset as u64,
            msg,
        }
    }

    fn err(&self, msg: String) -> AfdoError {
        self.err_at(self.pos, msg)
    }

    fn remaining(&self) -> usize {
        self.end - self.pos
    }

    fn uleb(&mut self) -> Result<u64, AfdoError> {
        let start = self.pos;
        let mut v: u64 = 0;
        let mut shift = 0u32;
        loop {
            if self.pos >= self.end {
                return Err(self.err_at(
                    start,
                    "unexpected end of data in a ULEB128 number (truncated file or section)".into(),
                ));
            }
            let b = self.data[self.pos];
            self.pos += 1;
            let low = (b & 0x7f) as u64;
            if shift == 63 && low > 1 || shift > 63 {
                return Err(self.err_at(start, "ULEB128 number does not fit in 64 bits".into()));
            }
            v |= low << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
            shift += 7;
        }
    }

    fn u64_le(&mut self) -> Result<u64, AfdoError> {
        if self.remaining() < 8 {
            return Err(self.err("unexpected end of data in a 64-bit field".into()));
        }
        let v = u64::from_le_bytes(self.data[self.pos..self.pos + 8].try_into().unwrap());
        self.pos += 8;
        Ok(v)
    }

    /// A count of items each taking at least `min` bytes, checked against
    /// what remains.
    fn count(&mut self, min: usize, what: &str) -> Result<u64, AfdoError> {
        let at = self.pos;
        let n = self.uleb()?;
        if n > (self.remaining() / min) as u64 {
            return Err(self.err_at(
                at,
                format!(
                    "{n} {what} claimed but only {} bytes remain in the section",
                    self.remaining()
                ),
            ));
        }
        Ok(n)
    }

    fn name<'n>(&mut self, names: &'n [String]) -> Result<&'n str, AfdoError> {
        let at = self.pos;
        let i = self.uleb()?;
        names.get(i as usize).map(|s| s.as_str()).ok_or_else(|| {
            self.err_at(
                at,
                format!(
                    "name index {i} out of range (the name table has {} names)",
                    names.len()
                ),
            )
        })
    }

    fn loc(&mut self) -> Result<LineLocation, AfdoError> {
        let at = self.pos;
        let off = self.uleb()?;
        if off > MAX_LINE_OFFSET as u64 {
            return Err(self.err_at(at, format!("line offset {off} above 0xffff")));
        }
        let dpos = self.pos;
        let disc = self.uleb()?;
        let disc = u32::try_from(disc).map_err(|_| {
            self.err_at(
                dpos,
                format!("discriminator {disc} does not fit in 32 bits"),
            )
        })?;
        Ok(LineLocation::new(off as u32, disc))
    }
}
