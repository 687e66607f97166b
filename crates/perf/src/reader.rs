//! `PerfData`: a perf.data file (file mode or pipe mode) opened over a memory map, with its
//! attrs, build-ids and feature sections decoded at open, and its records streamed lazily.

use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

use crate::attr::{EventAttr, IdPos, ATTR_SIZE_VER0};
use crate::bytes::{slice_at, u16_at, u32_at, u64_at};
use crate::consts::record as rt;
use crate::error::PerfError;
use crate::features::{decode_cmdline, decode_event_desc, decode_nrcpus, decode_string, FeatureId};
use crate::header::{self, FileHeader, Layout, Section, PIPE_HEADER_SIZE};
use crate::mapped::Bytes;
use crate::record::{
    parse_build_id, parse_comm, parse_fork, parse_mmap, BuildIdEntry, Record, BUILD_ID_EVENT_HEAD,
};
use crate::sample::{parse_sample, SampleLayout};

/// Whether the stream has a seekable header (file mode) or was written to a pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    File,
    Pipe,
}

/// An opened perf.data.
pub struct PerfData {
    path: PathBuf,
    bytes: Bytes,
    mode: Mode,
    /// The data section (file mode) or everything after the pipe header, as byte offsets.
    data: (usize, usize),
    attrs: Vec<EventAttr>,
    layouts: Vec<SampleLayout>,
    id_pos: IdPos,
    ids: FxHashMap<u64, usize>,
    build_ids: Vec<BuildIdEntry>,
    /// Feature id -> byte range of its section.
    features: Vec<(FeatureId, (usize, usize))>,
}

impl std::fmt::Debug for PerfData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerfData")
            .field("path", &self.path)
            .field("mode", &self.mode)
            .field("data", &self.data)
            .field("attrs", &self.attrs)
            .field("build_ids", &self.build_ids.len())
            .finish_non_exhaustive()
    }
}

impl PerfData {
    /// Opens a perf.data written by `perf record` (file mode) or `perf record -o -` (pipe mode).
    pub fn open(path: &Path) -> Result<PerfData, PerfError> {
        Self::build(path.to_path_buf(), Bytes::open(path)?)
    }

    /// Reads perf data from memory (tests, fuzzing, data that arrived over a socket).
    /// `name` is used as the path in error messages.
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<PerfData, PerfError> {
        Self::build(PathBuf::from(name), Bytes::Owned(bytes))
    }

    fn build(path: PathBuf, bytes: Bytes) -> Result<PerfData, PerfError> {
        let b = bytes.as_slice();
        let layout = header::parse(&path, b)?;
        let mut pd = PerfData {
            data: (0, 0),
            mode: Mode::File,
            attrs: Vec::new(),
            layouts: Vec::new(),
            id_pos: IdPos::None,
            ids: FxHashMap::default(),
            build_ids: Vec::new(),
            features: Vec::new(),
            path,
            bytes: Bytes::Owned(Vec::new()),
        };
        match layout {
            Layout::File(h) => pd.load_file(b, &h)?,
            Layout::Pipe => pd.load_pipe(b)?,
        }
        pd.name_events(b);
        pd.index_attrs()?;
        pd.bytes = bytes;
        Ok(pd)
    }

    fn truncated(
        &self,
        offset: usize,
        what: &'static str,
        need: u64,
        within: &'static str,
        end: usize,
    ) -> PerfError {
        PerfError::Truncated {
            path: self.path.clone(),
            offset: offset as u64,
            what,
            need,
            within,
            end: end as u64,
        }
    }

    fn malformed(&self, offset: usize, what: &'static str, detail: String) -> PerfError {
        PerfError::Malformed {
            path: self.path.clone(),
            offset: offset as u64,
            what,
            detail,
        }
    }

