//! Writing perf.data that this machine's `perf script`, `perf report` and
//! `perf buildid-list` read: file mode (`PerfWriter`, seekable output; the header is
//! patched at `finish`) and pipe mode (`PipeWriter`, any `Write`).
//!
//! Both are a [`RecordStream`] (the records encoded, buffered and written as they
//! come, with the feature sections gathered for the end) with their own start and
//! end; each derefs to it, so its `write_*` methods are the writers' own.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};

use crate::attr::{EventAttr, ATTR_SIZE_WRITTEN};
use crate::encode::{Encoder, SampleOut};
use crate::error::PerfError;
use crate::features::{encode_string, FeatureId};
use crate::header::{FILE_HEADER_SIZE, MAGIC, PIPE_HEADER_SIZE};
use crate::record::{BuildIdEntry, Fork, OwnedMmap};

/// Feature sections and build-ids gathered for `finish`, shared by both writers.
#[derive(Default)]
struct Extras {
    build_ids: Vec<BuildIdEntry>,
    features: BTreeMap<u32, Vec<u8>>,
}

impl Extras {
    fn set_string(&mut self, f: FeatureId, s: &str) {
        let mut b = Vec::new();
        if f == FeatureId::CMDLINE {
            let args: Vec<&str> = s.split_whitespace().collect();
            b.extend_from_slice(&(args.len() as u32).to_le_bytes());
            for a in args {
                encode_string(&mut b, a);
            }
        } else {
            encode_string(&mut b, s);
        }
        self.features.insert(f.0, b);
    }

    /// All feature sections to write, in id order.
    fn sections(&self, enc: &Encoder) -> Result<Vec<(u32, Vec<u8>)>, String> {
        if let Some(bad) = self
            .features
            .keys()
            .find(|&&id| id >= FeatureId::LIMIT || id == 0)
        {
            return Err(format!(
                "feature id {bad} is outside 1..{}",
                FeatureId::LIMIT
            ));
        }
        let mut all = self.features.clone();
        let mut ids = Vec::new();
        for e in &self.build_ids {
            Encoder::build_id(&mut ids, e)?;
        }
        all.insert(FeatureId::BUILD_ID.0, ids);
        if let Some(d) = enc.event_desc() {
            all.entry(FeatureId::EVENT_DESC.0).or_insert(d);
        }
        if enc.attrs.iter().any(EventAttr::has_branch_stack) {
            // perf report picks branch mode by default when this (empty) feature is present.
            all.entry(FeatureId::BRANCH_STACK.0).or_default();
        }
        Ok(all.into_iter().collect())
    }
}

/// The records of a perf.data as they are written, shared by [`PerfWriter`] and
/// [`PipeWriter`]: each record is encoded into a buffer, then written whole (or, when
/// it cannot be encoded, not at all).
pub struct RecordStream<W: Write> {
    out: BufWriter<W>,
    path: PathBuf,
    enc: Encoder,
    extras: Extras,
    /// Bytes written.
    pos: u64,
    buf: Vec<u8>,
}

impl<W: Write> RecordStream<W> {
    /// `path` names the output in errors.
    fn new(w: W, path: PathBuf, attrs: Vec<EventAttr>) -> Result<Self, PerfError> {
        let enc = Encoder::new(attrs).map_err(|detail| PerfError::InvalidInput {
            path: path.clone(),
            detail,
        })?;
        Ok(RecordStream {
            out: BufWriter::with_capacity(1 << 20, w),
            path,
            enc,
            extras: Extras::default(),
            pos: 0,
            buf: Vec::with_capacity(4096),
        })
    }

    /// The attrs as they will be written (ids and IDENTIFIER filled in).
    pub fn attrs(&self) -> &[EventAttr] {
        &self.enc.attrs
    }

    fn put(&mut self, b: &[u8]) -> Result<(), PerfError> {
        self.out.write_all(b).map_err(|source| PerfError::Write {
            path: self.path.clone(),
            source,
        })?;
        self.pos += b.len() as u64;
        Ok(())
    }

    fn invalid(&self, detail: String) -> PerfError {
        PerfError::InvalidInput {
            path: self.path.clone(),
            detail,
        }
    }

    /// Writes the record encoded in `buf` if `r` says it was encoded, and empties `buf`.
    fn flush_record(&mut self, r: Result<(), String>) -> Result<(), PerfError> {
        let r = r.map_err(|d| self.invalid(d));
        let buf = std::mem::take(&mut self.buf);
        let w = if r.is_ok() { self.put(&buf) } else { Ok(()) };
        self.buf = buf;
        self.buf.clear();
        r.and(w)
    }

