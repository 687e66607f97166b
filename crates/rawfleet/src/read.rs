//! Reading a raw file one record batch at a time, checking it against the schema on
//! the way. Every error names the file, the place (row group, row, column) and what to
//! do; nothing here panics on a bad file.

use crate::error::RawError;
use crate::schema::{self, FileInfo, Row, RowKind, COLUMNS, SCHEMA_VERSION};
use arrow_array::{Array, Int64Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use std::path::{Path, PathBuf};

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
    pub path: PathBuf,
    pub footer: Footer,
    pub info: FileInfo,
    pub rows: u64,
}

fn damaged(path: &Path, e: impl std::fmt::Display) -> RawError {
    RawError::bad(
        path,
        format!(
            "not a readable Parquet file ({e}); it may be truncated (an interrupted copy or \
             write) or not a kfdo raw file: copy or write it again"
        ),
    )
}

/// Opens `path` and checks its footer and schema.
pub fn open(path: &Path) -> Result<RawReader, RawError> {
    let file =
        std::fs::File::open(path).map_err(|e| RawError::bad(path, format!("cannot open: {e}")))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| damaged(path, e))?;
    let meta = builder.metadata().clone();
    let footer = footer(path, meta.file_metadata().key_value_metadata())?;
    let arrow = builder.schema().clone();
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
    let mut group_ends = Vec::new();
    let mut total = 0u64;
    for g in meta.row_groups() {
        total += g.num_rows().max(0) as u64;
        group_ends.push(total);
    }
    let batches = builder
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| damaged(path, e))?;
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
        let batch = match self.batches.next() {
            None => return Ok(false),
            Some(Ok(b)) => b,
            Some(Err(e)) => {
                let at = self.place(self.row);
                return Err(RawError::bad(
                    &self.path,
                    format!(
                        "cannot read at {at}: {e}; the file is damaged (truncated?): copy or \
                         write it again"
                    ),
                ));
            }
        };
        self.rows_of(&batch, out)?;
        self.row += batch.num_rows() as u64;
        Ok(true)
    }

    fn rows_of(&mut self, b: &RecordBatch, out: &mut Vec<Row>) -> Result<(), RawError> {
        let base = self.row;
        let col = |c: usize| b.column(self.index[c]);
        // Typed once at open; a null is the one thing left to check per column.
        for (c, &(name, _)) in COLUMNS.iter().enumerate() {
            let a = col(c);
            if a.null_count() > 0 {
                let i = (0..a.len()).find(|&i| a.is_null(i)).unwrap_or(0) as u64;
                return Err(self.row_error(base + i, name, "is null; every column is NOT NULL"));
            }
        }
        let text = |c: usize| col(c).as_any().downcast_ref::<StringArray>();
        let int = |c: usize| col(c).as_any().downcast_ref::<Int64Array>();
        let (Some(kind), Some(from), Some(to), Some(count)) = (
            text(schema::C_KIND),
            int(schema::C_FROM),
            int(schema::C_TO),
            int(schema::C_COUNT),
        ) else {
            return Err(RawError::bad(
                &self.path,
                "columns changed type while reading",
            ));
        };
        let consts = [
            schema::C_BUILD_ID,
            schema::C_BINARY_PATH,
            schema::C_HOST,
            schema::C_HOST_CLASS,
            schema::C_RECORDER,
        ]
        .map(text);
        let ints = [
            schema::C_WINDOW_START,
            schema::C_WINDOW_END,
            schema::C_SAMPLES,
        ]
        .map(int);
        let (Some(bid), Some(bpath), Some(host), Some(class), Some(rec)) =
            (consts[0], consts[1], consts[2], consts[3], consts[4])
        else {
            return Err(RawError::bad(
                &self.path,
                "columns changed type while reading",
            ));
        };
        let (Some(ws), Some(we), Some(samples)) = (ints[0], ints[1], ints[2]) else {
            return Err(RawError::bad(
                &self.path,
                "columns changed type while reading",
            ));
        };
        out.reserve(b.num_rows());
        for i in 0..b.num_rows() {
            let row = base + i as u64;
            // Compared in place; a FileInfo is built only for the first row or a mismatch.
            let same = self.info.as_ref().is_some_and(|f| {
                f.build_id == bid.value(i)
                    && f.binary_path == bpath.value(i)
                    && f.host == host.value(i)
                    && f.host_class == class.value(i)
                    && f.recorder == rec.value(i)
                    && f.window_start_ns == ws.value(i)
                    && f.window_end_ns == we.value(i)
                    && f.samples == samples.value(i)
            });
            if !same {
                let this = FileInfo {
                    build_id: bid.value(i).to_string(),
                    binary_path: bpath.value(i).to_string(),
                    host: host.value(i).to_string(),
                    host_class: class.value(i).to_string(),
                    recorder: rec.value(i).to_string(),
                    window_start_ns: ws.value(i),
                    window_end_ns: we.value(i),
                    samples: samples.value(i),
                };
                match &self.info {
                    None => self.info = Some(this),
                    Some(first) => {
                        let (name, theirs, ours) = first_difference(first, &this);
                        return Err(self.row_error(
                            row,
                            name,
                            &format!(
                                "`{theirs}` differs from the first row's `{ours}`: a file holds \
                                 one binary (one build-id) of one host; split it by {name}"
                            ),
                        ));
                    }
                }
            }
            let Some(k) = RowKind::parse(kind.value(i)) else {
                return Err(self.row_error(
                    row,
                    "kind",
                    &format!("`{}` is not range, branch or ip", kind.value(i)),
                ));
            };
            let r = Row {
                kind: k,
                from: from.value(i),
                to: to.value(i),
                count: count.value(i),
            };
            if r.count <= 0 {
                return Err(self.row_error(row, "count", &format!("{} is not > 0", r.count)));
            }
            if this_samples_negative(&self.info) {
                return Err(self.row_error(row, "samples", "is negative"));
            }
            if r.from < 0 || r.to < 0 {
                return Err(self.row_error(
                    row,
                    "from/to",
                    &format!("({}, {}): addresses are offsets >= 0", r.from, r.to),
                ));
            }
            out.push(r);
        }
        Ok(())
    }

    fn row_error(&self, row: u64, column: &str, what: &str) -> RawError {
        RawError::bad(
            &self.path,
            format!("{}, column `{column}`: {what}", self.place(row)),
        )
    }
}