    fn load_file(&mut self, b: &[u8], h: &FileHeader) -> Result<(), PerfError> {
        let flen = b.len();
        // Attr section: `attrs.size / attr_size` entries of perf_event_attr + ids section.
        let entry = usize::try_from(h.attr_size).unwrap_or(usize::MAX);
        if !(ATTR_SIZE_VER0 + 16..=4096).contains(&entry) {
            return Err(self.malformed(
                16,
                "file header",
                format!("attr_size is {}, expected {}..=4096 (a perf_event_attr plus a 16-byte ids section)", h.attr_size, ATTR_SIZE_VER0 + 16),
            ));
        }
        let Some((astart, aend)) = h.attrs.range(flen) else {
            return Err(self.truncated(24, "the attr section", h.attrs.size, "file", flen));
        };
        if (aend - astart) % entry != 0 || aend == astart {
            return Err(self.malformed(
                32,
                "attr section",
                format!(
                    "its size {} is not a positive multiple of attr_size {}",
                    aend - astart,
                    entry
                ),
            ));
        }
        for at in (astart..aend).step_by(entry) {
            let raw = &b[at..at + entry];
            let mut attr = EventAttr::decode(&raw[..entry - 16])
                .ok_or_else(|| self.malformed(at, "event attr", "shorter than 64 bytes".into()))?;
            let ids = Section::read(raw, entry - 16).unwrap_or_default();
            let Some((s, e)) = ids.range(flen) else {
                return Err(self.truncated(
                    at + entry - 16,
                    "the event's id array",
                    ids.size,
                    "file",
                    flen,
                ));
            };
            attr.ids = b[s..e]
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                .collect();
            self.attrs.push(attr);
        }
        let Some(data) = h.data.range(flen) else {
            return Err(self.truncated(
                h.data.offset.min(flen as u64) as usize,
                "the data section (header field data.offset + data.size)",
                h.data.size,
                "file",
                flen,
            ));
        };
        self.data = data;

        // Feature sections: a table of perf_file_section right after the data section, one
        // per set bit of the bitmap, in bit order.
        let mut table = data.1;
        for bit in 0..FeatureId::LIMIT {
            if h.features[(bit / 64) as usize] >> (bit % 64) & 1 == 0 {
                continue;
            }
            let feat = FeatureId(bit);
            let Some(sec) = Section::read(b, table) else {
                return Err(self.truncated(table, "the feature section table", 16, "file", flen));
            };
            let Some(range) = sec.range(flen) else {
                return Err(self.truncated(
                    table,
                    "a feature section (see `perf report --header-only`)",
                    sec.size,
                    "file",
                    flen,
                ));
            };
            table += 16;
            self.features.push((feat, range));
            if feat == FeatureId::BUILD_ID {
                self.build_ids = self.decode_build_id_section(b, range)?;
            }
        }
        Ok(())
    }

    /// The BUILD_ID feature: back-to-back build-id events.
    fn decode_build_id_section(
        &self,
        b: &[u8],
        (mut at, end): (usize, usize),
    ) -> Result<Vec<BuildIdEntry>, PerfError> {
        let mut out = Vec::new();
        while at < end {
            let size = u16_at(&b[..end], at + 6).ok_or_else(|| {
                self.truncated(at, "a build-id entry header", 8, "BUILD_ID section", end)
            })? as usize;
            if size < BUILD_ID_EVENT_HEAD || at + size > end {
                return Err(self.malformed(
                    at,
                    "build-id entry",
                    format!("size {size} is outside {BUILD_ID_EVENT_HEAD}..={} (the rest of the BUILD_ID section)", end - at),
                ));
            }
            if let Some(e) = parse_build_id(&b[at..at + size]) {
                out.push(e);
            }
            at += size;
        }
        Ok(out)
    }

