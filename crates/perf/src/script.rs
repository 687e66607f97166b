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
        }
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
            if let Some(i) = memmem::find(head, b"PERF_RECORD_") {
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
            return Some(match parse_sample(line, &mut self.buf) {
                Ok((pid, ip)) => Ok(ScriptItem::Sample {
                    pid,
                    ip,
                    branches: &self.buf,
                }),
                Err(d) => {
                    self.failed = true;
                    Err(self.error(line_no, line, d))
                }
            });
        }
    }
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', r @ ..] = s {
        s = r;
    }
    while let [r @ .., b' ' | b'\t'] = s {
        s = r;
    }
    s
}

/// Hex digits with an optional `0x`, no overflow.
fn hex(s: &[u8]) -> Option<u64> {
    let d = s.strip_prefix(b"0x").unwrap_or(s);
    if d.is_empty() || d.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &c in d {
        let x = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = v << 4 | u64::from(x);
    }
    Some(v)
}

fn dec(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    s.iter().try_fold(0u64, |v, &c| {
        c.is_ascii_digit().then(|| v * 10 + u64::from(c - b'0'))
    })
}

/// A pid as printed: decimal, or -1 (kernel) as `u32::MAX`.
fn pid(s: &[u8]) -> Option<u32> {
    if s == b"-1" {
        return Some(u32::MAX);
    }
    dec(s).and_then(|v| u32::try_from(v).ok())
}

/// Whitespace-separated tokens with their start offsets.
#[derive(Clone)]
struct Tokens<'s> {
    s: &'s [u8],
    i: usize,
}

fn tokens(s: &[u8]) -> Tokens<'_> {
    Tokens { s, i: 0 }
}

impl<'s> Iterator for Tokens<'s> {
    type Item = (usize, &'s [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        let s = self.s;
        let mut i = self.i;
        while i < s.len() && (s[i] == b' ' || s[i] == b'\t') {
            i += 1;
        }
        if i >= s.len() {
            self.i = i;
            return None;
        }
        let start = i;
        while i < s.len() && s[i] != b' ' && s[i] != b'\t' {
            i += 1;
        }
        self.i = i;
        Some((start, &s[start..i]))
    }
}

fn branch_type(name: &[u8]) -> u8 {
    use crate::consts::br_type::*;
    match name {
        b"COND" => COND,
        b"UNCOND" => UNCOND,
        b"IND" => IND,
        b"CALL" => CALL,
        b"IND_CALL" => IND_CALL,
        b"RET" => RET,
        b"SYSCALL" => SYSCALL,
        b"SYSRET" => SYSRET,
        b"COND_CALL" => COND_CALL,
        b"COND_RET" => COND_RET,
        b"ERET" => ERET,
        b"IRQ" => IRQ,
        b"SERROR" => SERROR,
        b"NO_TX" => NO_TX,
        b"EXTEND_ABI" => EXTEND_ABI,
        _ => UNKNOWN,
    }
}

/// Hex digit values; 0xff for anything else.
static HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// `0x` then hex digits up to the next `/` or the end, from `tok[i..]`: the
/// value and the index just past the `/` (or the end).
#[inline]
fn hex_field(tok: &[u8], i: usize) -> Option<(u64, usize)> {
    let d = tok.get(i..)?.strip_prefix(b"0x")?;
    let mut v = 0u64;
    let mut n = 0;
    while n < d.len() {
        let x = HEX[d[n] as usize];
        if x == 0xff {
            if d[n] == b'/' {
                break;
            }
            return None;
        }
        v = v << 4 | u64::from(x);
        n += 1;
    }
    if n == 0 || n > 16 {
        return None;
    }
    Some((v, (i + 2 + n + 1).min(tok.len())))
}

/// `0xFROM/0xTO[/M|P|-[/X|-[/A|-[/CYCLES[/TYPE[/...]]]]]]`: `None` when `tok`
/// is not a branch record at all (no `0xHEX/` start), else the record or why
/// it is malformed.
///
/// This is the hot loop of reading perf script text (32 tokens a line, two
/// million lines in a large profile): one walk over the bytes, a table for hex
/// digits, flags read in place (measured ~2x faster than split iterators).
#[inline]
fn parse_branch(tok: &[u8]) -> Option<Result<BranchEntry, String>> {
    let (from, i) = hex_field(tok, 0)?;
    if tok.get(i.wrapping_sub(1)) != Some(&b'/') || i > tok.len() {
        return None;
    }
    let Some((to, mut i)) = hex_field(tok, i) else {
        return Some(Err(format!(
            "branch {:?} has no hex target address (symbolized `brstacksym` output is not read; use -F brstack)",
            String::from_utf8_lossy(tok)
        )));
    };
    let mut fields = [&b""[..]; 5];
    for f in fields.iter_mut() {
        if i >= tok.len() {
            break;
        }
        let end = tok[i..]
            .iter()
            .position(|&c| c == b'/')
            .map_or(tok.len(), |p| i + p);
        *f = &tok[i..end];
        i = end + 1;
    }
    let [m, x, a, c, t] = fields;
    let cycles = if c.is_empty() {
        0
    } else {
        dec(c).map_or(0, |v| v.min(u64::from(u16::MAX)) as u16)
    };
    let ty = if t.is_empty() { 0 } else { branch_type(t) };
    Some(Ok(BranchEntry {
        from,
        to,
        flags: BranchEntry::make_flags(m == b"M", m == b"P", x == b"X", a == b"A", cycles, ty),
    }))
}

