//! Reading a raw file one record batch at a time, checking it against the schema on
//! the way. Every error names the file, the place (row group, row, column) and what to
//! do; nothing here panics on a bad file.

use crate::columns::{self, Checked, Layout};
use crate::error::RawError;
use crate::input::RawInput;
use crate::schema::{self, FileInfo, Row, COLUMNS, SCHEMA_VERSION};
use arrow_array::RecordBatch;
use arrow_schema::{Field, Schema};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows per batch read: memory per open file stays small whatever the file's size.
const BATCH_ROWS: usize = 64 * 1024;

/// The footer's kfdo keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footer {
    pub schema_version: u32,
    /// "host" or "merged".
    pub kind: String,
    /// The kfdo keys present, sorted by key (what the dump prints).
    pub entries: Vec<(String, String)>,
}

/// An open raw file.
pub struct RawReader {
    /// What errors call the file (its [`RawInput::name`]).
    path: PathBuf,
    footer: Footer,
    batches: ParquetRecordBatchReader,
    /// Cumulative row counts of the row groups, to name the group of a row.
    group_ends: Vec<u64>,
    total_rows: u64,
    /// Rows read so far.
    row: u64,
    /// Each column's index in the file, in [`COLUMNS`] order.
    index: [usize; 12],
    info: Option<FileInfo>,
}

/// What a full pass over a file found.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The file read.
    pub path: PathBuf,
    /// What messages call it ([`RawInput::name`]).
    pub name: PathBuf,
    pub footer: Footer,
    pub info: FileInfo,
    pub rows: u64,
}

fn damaged(path: &Path, e: impl std::fmt::Display) -> RawError {
    if let Some(what) = other_kind(path) {
        return RawError::bad(path, what);
    }
    RawError::bad(
        path,
        format!(
            "not a readable Parquet file ({e}); it may be truncated (an interrupted copy or \
             write) or not a kfdo raw file: copy or write it again"
        ),
    )
}

/// What a file that is not Parquet is, when its first bytes say so, and what to run on
/// it instead: a recording or a binary given where a raw profile belongs is a mistake of
/// order, not a damaged file.
fn other_kind(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .ok()?;
    if &head == b"PERFILE2" {
        Some(
            "is a perf.data recording, not a raw profile: make one from it with `kfdo \
             profile --binary BIN --perf-data FILE --raw-out FILE.parquet`, then merge those"
                .into(),
        )
    } else if head.starts_with(b"\x7fELF") {
        Some(
            "is an ELF binary, not a raw profile: raw profiles are made by `kfdo profile \
             --raw-out` or `kfdo collect`"
                .into(),
        )
    } else {
        None
    }
}

/// Opens `path` and checks its footer and schema.
pub fn open(path: &Path) -> Result<RawReader, RawError> {
    open_input(&RawInput::local(path), None)
}

/// Opens `input.path` and checks its footer and schema; errors name `input.name`.
pub fn open_named(input: &RawInput) -> Result<RawReader, RawError> {
    open_input(input, None)
}

