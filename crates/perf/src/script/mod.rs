//! Reading `perf script` text: the samples of `perf script -F ip,brstack` (optionally with
//! `pid`/`tid` in front, or `-F ip` alone) and the mappings `--show-mmap-events` adds.
//!
//! Inputs are gigabytes (2 M samples x 32 branches), so a line is parsed in place: no
//! per-line allocation, branch entries go into a buffer the reader reuses, and the text can
//! be split at line boundaries for parallel readers ([`ScriptFile::script_chunks`]).
//!
//! Line shapes accepted (what perf 6.1 prints):
//! ```text
//!  6099/6099       7f5d30ec2316 0x401000/0x401040/M/-/-/0/  0x401011/0x401051/P/-/-/3/COND ...
//!            401000 0x401000/0x401040/P/-/-/0/ ...
//!  6218      7f119ced68c8
//! PERF_RECORD_MMAP2 6099/6099: [0x55d21e86b000(0x13000) @ 0x4000 fe:00 247072 0]: r-xp /usr/bin/dash
//! PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x120bb08) @ 0xffffffff81000000]: x [kernel.kallsyms]_text
//! ```
//! A leading decimal token ending before column 16 is a pid (perf right-aligns the IP in 16
//! columns, and prints pids in 7); `pid/tid` is unambiguous. Tokens between the IP and the
//! branch stack (a symbol, `[unknown]` in pipe mode) are skipped. Other `PERF_RECORD_*` lines
//! (`--show-task-events`, ...) and blank lines are skipped.

use std::path::{Path, PathBuf};

use memchr::{memchr, memmem};

use crate::consts::{misc, MAP_PRIVATE, MAP_SHARED, PROT_EXEC, PROT_READ, PROT_WRITE};
use crate::error::PerfError;
use crate::mapped::Bytes;
use crate::record::OwnedMmap;
use crate::sample::BranchEntry;

mod fields;
#[cfg(test)]
mod tests;

use fields::*;

/// One item of `perf script` output.
#[derive(Debug, PartialEq, Eq)]
pub enum ScriptItem<'b> {
    /// A sample: its pid when printed, its IP, and its branch stack newest first (empty for
    /// `-F ip`). `branches` borrows the reader's buffer until the next item.
    Sample {
        pid: Option<u32>,
        ip: u64,
        branches: &'b [BranchEntry],
    },
    /// A `PERF_RECORD_MMAP`/`PERF_RECORD_MMAP2` line. `misc` is `USER`, or `KERNEL` for pid -1.
    Mmap(OwnedMmap),
}

/// A `perf script` text file, mapped.
pub struct ScriptFile {
    path: PathBuf,
    bytes: Bytes,
}

impl ScriptFile {
    pub fn open(path: &Path) -> Result<ScriptFile, PerfError> {
        Ok(ScriptFile {
            path: path.to_path_buf(),
            bytes: Bytes::open(path)?,
        })
    }

    /// Text from memory; `name` is used as the path in error messages.
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> ScriptFile {
        ScriptFile {
            path: PathBuf::from(name),
            bytes: Bytes::Owned(bytes),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Size in bytes (for progress).
    pub fn len(&self) -> u64 {
        self.bytes.as_slice().len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole text (mapped), for consumers that scan it themselves.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }

    /// Done with bytes `[start, end)` for now: their pages leave this process's
    /// resident memory (a hint; they are read back from the page cache if needed).
    pub fn release(&self, start: u64, end: u64) {
        self.bytes.release(start, end)
    }

    /// A reader over the whole text.
    pub fn items(&self) -> ScriptReader<'_> {
        ScriptReader::new(&self.path, self.bytes.as_slice())
    }

    /// Splits the text into at most `n` runs of whole lines of roughly equal size; together
    /// they are all lines in order, and each reports true line numbers. Mapping lines stay
    /// in the run where they appear, so a consumer that needs every mapping before any
    /// sample should read the mappings of all runs first.
    pub fn script_chunks(&self, n: usize) -> Vec<ScriptReader<'_>> {
        let text = self.bytes.as_slice();
        let n = n.max(1);
        let mut cuts = vec![0usize];
        for k in 1..n {
            let target = (text.len() as u128 * k as u128 / n as u128) as usize;
            let from = target.max(*cuts.last().unwrap_or(&0));
            match memchr(b'\n', text.get(from..).unwrap_or(&[])) {
                Some(i) if from + i + 1 < text.len() => {
                    if from + i + 1 > *cuts.last().unwrap_or(&0) {
                        cuts.push(from + i + 1)
                    }
                }
                _ => break,
            }
        }
        cuts.push(text.len());
        let mut out = Vec::with_capacity(cuts.len() - 1);
        for w in cuts.windows(2) {
            let mut r = ScriptReader::new(&self.path, &text[w[0]..w[1]]);
            r.base = w[0] as u64;
            r.before = &text[..w[0]];
            out.push(r);
        }
        out
    }
}