    /// Pipe mode: there is no header to say where anything is, so walk the record headers
    /// once (cheap: one read per record) collecting attrs, features and build-ids.
    fn load_pipe(&mut self, b: &[u8]) -> Result<(), PerfError> {
        self.mode = Mode::Pipe;
        self.data = (PIPE_HEADER_SIZE, b.len());
        let mut pos = PIPE_HEADER_SIZE;
        let mut names: Vec<(u64, String)> = Vec::new();
        // A framing error stops the scan quietly; `records()` reports it where it happens.
        while let Ok(Some((kind, _misc, hsize, total))) = frame(b, pos, b.len()) {
            let rec = &b[pos..pos + hsize];
            let body = &rec[8..];
            match kind {
                rt::HEADER_ATTR => {
                    let size = match u32_at(body, 4) {
                        Some(0) => ATTR_SIZE_VER0,
                        Some(s) => s as usize,
                        None => 0,
                    };
                    let Some(raw) = slice_at(body, 0, size).filter(|_| size >= ATTR_SIZE_VER0)
                    else {
                        return Err(self.malformed(
                            pos,
                            "HEADER_ATTR record",
                            format!("its attr size {size} does not fit the record's {} bytes or is below 64", body.len()),
                        ));
                    };
                    let mut attr = EventAttr::decode(raw).unwrap_or_default();
                    attr.ids = body[size..]
                        .chunks_exact(8)
                        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                        .collect();
                    self.attrs.push(attr);
                }
                rt::HEADER_BUILD_ID => {
                    if let Some(e) = parse_build_id(rec) {
                        self.build_ids.push(e);
                    }
                }
                rt::HEADER_FEATURE => {
                    if let Some(id) = u64_at(body, 0) {
                        // perf ends its feature records with an empty HEADER_LAST_FEATURE marker.
                        let marker = hsize == 16 && FeatureId(id as u32).name() == "UNKNOWN";
                        if id < u64::from(FeatureId::LIMIT) && !marker {
                            self.features
                                .push((FeatureId(id as u32), (pos + 16, pos + hsize)));
                        }
                    }
                }
                rt::EVENT_UPDATE => {
                    // u64 type, u64 id, payload; type 2 (PERF_EVENT_UPDATE__NAME) is a name.
                    if let (Some(2), Some(id)) = (u64_at(body, 0), u64_at(body, 8)) {
                        let name = crate::bytes::cstr(&body[16..]);
                        names.push((id, String::from_utf8_lossy(name).into_owned()));
                    }
                }
                _ => {}
            }
            pos += total;
        }
        for (id, name) in names {
            if let Some(a) = self.attrs.iter_mut().find(|a| a.ids.contains(&id)) {
                a.name = Some(name);
            }
        }
        Ok(())
    }

    /// Names from EVENT_DESC, matched by id (or by position when ids are missing).
    fn name_events(&mut self, b: &[u8]) {
        let Some(sec) = self
            .feature_range(FeatureId::EVENT_DESC)
            .and_then(|(s, e)| b.get(s..e))
        else {
            return;
        };
        let Some(descs) = decode_event_desc(sec) else {
            return;
        };
        for (i, d) in descs.into_iter().enumerate() {
            let by_id = d
                .ids
                .first()
                .and_then(|id| self.attrs.iter().position(|a| a.ids.contains(id)));
            let idx = by_id.or((self.attrs.len() == 1 || d.ids.is_empty()).then_some(i));
            if let Some(a) = idx.and_then(|i| self.attrs.get_mut(i)) {
                if a.name.is_none() {
                    a.name = Some(d.name);
                }
            }
        }
    }

    /// Precomputes sample layouts and the id -> attr map.
    fn index_attrs(&mut self) -> Result<(), PerfError> {
        self.layouts = self.attrs.iter().map(SampleLayout::new).collect();
        self.id_pos = self
            .attrs
            .first()
            .map_or(IdPos::None, |a| IdPos::for_sample_type(a.sample_type));
        if self.attrs.len() > 1 {
            // perf refuses files whose events disagree on where the sample id is; so do we,
            // since a sample could not be attributed otherwise.
            for (i, a) in self.attrs.iter().enumerate() {
                if IdPos::for_sample_type(a.sample_type) != self.id_pos
                    || self.id_pos == IdPos::None
                {
                    return Err(PerfError::Unsupported {
                        path: self.path.clone(),
                        offset: 0,
                        what: "several events whose samples do not carry their event id at the same place",
                        hint: if i == 0 {
                            "samples need PERF_SAMPLE_IDENTIFIER (perf record adds it with several -e events)"
                        } else {
                            "every event needs the same IDENTIFIER/ID and IP/TID/TIME/ADDR sample bits"
                        },
                    });
                }
                for &id in &a.ids {
                    self.ids.insert(id, i);
                }
            }
        }
        Ok(())
    }