/// Opens `input.path` to read at most `limit` rows (`Some(1)`: the per-file columns,
/// cheaply); errors name `input.name`.
fn open_input(input: &RawInput, limit: Option<usize>) -> Result<RawReader, RawError> {
    // Every message below names the file as its owner knows it.
    let path = input.name.as_path();
    let file = std::fs::File::open(&input.path)
        .map_err(|e| RawError::bad(path, format!("cannot open: {e}")))?;
    let plain = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
        .map_err(|e| damaged(path, e))?;
    let meta = plain.metadata().clone();
    let footer = footer(path, meta.file_metadata().key_value_metadata())?;
    let arrow = plain.schema().clone();
    let mut index = [0usize; 12];
    for (i, &(name, col)) in COLUMNS.iter().enumerate() {
        let Ok(at) = arrow.index_of(name) else {
            let have: Vec<_> = arrow.fields().iter().map(|f| f.name().as_str()).collect();
            return Err(RawError::bad(
                path,
                format!(
                    "no column `{name}` (it has: {}): not a kfdo raw file of schema {SCHEMA_VERSION}; \
                     write it with `kfdo profile --raw-out` or `kfdo merge-raw`",
                    have.join(", ")
                ),
            ));
        };
        let found = arrow.field(at).data_type();
        if found != &col.data_type() {
            return Err(RawError::bad(
                path,
                format!(
                    "column `{name}` is {found}, schema {SCHEMA_VERSION} says {}; the writer \
                     must keep the contract's types (Spark: string and long)",
                    col.data_type()
                ),
            ));
        }
        index[i] = at;
    }
    // The same columns, text ones decoded as dictionaries (columns::reading_schema).
    let wanted = columns::reading_schema();
    let fields: Vec<Field> = arrow
        .fields()
        .iter()
        .map(|f| match wanted.field_with_name(f.name()) {
            Ok(w) => Field::new(f.name(), w.data_type().clone(), f.is_nullable()),
            Err(_) => f.as_ref().clone(),
        })
        .collect();
    let options = ArrowReaderOptions::new().with_schema(Arc::new(Schema::new_with_metadata(
        fields,
        arrow.metadata().clone(),
    )));
    let typed =
        ArrowReaderMetadata::try_new(meta.clone(), options).map_err(|e| damaged(path, e))?;
    let mut group_ends = Vec::new();
    let mut total = 0u64;
    for g in meta.row_groups() {
        total += g.num_rows().max(0) as u64;
        group_ends.push(total);
    }
    let mut builder =
        ParquetRecordBatchReaderBuilder::new_with_metadata(file, typed).with_batch_size(BATCH_ROWS);
    if let Some(n) = limit {
        builder = builder.with_limit(n);
    }
    let batches = builder.build().map_err(|e| damaged(path, e))?;
    Ok(RawReader {
        path: path.to_path_buf(),
        footer,
        batches,
        group_ends,
        total_rows: total,
        row: 0,
        index,
        info: None,
    })
}