/// Reads items from `perf script` text. A lending reader: call [`ScriptReader::next_item`]
/// in a `while let` loop.
pub struct ScriptReader<'a> {
    path: &'a Path,
    text: &'a [u8],
    pos: usize,
    /// Number of the next line, counted from the start of `text` (1-based).
    line: u64,
    /// Offset of `text` in the file.
    base: u64,
    /// The text before `text` (for a chunk of a file), whose lines are counted
    /// only when a line number is asked for: numbering every chunk up front was
    /// a whole extra pass over multi-gigabyte inputs.
    before: &'a [u8],
    buf: Vec<BranchEntry>,
    failed: bool,
    /// Branch records without their flags (see [`ScriptReader::addresses_only`]).
    addresses_only: bool,
}

impl<'a> ScriptReader<'a> {
    /// A reader over `text`; `path` names it in errors.
    pub fn new(path: &'a Path, text: &'a [u8]) -> Self {
        ScriptReader {
            path,
            text,
            pos: 0,
            line: 1,
            base: 0,
            before: &[],
            buf: Vec::with_capacity(32),
            failed: false,
            addresses_only: false,
        }
    }

    /// Read only the addresses of branch records: their flags (prediction, cycles, type)
    /// are left 0. For readers that count ranges and branches, which is all they need;
    /// the flags are a third of a record's text. Lines are accepted and refused exactly
    /// as without this.
    pub fn addresses_only(mut self, yes: bool) -> Self {
        self.addresses_only = yes;
        self
    }

    /// The number of the line the next item starts on (in the whole file).
    pub fn line(&self) -> u64 {
        self.file_line(self.line)
    }

    /// A line number within `text` as a line number of the file.
    fn file_line(&self, line: u64) -> u64 {
        if self.before.is_empty() {
            line
        } else {
            line + memchr::memchr_iter(b'\n', self.before).count() as u64
        }
    }

    /// Byte offset in the file of the next line (for progress).
    pub fn position(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn error(&self, line: u64, text: &[u8], detail: impl Into<String>) -> PerfError {
        let mut t = String::from_utf8_lossy(text).into_owned();
        if t.len() > 200 {
            let mut cut = 200;
            while !t.is_char_boundary(cut) {
                cut -= 1;
            }
            t.truncate(cut);
            t.push_str("...");
        }
        PerfError::ScriptLine {
            path: self.path.to_path_buf(),
            line: self.file_line(line),
            detail: detail.into(),
            text: t,
        }
    }

    /// The next line's bytes (without its newline), not consumed: for readers that
    /// recognize lines they have seen before and skip them with [`Self::skip_line`].
    /// `None` at the end or after an error.
    pub fn peek_line(&self) -> Option<&'a [u8]> {
        if self.failed {
            return None;
        }
        let rest = self.text.get(self.pos..).filter(|r| !r.is_empty())?;
        Some(&rest[..memchr(b'\n', rest).unwrap_or(rest.len())])
    }

    /// Consumes the line [`Self::peek_line`] shows.
    pub fn skip_line(&mut self) {
        if let Some(line) = self.peek_line() {
            self.pos = (self.pos + line.len() + 1).min(self.text.len());
            self.line += 1;
        }
    }

