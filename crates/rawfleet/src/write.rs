//! Writing a raw file: rows sorted by (kind, from, to), each key once, footer metadata,
//! to a temporary name in the output's directory renamed into place when complete, so
//! a failure never leaves a partial file.

use crate::error::RawError;
use crate::schema::{self, FileInfo, Row, META_KIND, META_SCHEMA_VERSION, SCHEMA_VERSION};
use arrow_array::builder::{Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use std::path::Path;
use std::sync::Arc;

/// Rows per record batch (and so the granularity of row groups' growth).
const BATCH_ROWS: usize = 64 * 1024;

/// Whether a file is one host's or a merge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileKind {
    Host,
    /// A merge of `files` files from `hosts` distinct hosts.
    Merged {
        hosts: u64,
        files: u64,
    },
}

/// Writes `rows` (sorted here; keys must be distinct) with the per-file columns `info`
/// into `path`, whole or not at all.
pub fn write_file(
    path: &Path,
    kind: &FileKind,
    info: &FileInfo,
    mut rows: Vec<Row>,
) -> Result<(), RawError> {
    rows.sort_unstable();
    if let Some(w) = rows
        .windows(2)
        .find(|w| (w[0].kind, w[0].from, w[0].to) == (w[1].kind, w[1].from, w[1].to))
    {
        // A caller's bug, but a file that breaks the contract must not be written.
        return Err(RawError::Request(format!(
            "{}: key ({}, {}, {}) twice in the rows to write",
            path.display(),
            w[0].kind.as_str(),
            w[0].from,
            w[0].to
        )));
    }
    if let Some(r) = rows.iter().find(|r| r.count <= 0 || r.from < 0 || r.to < 0) {
        return Err(RawError::Request(format!(
            "{}: row {r:?} breaks the schema (count > 0, addresses >= 0)",
            path.display()
        )));
    }
    let mut meta = vec![
        (META_SCHEMA_VERSION.to_string(), SCHEMA_VERSION.to_string()),
        (
            META_KIND.to_string(),
            match kind {
                FileKind::Host => schema::KIND_HOST,
                FileKind::Merged { .. } => schema::KIND_MERGED,
            }
            .to_string(),
        ),
    ];
    if let FileKind::Merged { hosts, files } = kind {
        meta.push((schema::META_HOSTS.into(), hosts.to_string()));
        meta.push((schema::META_FILES.into(), files.to_string()));
    }
    write_with_footer(path, &meta, info, &rows)
}

/// Writes `rows` as given (no checks) with exactly the footer keys `meta`: for tests
/// and tools that must write what this kfdo would not (another schema version, say).
pub fn write_with_footer(
    path: &Path,
    meta: &[(String, String)],
    info: &FileInfo,
    rows: &[Row],
) -> Result<(), RawError> {
    let meta = meta
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_key_value_metadata(Some(meta))
        .build();
    let mut out = kfdo_outfile::AtomicOutput::create(path)?;
    let file = out.file().try_clone().map_err(|e| out.error(e))?;
    let mut writer = ArrowWriter::try_new(
        std::io::BufWriter::with_capacity(1 << 20, file),
        schema::arrow_schema(),
        Some(props),
    )
    .map_err(|e| out.error(e))?;
    for chunk in rows.chunks(BATCH_ROWS) {
        writer
            .write(&batch(info, chunk)?)
            .map_err(|e| out.error(e))?;
    }
    let inner = writer.into_inner().map_err(|e| out.error(e))?;
    inner.into_inner().map_err(|e| out.error(e.error()))?;
    out.commit()?;
    Ok(())
}

/// One record batch of `rows`, the per-file columns repeated on each.
pub(crate) fn batch(info: &FileInfo, rows: &[Row]) -> Result<RecordBatch, RawError> {
    let n = rows.len();
    let text = |v: &str| {
        let mut b = StringBuilder::with_capacity(n, n * v.len());
        for _ in 0..n {
            b.append_value(v);
        }
        Arc::new(b.finish()) as ArrayRef
    };
    let int = |f: &dyn Fn(usize) -> i64| {
        let mut b = Int64Builder::with_capacity(n);
        for i in 0..n {
            b.append_value(f(i));
        }
        Arc::new(b.finish()) as ArrayRef
    };
    let mut kinds = StringBuilder::with_capacity(n, n * 6);
    for r in rows {
        kinds.append_value(r.kind.as_str());
    }
    let columns: Vec<ArrayRef> = vec![
        text(&info.build_id),
        text(&info.binary_path),
        text(&info.host),
        text(&info.host_class),
        text(&info.recorder),
        int(&|_| info.window_start_ns),
        int(&|_| info.window_end_ns),
        int(&|_| info.samples),
        Arc::new(kinds.finish()),
        int(&|i| rows[i].from),
        int(&|i| rows[i].to),
        int(&|i| rows[i].count),
    ];
    RecordBatch::try_new(schema::arrow_schema(), columns)
        .map_err(|e| RawError::Request(format!("building a record batch: {e}")))
}