fn footer(
    path: &Path,
    kv: Option<&Vec<parquet::file::metadata::KeyValue>>,
) -> Result<Footer, RawError> {
    let mut entries: Vec<(String, String)> = kv
        .into_iter()
        .flatten()
        .filter(|e| schema::META_KEYS.contains(&e.key.as_str()))
        .map(|e| (e.key.clone(), e.value.clone().unwrap_or_default()))
        .collect();
    entries.sort();
    let get = |k: &str| {
        entries
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    let Some(v) = get(schema::META_SCHEMA_VERSION) else {
        return Err(RawError::bad(
            path,
            format!(
                "no `{}` in the Parquet footer: not a kfdo raw file; write it with \
                 `kfdo profile --raw-out` or `kfdo merge-raw` (a Spark job must set the key)",
                schema::META_SCHEMA_VERSION
            ),
        ));
    };
    let version: u32 = v.trim().parse().map_err(|_| {
        RawError::bad(
            path,
            format!(
                "footer `{}` is `{v}`, not a number",
                schema::META_SCHEMA_VERSION
            ),
        )
    })?;
    if version > SCHEMA_VERSION {
        return Err(RawError::bad(
            path,
            format!(
                "schema version {version} is newer than this kfdo reads ({SCHEMA_VERSION}): \
                 upgrade kfdo, or write the file with the kfdo this fleet runs"
            ),
        ));
    }
    if version == 0 {
        return Err(RawError::bad(path, "schema version 0 does not exist"));
    }
    let kind = get(schema::META_KIND).unwrap_or_default().to_string();
    if kind != schema::KIND_HOST && kind != schema::KIND_MERGED {
        return Err(RawError::bad(
            path,
            format!(
                "footer `{}` is `{kind}`, expected `host` or `merged`",
                schema::META_KIND
            ),
        ));
    }
    Ok(Footer {
        schema_version: version,
        kind,
        entries,
    })
}

impl RawReader {
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn footer(&self) -> &Footer {
        &self.footer
    }

    pub fn total_rows(&self) -> u64 {
        self.total_rows
    }

    /// The per-file columns, once a row has been read.
    pub fn info(&self) -> Option<&FileInfo> {
        self.info.as_ref()
    }

    /// Where row `row` (0-based, file order) is, for errors.
    fn place(&self, row: u64) -> String {
        let group = self.group_ends.partition_point(|&end| end <= row);
        format!("row {row} (row group {group})")
    }

    /// Replaces `out` with the next batch of rows; false at the end of the file.
    pub fn next_rows(&mut self, out: &mut Vec<Row>) -> Result<bool, RawError> {
        out.clear();
        let Some(batch) = self.next_batch()? else {
            return Ok(false);
        };
        let c = self.check(&batch)?;
        out.reserve(c.kinds.len());
        for (i, &kind) in c.kinds.iter().enumerate() {
            out.push(Row {
                kind,
                from: c.from[i],
                to: c.to[i],
                count: c.count[i],
            });
        }
        self.row += batch.num_rows() as u64;
        Ok(true)
    }

    /// Hands the next batch, checked, to `f` (columns, not rows: the fast path of a
    /// merge); false at the end of the file.
    pub fn next_columns(
        &mut self,
        f: impl FnOnce(&FileInfo, &Checked) -> Result<(), RawError>,
    ) -> Result<bool, RawError> {
        let Some(batch) = self.next_batch()? else {
            return Ok(false);
        };
        let c = self.check(&batch)?;
        self.row += batch.num_rows() as u64;
        if let Some(info) = &self.info {
            f(info, &c)?;
        }
        Ok(true)
    }

    fn next_batch(&mut self) -> Result<Option<RecordBatch>, RawError> {
        match self.batches.next() {
            None => Ok(None),
            Some(Ok(b)) => Ok(Some(b)),
            Some(Err(e)) => {
                let at = self.place(self.row);
                Err(RawError::bad(
                    &self.path,
                    format!(
                        "cannot read at {at}: {e}; the file is damaged (truncated?): copy or \
                         write it again"
                    ),
                ))
            }
        }
    }

    fn check<'b>(&mut self, batch: &'b RecordBatch) -> Result<Checked<'b>, RawError> {
        let layout = Layout {
            batch,
            index: self.index,
        };
        columns::check(&layout, &mut self.info).map_err(|b| {
            RawError::bad(
                &self.path,
                format!(
                    "{}, column `{}`: {}",
                    self.place(self.row + b.row as u64),
                    b.column,
                    b.what
                ),
            )
        })
    }
}

/// Reads all of `path` (one batch at a time), handing each batch to `f`; returns what
/// the file holds. A file without rows is an error: its per-file columns are unknown.
pub fn scan(
    path: &Path,
    mut f: impl FnMut(&FileInfo, &[Row]) -> Result<(), RawError>,
) -> Result<Summary, RawError> {
    let mut r = open(path)?;
    let mut rows = Vec::new();
    let mut n = 0u64;
    while r.next_rows(&mut rows)? {
        n += rows.len() as u64;
        if let Some(info) = r.info() {
            f(info, &rows)?;
        }
    }
    summary(&RawInput::local(path), r, n)
}

/// A file's footer, per-file columns and row count (from the footer), read from its
/// first row alone: what a merge needs to select files and cap hosts.
pub fn first_row(path: &Path) -> Result<Summary, RawError> {
    first_row_named(&RawInput::local(path))
}

/// [`first_row`] of `input.path`, errors and the summary naming `input.name`.
pub fn first_row_named(input: &RawInput) -> Result<Summary, RawError> {
    let mut r = open_input(input, Some(1))?;
    let rows = r.total_rows();
    while r.next_columns(|_, _| Ok(()))? {}
    summary(input, r, rows)
}

fn summary(input: &RawInput, mut r: RawReader, rows: u64) -> Result<Summary, RawError> {
    let Some(info) = r.info.take() else {
        return Err(RawError::bad(
            &input.name,
            "has no rows, so no build-id, host or window: a raw file holds at least one count; \
             remove it (or write it again from a recording with samples)",
        ));
    };
    Ok(Summary {
        path: input.path.clone(),
        name: input.name.clone(),
        footer: r.footer,
        info,
        rows,
    })
}