fn this_samples_negative(info: &Option<FileInfo>) -> bool {
    info.as_ref().is_some_and(|i| i.samples < 0)
}

/// The first per-file column where `a` and `b` differ: (name, b's value, a's value).
fn first_difference(a: &FileInfo, b: &FileInfo) -> (&'static str, String, String) {
    let pairs: [(&str, String, String); 8] = [
        ("build_id", b.build_id.clone(), a.build_id.clone()),
        ("binary_path", b.binary_path.clone(), a.binary_path.clone()),
        ("host", b.host.clone(), a.host.clone()),
        ("host_class", b.host_class.clone(), a.host_class.clone()),
        ("recorder", b.recorder.clone(), a.recorder.clone()),
        (
            "window_start_ns",
            b.window_start_ns.to_string(),
            a.window_start_ns.to_string(),
        ),
        (
            "window_end_ns",
            b.window_end_ns.to_string(),
            a.window_end_ns.to_string(),
        ),
        ("samples", b.samples.to_string(), a.samples.to_string()),
    ];
    pairs
        .into_iter()
        .find(|(_, x, y)| x != y)
        .unwrap_or(("?", String::new(), String::new()))
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
    let Some(info) = r.info.take() else {
        return Err(RawError::bad(
            path,
            "has no rows, so no build-id, host or window: a raw file holds at least one count; \
             remove it (or write it again from a recording with samples)",
        ));
    };
    Ok(Summary {
        path: path.to_path_buf(),
        footer: r.footer,
        info,
        rows: n,
    })
}