    /// The buffered output, flushed.
    fn into_inner(self) -> Result<W, PerfError> {
        let path = self.path;
        self.out.into_inner().map_err(|e| PerfError::Write {
            path,
            source: e.into_error(),
        })
    }

    /// A PERF_RECORD_MMAP2 (with the build-id in the record when `m.build_id` is set).
    pub fn write_mmap2(&mut self, m: &OwnedMmap) -> Result<(), PerfError> {
        let r = self.enc.mmap(&mut self.buf, m, true);
        self.flush_record(r)
    }

    /// A PERF_RECORD_MMAP (old style: no prot, no build-id).
    pub fn write_mmap(&mut self, m: &OwnedMmap) -> Result<(), PerfError> {
        let r = self.enc.mmap(&mut self.buf, m, false);
        self.flush_record(r)
    }

    pub fn write_comm(
        &mut self,
        pid: u32,
        tid: u32,
        comm: &str,
        exec: bool,
    ) -> Result<(), PerfError> {
        let r = self.enc.comm(&mut self.buf, pid, tid, comm, exec);
        self.flush_record(r)
    }

    pub fn write_fork(&mut self, f: &Fork) -> Result<(), PerfError> {
        let r = self.enc.fork(&mut self.buf, f, false);
        self.flush_record(r)
    }

    pub fn write_exit(&mut self, f: &Fork) -> Result<(), PerfError> {
        let r = self.enc.fork(&mut self.buf, f, true);
        self.flush_record(r)
    }

    /// A sample of event `attr`, encoded per that attr's sample_type.
    pub fn write_sample(&mut self, attr: usize, s: &SampleOut<'_>) -> Result<(), PerfError> {
        let r = self.enc.sample(&mut self.buf, attr, s);
        self.flush_record(r)
    }

    /// Adds an entry to the BUILD_ID feature section.
    pub fn add_build_id(&mut self, e: BuildIdEntry) {
        self.extras.build_ids.push(e);
    }

    /// Sets a string feature (HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID); for
    /// CMDLINE the string is split at whitespace into arguments.
    pub fn set_feature_string(&mut self, f: FeatureId, s: &str) {
        self.extras.set_string(f, s);
    }

    /// Sets NRCPUS (available, online).
    pub fn set_nr_cpus(&mut self, available: u32, online: u32) {
        let mut b = available.to_le_bytes().to_vec();
        b.extend_from_slice(&online.to_le_bytes());
        self.extras.features.insert(FeatureId::NRCPUS.0, b);
    }
}

/// Writes a file-mode perf.data.
pub struct PerfWriter<W: Write + Seek> {
    records: RecordStream<W>,
    /// Where the stream started (the file's offset 0).
    base: u64,
}

impl<W: Write + Seek> Deref for PerfWriter<W> {
    type Target = RecordStream<W>;
    fn deref(&self) -> &RecordStream<W> {
        &self.records
    }
}

impl<W: Write + Seek> DerefMut for PerfWriter<W> {
    fn deref_mut(&mut self) -> &mut RecordStream<W> {
        &mut self.records
    }
}

impl PerfWriter<File> {
    /// Creates (truncates) `path`. On error the partial file is left for the caller to
    /// remove; write to a temporary name and rename on success for atomic output.
    pub fn create(path: &Path, attrs: Vec<EventAttr>) -> Result<Self, PerfError> {
        let f = File::create(path).map_err(|source| PerfError::Write {
            path: path.to_path_buf(),
            source,
        })?;
        let mut w = Self::new(f, attrs)?;
        w.records.path = path.to_path_buf();
        Ok(w)
    }
}

impl<W: Write + Seek> PerfWriter<W> {
    /// Starts a perf.data on `w` at its current position. With several attrs, IDENTIFIER is
    /// added to each sample_type and attrs without ids are given one.
    pub fn new(mut w: W, attrs: Vec<EventAttr>) -> Result<Self, PerfError> {
        let path = PathBuf::from("<perf.data output>");
        let base = w.stream_position();
        let records = RecordStream::new(w, path, attrs)?;
        let base = base.map_err(|source| PerfError::Write {
            path: records.path.clone(),
            source,
        })?;
        let mut me = PerfWriter { records, base };
        // Header placeholder; the real one is written by `finish` once sizes are known.
        me.records.put(&[0u8; FILE_HEADER_SIZE])?;
        Ok(me)
    }