fn parse_sample(line: &[u8], out: &mut Vec<BranchEntry>) -> Result<(Option<u32>, u64), String> {
    let mut pid_v = None;
    let mut ip = None;
    let mut toks = tokens(line).peekable();
    // Head: [pid[/tid]] ip [symbol tokens...]
    if let Some(&(start, first)) = toks.peek() {
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
    for (_, t) in toks {
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

#[cfg(test)]
mod tests {
    use super::*;

    type Item = Result<(Option<u32>, u64, Vec<BranchEntry>), String>;

    fn items(text: &str) -> Vec<Item> {
        let f = ScriptFile::from_bytes("t", text.as_bytes().to_vec());
        let mut r = f.items();
        let mut out = Vec::new();
        while let Some(i) = r.next_item() {
            out.push(match i {
                Ok(ScriptItem::Sample { pid, ip, branches }) => Ok((pid, ip, branches.to_vec())),
                Ok(ScriptItem::Mmap(m)) => Err(format!("mmap {}", m.filename)),
                Err(e) => Err(e.to_string()),
            });
        }
        out
    }

    #[test]
    fn sample_shapes() {
        let b = |f, t, fl| BranchEntry {
            from: f,
            to: t,
            flags: fl,
        };
        let r = items(" 6099/6099       7f5d30ec2316 0x401000/0x401040/M/-/-/0/  0x401011/0x401051/P/X/A/3/COND \n");
        assert_eq!(
            r,
            vec![Ok((
                Some(6099),
                0x7f5d30ec2316,
                vec![
                    b(0x401000, 0x401040, 1),
                    b(
                        0x401011,
                        0x401051,
                        BranchEntry::make_flags(false, true, true, true, 3, 1)
                    )
                ]
            ))]
        );
        assert_eq!(
            items("           401000 [unknown] 0x1/0x2/P/-/-/0/\n"),
            vec![Ok((None, 0x401000, vec![b(1, 2, 2)]))]
        );
        assert_eq!(
            items(" 6218      7f119ced68c8\n     7f119ced7080\n"),
            vec![
                Ok((Some(6218), 0x7f119ced68c8, vec![])),
                Ok((None, 0x7f119ced7080, vec![]))
            ]
        );
        // -F ip,sym: the symbol is skipped even when it looks like hex.
        assert_eq!(
            items("     7f5d30ec2316 add\n"),
            vec![Ok((None, 0x7f5d30ec2316, vec![]))]
        );
    }

    #[test]
    fn mmap_lines() {
        let f = ScriptFile::from_bytes(
            "t",
            b"PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x120bb08) @ 0xffffffff81000000]: x [kernel.kallsyms]_text\n\
              sh  6099   298.898400: PERF_RECORD_MMAP2 6099/6099: [0x55d21e86b000(0x13000) @ 0x4000 fe:00 247072 0]: r-xp /usr/bin/my dash\n\
              PERF_RECORD_MMAP2 1/2: [0x1000(0x2000) @ 0 <abcd>]: r--s /x\n"
                .to_vec(),
        );
        let mut r = f.items();
        let mut ms = Vec::new();
        while let Some(i) = r.next_item() {
            match i.unwrap() {
                ScriptItem::Mmap(m) => ms.push(m),
                _ => panic!(),
            }
        }
        assert_eq!(ms[0].pid, u32::MAX);
        assert_eq!(ms[0].misc, misc::KERNEL);
        assert!(ms[0].is_executable());
        assert_eq!(ms[0].filename, "[kernel.kallsyms]_text");
        assert_eq!(
            (
                ms[1].start,
                ms[1].len,
                ms[1].pgoff,
                ms[1].maj,
                ms[1].min,
                ms[1].ino
            ),
            (0x55d21e86b000, 0x13000, 0x4000, 0xfe, 0, 247072)
        );
        assert_eq!(ms[1].filename, "/usr/bin/my dash");
        assert_eq!(ms[1].prot, PROT_READ | PROT_EXEC);
        assert_eq!(ms[2].build_id.as_deref(), Some(&[0xab, 0xcd][..]));
        assert!(!ms[2].is_executable());
        assert_eq!(ms[2].flags, MAP_SHARED);
    }

    #[test]
    fn errors_name_the_line() {
        let r = items("\n 1/1 401000 0x1/0x2/P/-/-/0/\n\tcallchain\n");
        assert!(r[0].is_ok());
        let e = r[1].as_ref().unwrap_err();
        assert!(e.starts_with("t:3:"), "{e}");
        let r = items("0x1/zz/P\n");
        assert!(r[0].as_ref().unwrap_err().starts_with("t:1:"));
        let r = items("PERF_RECORD_MMAP2 1/1: garbage\n");
        assert!(r[0].as_ref().unwrap_err().contains("mmap line"));
    }

    #[test]
    fn chunks_cover_all_lines() {
        let mut text = String::new();
        for i in 0..1000 {
            text.push_str(&format!(
                " {i}/{i} {:x} 0x{i:x}/0x{:x}/P/-/-/0/\n",
                0x400000 + i,
                i + 1
            ));
        }
        let f = ScriptFile::from_bytes("t", text.into_bytes());
        for n in [1, 2, 3, 7, 64, 5000] {
            let mut seen = Vec::new();
            for mut c in f.script_chunks(n) {
                let first_line = c.line();
                let mut k = 0;
                while let Some(i) = c.next_item() {
                    if let ScriptItem::Sample { pid, .. } = i.unwrap() {
                        assert_eq!(u64::from(pid.unwrap()) + 1, first_line + k);
                        seen.push(pid.unwrap());
                        k += 1;
                    }
                }
            }
            assert_eq!(seen, (0..1000).collect::<Vec<_>>(), "n={n}");
        }
    }
}