    fn feature_range(&self, f: FeatureId) -> Option<(usize, usize)> {
        self.features
            .iter()
            .find(|(id, _)| *id == f)
            .map(|&(_, r)| r)
    }

    /// The events recorded: file-mode attr section, or pipe-mode HEADER_ATTR records.
    pub fn attrs(&self) -> &[EventAttr] {
        &self.attrs
    }

    /// Build-ids: the BUILD_ID feature section (file mode) or HEADER_BUILD_ID records (pipe).
    pub fn build_ids(&self) -> &[BuildIdEntry] {
        &self.build_ids
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes of the data section (all records), for progress reporting.
    pub fn data_len(&self) -> u64 {
        (self.data.1 - self.data.0) as u64
    }

    /// Done with file bytes `[start, end)` for now (offsets as in
    /// [`RecordIter::next_with_offset`]): their pages leave this process's resident
    /// memory. A hint for streaming consumers of large files; the bytes stay valid.
    pub fn release(&self, start: u64, end: u64) {
        self.bytes.release(start, end)
    }

    /// The whole file's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }

    /// The raw bytes of a feature section (file mode), or of a HEADER_FEATURE record's
    /// payload (pipe mode); `None` when the file does not have it.
    pub fn feature(&self, f: FeatureId) -> Option<&[u8]> {
        self.feature_range(f)
            .and_then(|(s, e)| self.as_bytes().get(s..e))
    }

    /// The features present, in file order.
    pub fn features(&self) -> impl Iterator<Item = FeatureId> + '_ {
        self.features.iter().map(|(f, _)| *f)
    }

    /// A string feature (HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID), decoded.
    pub fn feature_string(&self, f: FeatureId) -> Option<String> {
        self.feature(f).and_then(decode_string)
    }

    pub fn hostname(&self) -> Option<String> {
        self.feature_string(FeatureId::HOSTNAME)
    }
    pub fn os_release(&self) -> Option<String> {
        self.feature_string(FeatureId::OSRELEASE)
    }
    pub fn perf_version(&self) -> Option<String> {
        self.feature_string(FeatureId::VERSION)
    }
    pub fn arch(&self) -> Option<String> {
        self.feature_string(FeatureId::ARCH)
    }
    /// (CPUs available, CPUs online).
    pub fn nr_cpus(&self) -> Option<(u32, u32)> {
        self.feature(FeatureId::NRCPUS).and_then(decode_nrcpus)
    }
    /// The `perf record` command line, one argument per element.
    pub fn cmdline(&self) -> Option<Vec<String>> {
        self.feature(FeatureId::CMDLINE).and_then(decode_cmdline)
    }

