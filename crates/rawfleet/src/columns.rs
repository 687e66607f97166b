//! Checking one record batch of a raw file against the schema, column by column.
//!
//! A batch is checked whole, each rule as one pass over one column (no per-row string
//! comparison, no per-row allocation): the per-file columns arrive dictionary-encoded
//! (see [`reading_schema`]), so "every row holds the first row's value" is a check of
//! small integer keys. The first broken rule in row order is reported, with the same
//! words whatever the batch size.

use crate::schema::{self, FileInfo, RowKind, COLUMNS};
use arrow_array::types::Int32Type;
use arrow_array::{Array, DictionaryArray, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use std::sync::Arc;

/// The schema a reader asks the Parquet decoder for: the contract's, with every text
/// column as a dictionary (Int32 keys). The file's own types are unchanged; only the
/// in-memory form differs, so a value repeated on every row is decoded once per page.
pub fn reading_schema() -> SchemaRef {
    Arc::new(Schema::new(
        COLUMNS
            .iter()
            .map(|&(name, col)| {
                let ty = match col.data_type() {
                    DataType::Utf8 => {
                        DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
                    }
                    other => other,
                };
                Field::new(name, ty, false)
            })
            .collect::<Vec<_>>(),
    ))
}

/// The per-file text columns, in [`FileInfo`] order.
const TEXTS: [usize; 5] = [
    schema::C_BUILD_ID,
    schema::C_BINARY_PATH,
    schema::C_HOST,
    schema::C_HOST_CLASS,
    schema::C_RECORDER,
];
/// The per-file integer columns, in [`FileInfo`] order.
const INTS: [usize; 3] = [
    schema::C_WINDOW_START,
    schema::C_WINDOW_END,
    schema::C_SAMPLES,
];

/// A checked batch: the per-row columns, borrowed from the record batch.
pub struct Checked<'b> {
    pub kinds: Vec<RowKind>,
    pub from: &'b [i64],
    pub to: &'b [i64],
    pub count: &'b [i64],
}

/// A broken rule: the row (in the batch), the column and what is wrong.
pub struct Broken {
    pub row: usize,
    pub column: &'static str,
    pub what: String,
}

/// Where the batch's columns are: `index[c]` is column `c` of [`COLUMNS`].
pub struct Layout<'a> {
    pub batch: &'a RecordBatch,
    pub index: [usize; 12],
}

impl<'a> Layout<'a> {
    fn column(&self, c: usize) -> &'a dyn Array {
        self.batch.column(self.index[c]).as_ref()
    }

    fn text(&self, c: usize) -> Result<&'a DictionaryArray<Int32Type>, Broken> {
        self.column(c)
            .as_any()
            .downcast_ref::<DictionaryArray<Int32Type>>()
            .ok_or_else(|| changed_type(c))
    }

    fn int(&self, c: usize) -> Result<&'a Int64Array, Broken> {
        self.column(c)
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or_else(|| changed_type(c))
    }

    /// The value of per-file text column `c` at `row`.
    fn text_at(&self, c: usize, row: usize) -> Result<String, Broken> {
        let d = self.text(c)?;
        let values = dictionary_values(d, c)?;
        Ok(values.value(d.keys().value(row) as usize).to_string())
    }

    /// The per-file columns of row `row`.
    pub fn info_at(&self, row: usize) -> Result<FileInfo, Broken> {
        let [ws, we, samples] = INTS.map(|c| self.int(c).map(|a| a.value(row)));
        Ok(FileInfo {
            build_id: self.text_at(TEXTS[0], row)?,
            binary_path: self.text_at(TEXTS[1], row)?,
            host: self.text_at(TEXTS[2], row)?,
            host_class: self.text_at(TEXTS[3], row)?,
            recorder: self.text_at(TEXTS[4], row)?,
            window_start_ns: ws?,
            window_end_ns: we?,
            samples: samples?,
        })
    }
}

fn changed_type(c: usize) -> Broken {
    Broken {
        row: 0,
        column: COLUMNS[c].0,
        what: "changed type while reading".into(),
    }
}

fn dictionary_values(d: &DictionaryArray<Int32Type>, c: usize) -> Result<&StringArray, Broken> {
    d.values()
        .as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| changed_type(c))
}