    /// The next sample or mapping; `None` at the end. After an error the reader ends.
    #[allow(clippy::should_implement_trait)]
    pub fn next_item(&mut self) -> Option<Result<ScriptItem<'_>, PerfError>> {
        if self.failed {
            return None;
        }
        loop {
            let rest = self.text.get(self.pos..)?;
            if rest.is_empty() {
                return None;
            }
            let (raw, adv) = match memchr(b'\n', rest) {
                Some(i) => (&rest[..i], i + 1),
                None => (rest, rest.len()),
            };
            let line_no = self.line;
            self.pos += adv;
            self.line += 1;
            let line = raw.strip_suffix(b"\r").unwrap_or(raw);
            if line.first() == Some(&b'\t') {
                self.failed = true;
                return Some(Err(self.error(
                    line_no,
                    line,
                    "this is a callchain line (the perf.data was recorded with -g); add --hide-call-graph to `perf script`",
                )));
            }
            let t = trim(line);
            if t.is_empty() {
                continue;
            }
            // The event tag comes after at most the comm, pid/tid, cpu and time
            // columns; looking only there keeps this check off the long sample lines.
            let head = &t[..t.len().min(160)];
            // `_` first (one vectorized scan): sample lines rarely have one.
            static RECORD: std::sync::OnceLock<memmem::Finder<'static>> =
                std::sync::OnceLock::new();
            let record = memchr(b'_', head).and_then(|_| {
                RECORD
                    .get_or_init(|| memmem::Finder::new(b"PERF_RECORD_"))
                    .find(head)
            });
            if let Some(i) = record {
                let ev = &t[i + b"PERF_RECORD_".len()..];
                let (is2, after) = if let Some(a) = ev.strip_prefix(b"MMAP2 ") {
                    (true, a)
                } else if let Some(a) = ev.strip_prefix(b"MMAP ") {
                    (false, a)
                } else {
                    continue; // COMM, FORK, EXIT, ...: not needed
                };
                return Some(match parse_mmap(after, is2) {
                    Ok(m) => Ok(ScriptItem::Mmap(m)),
                    Err(d) => {
                        self.failed = true;
                        Err(self.error(line_no, line, d))
                    }
                });
            }
            self.buf.clear();
            return Some(
                match parse_sample(line, &mut self.buf, self.addresses_only) {
                    Ok((pid, ip)) => Ok(ScriptItem::Sample {
                        pid,
                        ip,
                        branches: &self.buf,
                    }),
                    Err(d) => {
                        self.failed = true;
                        Err(self.error(line_no, line, d))
                    }
                },
            );
        }
    }
}

fn parse_sample(
    line: &[u8],
    out: &mut Vec<BranchEntry>,
    addresses_only: bool,
) -> Result<(Option<u32>, u64), String> {
    let mut pid_v = None;
    let mut ip = None;
    let mut toks = tokens(line);
    // Head: [pid[/tid]] ip [symbol tokens...]
    if let Some((start, first)) = toks.clone().next() {
        if let Some(slash) = memchr(b'/', first).filter(|_| !first.starts_with(b"0x")) {
            pid_v =
                Some(pid(&first[..slash]).ok_or_else(|| {
                    format!("{:?} is not a pid/tid", String::from_utf8_lossy(first))
                })?);
            toks.next();
        } else if dec(first).is_some() && start + first.len() < 16 {
            // A decimal token ending before column 16 is a pid: an IP is right-aligned in 16.
            let mut look = toks.clone();
            look.next();
            if matches!(look.next(), Some((_, t)) if hex(t).is_some() && !t.starts_with(b"0x")) {
                pid_v = pid(first);
                toks.next();
            }
        }
    }
    loop {
        // Branch records take the fast path; the rest goes token by token.
        let mut i = toks.i;
        while i < line.len() && (line[i] == b' ' || line[i] == b'\t') {
            i += 1;
        }
        if i >= line.len() {
            break;
        }
        if let Some((branch, end)) = fast_branch(line, i, addresses_only) {
            out.push(branch);
            toks.i = end;
            continue;
        }
        let Some((_, t)) = toks.next() else { break };
        if let Some(branch) = parse_branch(t) {
            out.push(branch?);
        } else if ip.is_none() && out.is_empty() {
            ip = Some(hex(t).ok_or_else(|| {
                format!(
                    "{:?} is not a hex sample IP (tolerated fields are pid, tid, ip, brstack)",
                    String::from_utf8_lossy(t)
                )
            })?);
        }
        // Anything else before the branches is a symbol or DSO column: skipped.
    }
    match ip {
        Some(ip) => Ok((pid_v, ip)),
        None => Err("no sample IP on this line; run `perf script -F ip,brstack`".into()),
    }
}