    /// All records of the data section, in file order.
    pub fn records(&self) -> RecordIter<'_> {
        RecordIter {
            pd: self,
            pos: self.data.0,
            end: self.data.1,
            done: false,
        }
    }

    /// Splits the records into at most `n` runs of roughly equal bytes, cut at record
    /// boundaries, for parallel consumers: together they are all records in order. Finding
    /// the boundaries walks the record headers once. A framing error stops the split; the
    /// last run then reaches it and reports it.
    pub fn record_chunks(&self, n: usize) -> Vec<RecordIter<'_>> {
        let n = n.max(1);
        let (start, end) = self.data;
        let b = self.as_bytes();
        let total = end - start;
        let mut cuts = vec![start];
        let mut pos = start;
        // Hopping over the headers touches every page; hand them back as we go
        // so that finding the cuts does not make the whole file resident.
        let mut released = start;
        for k in 1..n {
            let target = start + ((total as u128 * k as u128) / n as u128) as usize;
            while pos < target {
                match frame(b, pos, end) {
                    Ok(Some((_, _, _, len))) => pos += len,
                    _ => break,
                }
                if pos - released >= 8 << 20 {
                    self.release(released as u64, pos as u64);
                    released = pos;
                }
            }
            if pos >= target && pos < end && pos > *cuts.last().unwrap_or(&start) {
                cuts.push(pos);
            } else if pos < target {
                break; // framing error or end
            }
        }
        self.release(released as u64, pos as u64);
        cuts.push(end);
        cuts.windows(2)
            .map(|w| RecordIter {
                pd: self,
                pos: w[0],
                end: w[1],
                done: false,
            })
            .collect()
    }

    fn decode<'a>(
        &'a self,
        at: usize,
        kind: u32,
        misc: u16,
        rec: &'a [u8],
    ) -> Result<Record<'a>, PerfError> {
        let body = &rec[8..];
        let short = |what: &'static str| PerfError::Truncated {
            path: self.path.clone(),
            offset: at as u64,
            what,
            need: 0,
            within: "record",
            end: (at + rec.len()) as u64,
        };
        Ok(match kind {
            rt::SAMPLE => {
                let attr = self.sample_attr(at, body)?;
                let l = &self.layouts[attr];
                let s = parse_sample(body, l, attr, misc).map_err(|e| {
                    self.malformed(
                        at + 8 + e.at,
                        "sample record",
                        format!(
                            "the record's {} bytes end before its {} (event {attr} has sample_type {:#x})",
                            rec.len(),
                            e.what,
                            l.sample_type
                        ),
                    )
                })?;
                Record::Sample(s)
            }
            rt::MMAP | rt::MMAP2 => {
                let m = parse_mmap(body, misc, kind == rt::MMAP2).map_err(|(off, what)| {
                    self.malformed(
                        at + 8 + off,
                        "mmap record",
                        format!("the record's {} bytes end before its {what}", rec.len()),
                    )
                })?;
                Record::Mmap(m)
            }
            rt::COMM => Record::Comm(
                parse_comm(body, misc).ok_or_else(|| short("a COMM record's pid, tid and name"))?,
            ),
            rt::FORK => Record::Fork(
                parse_fork(body)
                    .ok_or_else(|| short("a FORK record's pids, tids and time (24 bytes)"))?,
            ),
            rt::EXIT => Record::Exit(
                parse_fork(body)
                    .ok_or_else(|| short("an EXIT record's pids, tids and time (24 bytes)"))?,
            ),
            rt::LOST => Record::Lost {
                lost: u64_at(body, 8).ok_or_else(|| short("a LOST record's id and count"))?,
            },
            rt::LOST_SAMPLES => Record::Lost {
                lost: u64_at(body, 0).ok_or_else(|| short("a LOST_SAMPLES record's count"))?,
            },
            rt::HEADER_BUILD_ID => Record::BuildId(
                parse_build_id(rec).ok_or_else(|| short("a build-id record (36 bytes + name)"))?,
            ),
            rt::COMPRESSED => {
                return Err(PerfError::Unsupported {
                    path: self.path.clone(),
                    offset: at as u64,
                    what: "zstd-compressed records (perf record -z)",
                    hint: "re-record without -z, or decompress with `perf inject -i IN -o OUT`",
                })
            }
            _ => Record::Other { kind, misc },
        })
    }

    /// Which attr a sample belongs to: its id, looked up, when there are several.
    #[inline]
    fn sample_attr(&self, at: usize, body: &[u8]) -> Result<usize, PerfError> {
        match self.attrs.len() {
            0 => Err(self.malformed(
                at,
                "sample record",
                "it comes before any event attr (HEADER_ATTR) that could describe it".into(),
            )),
            1 => Ok(0),
            n => {
                let IdPos::At(off) = self.id_pos else {
                    return Ok(0);
                };
                let id = u64_at(body, off).ok_or_else(|| {
                    self.malformed(at, "sample record", "too short to hold its event id".into())
                })?;
                self.ids
                    .get(&id)
                    .copied()
                    .ok_or(PerfError::UnknownSampleId {
                        path: self.path.clone(),
                        offset: at as u64,
                        id,
                        nattrs: n,
                    })
            }
        }
    }
}