    /// Writes the feature sections, ids and attrs after the data, then the header, and
    /// returns the output.
    pub fn finish(self) -> Result<W, PerfError> {
        let PerfWriter { mut records, base } = self;
        let r = &mut records;
        let data_offset = FILE_HEADER_SIZE as u64;
        let data_size = r.pos - data_offset;
        let sections = r.extras.sections(&r.enc).map_err(|d| r.invalid(d))?;

        // The feature section table must sit right after the data (perf finds it there).
        let table_at = r.pos;
        let mut at = table_at + 16 * sections.len() as u64;
        let mut table = Vec::new();
        let mut bitmap = [0u64; 4];
        for (id, body) in &sections {
            bitmap[(*id / 64) as usize] |= 1 << (id % 64);
            table.extend_from_slice(&at.to_le_bytes());
            table.extend_from_slice(&(body.len() as u64).to_le_bytes());
            at += body.len() as u64;
        }
        r.put(&table)?;
        for (_, body) in &sections {
            r.put(body)?;
        }

        // Each attr's id array, then the attr section pointing at them.
        let attrs = std::mem::take(&mut r.enc.attrs);
        let mut id_sections = Vec::new();
        for a in &attrs {
            id_sections.push((r.pos, 8 * a.ids.len() as u64));
            let ids: Vec<u8> = a.ids.iter().flat_map(|i| i.to_le_bytes()).collect();
            r.put(&ids)?;
        }
        let attrs_at = r.pos;
        for (a, (off, size)) in attrs.iter().zip(&id_sections) {
            r.put(&a.encode())?;
            r.put(&off.to_le_bytes())?;
            r.put(&size.to_le_bytes())?;
        }
        let attrs_size = r.pos - attrs_at;

        let mut h = Vec::with_capacity(FILE_HEADER_SIZE);
        for v in [
            MAGIC,
            FILE_HEADER_SIZE as u64,
            ATTR_SIZE_WRITTEN as u64 + 16,
            attrs_at,
            attrs_size,
            data_offset,
            data_size,
            0,
            0,
        ] {
            h.extend_from_slice(&v.to_le_bytes());
        }
        for w in bitmap {
            h.extend_from_slice(&w.to_le_bytes());
        }
        let (path, end) = (records.path.clone(), records.pos);
        let err = |source| PerfError::Write {
            path: path.clone(),
            source,
        };
        let mut w = records.into_inner()?;
        w.seek(SeekFrom::Start(base)).map_err(err)?;
        w.write_all(&h).map_err(err)?;
        // Leave the output positioned at the end of the perf.data.
        w.seek(SeekFrom::Start(base + end)).map_err(err)?;
        w.flush().map_err(err)?;
        Ok(w)
    }
}

/// Writes a pipe-mode perf.data (what `perf record -o -` produces) to any `Write`:
/// a 16-byte header, HEADER_ATTR records, then records as they come; features and
/// build-ids go out as HEADER_FEATURE / HEADER_BUILD_ID records at `finish`.
pub struct PipeWriter<W: Write> {
    records: RecordStream<W>,
}

impl<W: Write> Deref for PipeWriter<W> {
    type Target = RecordStream<W>;
    fn deref(&self) -> &RecordStream<W> {
        &self.records
    }
}

impl<W: Write> DerefMut for PipeWriter<W> {
    fn deref_mut(&mut self) -> &mut RecordStream<W> {
        &mut self.records
    }
}

impl<W: Write> PipeWriter<W> {
    pub fn new(w: W, attrs: Vec<EventAttr>) -> Result<Self, PerfError> {
        let path = PathBuf::from("<pipe-mode perf.data output>");
        let mut r = RecordStream::new(w, path, attrs)?;
        r.buf.extend_from_slice(&MAGIC.to_le_bytes());
        r.buf
            .extend_from_slice(&(PIPE_HEADER_SIZE as u64).to_le_bytes());
        let mut encoded = Ok(());
        for a in &r.enc.attrs {
            encoded = encoded.and(Encoder::header_attr(&mut r.buf, a));
        }
        r.flush_record(encoded)?;
        Ok(PipeWriter { records: r })
    }

    /// Writes the feature and build-id records and returns the output.
    pub fn finish(self) -> Result<W, PerfError> {
        let mut r = self.records;
        let sections = r.extras.sections(&r.enc).map_err(|d| r.invalid(d))?;
        let mut encoded = Ok(());
        for (id, body) in &sections {
            if *id != FeatureId::BUILD_ID.0 {
                encoded = encoded.and_then(|_| Encoder::header_feature(&mut r.buf, *id, body));
            }
        }
        for e in &r.extras.build_ids {
            encoded = encoded.and_then(|_| Encoder::build_id(&mut r.buf, e));
        }
        r.flush_record(encoded)?;
        r.into_inner()
    }
}
