//! Writing a raw file: rows sorted by (kind, from, to), each key once, footer metadata,
//! to a temporary name in the output's directory renamed into place when complete, so
//! a failure never leaves a partial file.

use crate::error::RawError;
use crate::schema::{self, FileInfo, Row, RowKind, META_KIND, META_SCHEMA_VERSION, SCHEMA_VERSION};
use arrow_array::types::Int32Type;
#[cfg(test)]
use arrow_array::RecordBatch;
use arrow_array::{ArrayRef, DictionaryArray, Int32Array, Int64Array, StringArray};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use rayon::prelude::*;
use std::path::Path;
use std::sync::Arc;

/// Rows per row group (ArrowWriter's default).
const ROW_GROUP_ROWS: usize = 1024 * 1024;

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
    let mut props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_key_value_metadata(Some(meta));
    for (name, col) in schema::COLUMNS {
        if col == schema::Col::Utf8 {
            // A text column holds one value per file (or three kinds): min / max
            // statistics would compare every row's bytes and tell a reader nothing
            // that the first row does not.
            props = props.set_column_statistics_enabled(name.into(), EnabledStatistics::None);
        }
    }
    for name in [schema::C_FROM, schema::C_TO, schema::C_COUNT].map(|c| schema::COLUMNS[c].0) {
        // Addresses and counts are nearly all distinct: a dictionary would intern every
        // value only to overflow and fall back to plain encoding.
        props = props.set_column_dictionary_enabled(name.into(), false);
    }
    let props = props.build();
    let schema = schema::arrow_schema();
    let mut out = kfdo_outfile::AtomicOutput::create(path)?;
    let file = out.file().try_clone().map_err(|e| out.error(e))?;
    // ArrowWriter lays out the file (the Parquet schema, the footer with the Arrow
    // schema beside ours); its lower half then takes row groups whose columns were
    // encoded side by side, one column per task.
    let (mut writer, factory) = ArrowWriter::try_new(
        std::io::BufWriter::with_capacity(1 << 20, file),
        schema.clone(),
        Some(props),
    )
    .and_then(|w| w.into_serialized_writer())
    .map_err(|e| out.error(e))?;
    for (g, chunk) in rows.chunks(ROW_GROUP_ROWS).enumerate() {
        let columns = columns(info, chunk);
        let writers = factory.create_column_writers(g).map_err(|e| out.error(e))?;
        let encoded: Vec<parquet::errors::Result<ArrowColumnChunk>> = writers
            .into_par_iter()
            .zip(columns.par_iter())
            .zip(schema.fields().par_iter())
            .map(|((mut w, column), field)| {
                for leaf in compute_leaves(field, column)? {
                    w.write(&leaf)?;
                }
                w.close()
            })
            .collect();
        let mut group = writer.next_row_group().map_err(|e| out.error(e))?;
        for c in encoded {
            c.and_then(|c| c.append_to_row_group(&mut group))
                .map_err(|e| out.error(e))?;
        }
        group.close().map_err(|e| out.error(e))?;
    }
    let inner = writer.into_inner().map_err(|e| out.error(e))?;
    inner.into_inner().map_err(|e| out.error(e.error()))?;
    out.commit()?;
    Ok(())
}

/// One record batch of `rows`, the per-file columns repeated on each (the contract's
/// types: for writers that take whole batches).
#[cfg(test)]
pub(crate) fn batch(info: &FileInfo, rows: &[Row]) -> Result<RecordBatch, RawError> {
    let columns = columns(info, rows)
        .iter()
        .map(|c| arrow_cast_to_plain(c))
        .collect::<Vec<_>>();
    RecordBatch::try_new(schema::arrow_schema(), columns)
        .map_err(|e| RawError::Request(format!("building a record batch: {e}")))
}

#[cfg(test)]
fn arrow_cast_to_plain(c: &ArrayRef) -> ArrayRef {
    use arrow_array::cast::AsArray;
    match c.as_dictionary_opt::<Int32Type>() {
        Some(d) => {
            let values = d.values().as_string::<i32>();
            let plain: StringArray = d
                .keys()
                .values()
                .iter()
                .map(|&k| Some(values.value(k as usize)))
                .collect();
            Arc::new(plain)
        }
        None => c.clone(),
    }
}

/// The columns of `rows` in file order, text as one-value (or, for `kind`,
/// three-value) dictionaries: the Parquet encoder reads a value through its key, so
/// no text is repeated in memory.
fn columns(info: &FileInfo, rows: &[Row]) -> Vec<ArrayRef> {
    let n = rows.len();
    let text = |v: &str| {
        let keys = Int32Array::from(vec![0; n]);
        Arc::new(DictionaryArray::<Int32Type>::new(
            keys,
            Arc::new(StringArray::from(vec![v])),
        )) as ArrayRef
    };
    let int = |f: &dyn Fn(usize) -> i64| {
        Arc::new(Int64Array::from_iter_values((0..n).map(f))) as ArrayRef
    };
    let kinds = [RowKind::Branch, RowKind::Ip, RowKind::Range];
    let kind_keys = Int32Array::from_iter_values(rows.iter().map(|r| match r.kind {
        RowKind::Branch => 0,
        RowKind::Ip => 1,
        RowKind::Range => 2,
    }));
    let kind_names = StringArray::from(kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>());
    vec![
        text(&info.build_id),
        text(&info.binary_path),
        text(&info.host),
        text(&info.host_class),
        text(&info.recorder),
        int(&|_| info.window_start_ns),
        int(&|_| info.window_end_ns),
        int(&|_| info.samples),
        Arc::new(DictionaryArray::<Int32Type>::new(
            kind_keys,
            Arc::new(kind_names),
        )),
        int(&|i| rows[i].from),
        int(&|i| rows[i].to),
        int(&|i| rows[i].count),
    ]
}