/// (type, misc, header.size, bytes to the next record).
type Frame = (u32, u16, usize, usize);

/// Reads the record header at `pos`: (type, misc, header.size, bytes to skip to the next
/// record). `Ok(None)` at the end; `Err((offset, problem))` when the framing is broken.
#[inline(always)]
fn frame(b: &[u8], pos: usize, end: usize) -> Result<Option<Frame>, (&'static str, u64)> {
    if pos >= end {
        return Ok(None);
    }
    let Some(hdr) = b.get(pos..end).and_then(|s| s.get(..8)) else {
        return Err(("header", 8));
    };
    let kind = u32::from_le_bytes([hdr[0], hdr[1], hdr[2], hdr[3]]);
    let misc = u16::from_le_bytes([hdr[4], hdr[5]]);
    let size = u16::from_le_bytes([hdr[6], hdr[7]]) as usize;
    if size < 8 {
        return Err(("size", size as u64));
    }
    if pos + size > end {
        return Err(("body", size as u64));
    }
    let mut total = size;
    if kind == rt::AUXTRACE {
        // AUX area data follows the record and is not counted in header.size.
        let extra = u64_at(b, pos + 8)
            .filter(|_| size >= 16)
            .ok_or(("auxtrace size", 16))?;
        total = usize::try_from(extra)
            .ok()
            .and_then(|e| e.checked_add(size))
            .filter(|t| pos.checked_add(*t).is_some_and(|e| e <= end))
            .ok_or(("auxtrace data", extra))?;
    }
    Ok(Some((kind, misc, size, total)))
}

/// Iterates records in file order. After an error it ends.
pub struct RecordIter<'a> {
    pd: &'a PerfData,
    pos: usize,
    end: usize,
    done: bool,
}

impl<'a> RecordIter<'a> {
    /// Byte offset of the next record in the file (for progress and error reports).
    pub fn position(&self) -> u64 {
        self.pos as u64
    }
    /// Byte offset where this iterator stops.
    pub fn end(&self) -> u64 {
        self.end as u64
    }

    /// Like `next`, also returning the record's byte offset in the file.
    pub fn next_with_offset(&mut self) -> Option<Result<(u64, Record<'a>), PerfError>> {
        let at = self.pos;
        self.next().map(|r| r.map(|rec| (at as u64, rec)))
    }

    fn framing_error(&self, what: &'static str, n: u64) -> PerfError {
        let pd = self.pd;
        let at = self.pos;
        match what {
            "header" => pd.truncated(at, "an 8-byte record header", 8, "data section", self.end),
            "size" => pd.malformed(
                at,
                "record header",
                format!("its size is {n}, smaller than the 8-byte header itself"),
            ),
            "body" => pd.truncated(
                at,
                "a record of the size its header gives",
                n,
                "data section",
                self.end,
            ),
            _ => pd.truncated(
                at,
                "the AUX data after a PERF_RECORD_AUXTRACE",
                n,
                "data section",
                self.end,
            ),
        }
    }
}

impl<'a> Iterator for RecordIter<'a> {
    type Item = Result<Record<'a>, PerfError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let b = self.pd.as_bytes();
        match frame(b, self.pos, self.end) {
            Ok(None) => None,
            Err((what, n)) => {
                self.done = true;
                Some(Err(self.framing_error(what, n)))
            }
            Ok(Some((kind, misc, size, total))) => {
                let at = self.pos;
                self.pos += total;
                let r = self.pd.decode(at, kind, misc, &b[at..at + size]);
                if r.is_err() {
                    self.done = true;
                }
                Some(r)
            }
        }
    }
}