/// ` PID/TID: [0xSTART(0xLEN) @ PGOFF (MAJ:MIN INO GEN | <BUILDID>)]: PROT PATH`
fn parse_mmap(s: &[u8], is2: bool) -> Result<OwnedMmap, String> {
    let bad = |what: &str| format!("mmap line: cannot read {what}");
    let s = trim(s);
    let colon = memchr(b':', s).ok_or_else(|| bad("pid/tid"))?;
    let (p, t) = {
        let pt = &s[..colon];
        let sl = memchr(b'/', pt).ok_or_else(|| bad("pid/tid"))?;
        (
            pid(&pt[..sl]).ok_or_else(|| bad("pid"))?,
            pid(&pt[sl + 1..]).ok_or_else(|| bad("tid"))?,
        )
    };
    let s = &s[colon + 1..];
    let lb = memchr(b'[', s).ok_or_else(|| bad("'['"))?;
    let paren = memchr(b'(', s).ok_or_else(|| bad("start address"))?;
    let start = s
        .get(lb + 1..paren)
        .and_then(hex)
        .ok_or_else(|| bad("start address"))?;
    let close = memchr(b')', s).ok_or_else(|| bad("length"))?;
    let len = s
        .get(paren + 1..close)
        .and_then(hex)
        .ok_or_else(|| bad("length"))?;
    let rb = memmem::find(s, b"]: ").ok_or_else(|| bad("']: '"))?;
    let inner = s.get(close + 1..rb).ok_or_else(|| bad("page offset"))?;
    let mut it = tokens(inner).map(|(_, t)| t);
    if it.next() != Some(b"@".as_slice()) {
        return Err(bad("'@ PGOFF'"));
    }
    let pgoff = it.next().and_then(hex).ok_or_else(|| bad("page offset"))?;
    let mut m = OwnedMmap {
        pid: p,
        tid: t,
        start,
        len,
        pgoff,
        is_mmap2: is2,
        ..Default::default()
    };
    m.misc = if p == u32::MAX {
        misc::KERNEL
    } else {
        misc::USER
    };
    if is2 {
        match it.next() {
            Some(b) if b.starts_with(b"<") => {
                let hexid = b
                    .strip_prefix(b"<")
                    .and_then(|b| b.strip_suffix(b">"))
                    .ok_or_else(|| bad("build-id"))?;
                if hexid.len() % 2 != 0 || hexid.len() > 40 {
                    return Err(bad("build-id"));
                }
                let id: Option<Vec<u8>> =
                    hexid.chunks(2).map(|c| hex(c).map(|v| v as u8)).collect();
                m.build_id = Some(id.ok_or_else(|| bad("build-id"))?);
            }
            Some(mm) => {
                let c = memchr(b':', mm).ok_or_else(|| bad("maj:min"))?;
                m.maj = hex(&mm[..c]).ok_or_else(|| bad("major"))? as u32;
                m.min = hex(&mm[c + 1..]).ok_or_else(|| bad("minor"))? as u32;
                m.ino = it.next().and_then(dec).ok_or_else(|| bad("inode"))?;
                m.ino_generation = it
                    .next()
                    .and_then(dec)
                    .ok_or_else(|| bad("inode generation"))?;
            }
            None => return Err(bad("device or build-id")),
        }
    }
    let tail = &s[rb + 3..];
    let sp = memchr(b' ', tail).ok_or_else(|| bad("protection and path"))?;
    let (prot, path) = (&tail[..sp], &tail[sp + 1..]);
    if is2 {
        let [r, w, x, sh] = prot else {
            return Err(bad("protection (like r-xp)"));
        };
        m.prot = if *r == b'r' { PROT_READ } else { 0 }
            | if *w == b'w' { PROT_WRITE } else { 0 }
            | if *x == b'x' { PROT_EXEC } else { 0 };
        m.flags = if *sh == b's' { MAP_SHARED } else { MAP_PRIVATE };
    } else if prot == b"r" {
        m.misc |= misc::MMAP_DATA;
    } else if prot != b"x" {
        return Err(bad("mapping kind (x or r)"));
    }
    m.filename = String::from_utf8_lossy(path).into_owned();
    Ok(m)
}