/// Checks every row of the batch against the contract and against `expect` (the file's
/// first row; taken from this batch's row 0 when `None`).
pub fn check<'b>(
    layout: &Layout<'b>,
    expect: &mut Option<FileInfo>,
) -> Result<Checked<'b>, Broken> {
    let n = layout.batch.num_rows();
    for (c, &(name, _)) in COLUMNS.iter().enumerate() {
        let a = layout.column(c);
        if a.null_count() > 0 {
            let row = (0..a.len()).find(|&i| a.is_null(i)).unwrap_or(0);
            return Err(Broken {
                row,
                column: name,
                what: "is null; every column is NOT NULL".into(),
            });
        }
    }
    if n == 0 {
        return Ok(Checked {
            kinds: Vec::new(),
            from: &[],
            to: &[],
            count: &[],
        });
    }
    let first = match expect {
        Some(f) => f.clone(),
        None => {
            let f = layout.info_at(0)?;
            *expect = Some(f.clone());
            f
        }
    };
    // Each rule's first broken row; the earliest row wins, ties in the order the rules
    // are listed (the order a row is read in).
    let mut worst: Option<Broken> = None;
    let mut note = |b: Broken| {
        if worst.as_ref().is_none_or(|w| b.row < w.row) {
            worst = Some(b);
        }
    };
    let expected_texts = [
        &first.build_id,
        &first.binary_path,
        &first.host,
        &first.host_class,
        &first.recorder,
    ];
    for (&c, want) in TEXTS.iter().zip(expected_texts) {
        if let Some(row) = first_other_text(layout.text(c)?, want, c)? {
            let theirs = layout.text_at(c, row)?;
            note(differs(c, row, &theirs, want));
        }
    }
    let expected_ints = [first.window_start_ns, first.window_end_ns, first.samples];
    for (&c, want) in INTS.iter().zip(expected_ints) {
        let values = layout.int(c)?.values();
        if let Some(row) = values.iter().position(|&v| v != want) {
            note(differs(c, row, &values[row].to_string(), &want.to_string()));
        }
    }
    let kinds = kinds_of(layout.text(schema::C_KIND)?, &mut note)?;
    let from = layout.int(schema::C_FROM)?.values();
    let to = layout.int(schema::C_TO)?.values();
    let count = layout.int(schema::C_COUNT)?.values();
    if let Some(row) = count.iter().position(|&c| c <= 0) {
        note(Broken {
            row,
            column: "count",
            what: format!("{} is not > 0", count[row]),
        });
    }
    if first.samples < 0 {
        note(Broken {
            row: 0,
            column: "samples",
            what: "is negative".into(),
        });
    }
    if let Some(row) = (0..n).find(|&i| from[i] < 0 || to[i] < 0) {
        note(Broken {
            row,
            column: "from/to",
            what: format!("({}, {}): addresses are offsets >= 0", from[row], to[row]),
        });
    }
    match worst {
        Some(b) => Err(b),
        None => Ok(Checked {
            kinds: kinds.unwrap_or_default(),
            from: &from[..],
            to: &to[..],
            count: &count[..],
        }),
    }
}

fn differs(c: usize, row: usize, theirs: &str, ours: &str) -> Broken {
    let name = COLUMNS[c].0;
    Broken {
        row,
        column: name,
        what: format!(
            "`{theirs}` differs from the first row's `{ours}`: a file holds one binary (one \
             build-id) of one host; split it by {name}"
        ),
    }
}

/// The first row whose text differs from `want`: each dictionary value is compared once.
fn first_other_text(
    d: &DictionaryArray<Int32Type>,
    want: &str,
    c: usize,
) -> Result<Option<usize>, Broken> {
    let values = dictionary_values(d, c)?;
    let same: Vec<bool> = (0..values.len()).map(|k| values.value(k) == want).collect();
    Ok(d.keys()
        .values()
        .iter()
        .position(|&k| !same.get(k as usize).copied().unwrap_or(false)))
}

/// The kind of every row, or the first row whose kind is not one of the three (noted,
/// and then `None`).
fn kinds_of(
    d: &DictionaryArray<Int32Type>,
    note: &mut impl FnMut(Broken),
) -> Result<Option<Vec<RowKind>>, Broken> {
    let values = dictionary_values(d, schema::C_KIND)?;
    let parsed: Vec<Option<RowKind>> = (0..values.len())
        .map(|k| RowKind::parse(values.value(k)))
        .collect();
    let keys = d.keys().values();
    let mut kinds = Vec::with_capacity(keys.len());
    for (row, &k) in keys.iter().enumerate() {
        match parsed.get(k as usize).copied().flatten() {
            Some(kind) => kinds.push(kind),
            None => {
                let text = if (k as usize) < values.len() {
                    values.value(k as usize)
                } else {
                    "?"
                };
                note(Broken {
                    row,
                    column: "kind",
                    what: format!("`{text}` is not range, branch or ip"),
                });
                return Ok(None);
            }
        }
    }
    Ok(Some(kinds))
}
