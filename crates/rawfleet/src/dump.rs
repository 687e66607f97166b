//! The canonical text form of a raw file, the same whoever wrote the Parquet bytes:
//! `kfdo raw dump` of kfdo's merge and of the Spark job's must be byte-identical.
//!
//! ```text
//! kfdo.raw.files=3                    <- the footer's kfdo keys, sorted by key
//! kfdo.raw.hosts=2
//! kfdo.raw.kind=merged
//! kfdo.raw.schema_version=1
//! column build_id utf8 not null       <- the Arrow schema, in file order
//! ...
//! row <build_id> <binary_path> <host> <host_class> <recorder> <start> <end> <samples> <kind> <from> <to> <count>
//! ```
//! Row fields are tab-separated, in file order; text fields are written with Rust's
//! `escape_debug` so a tab or newline in a path cannot shift columns.

use crate::error::RawError;
use crate::read;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::io::Write;
use std::path::Path;

/// Writes the dump of `path` to `w`.
pub fn dump(path: &Path, w: &mut dyn Write) -> Result<(), RawError> {
    let io = |e: std::io::Error| RawError::Request(format!("writing the dump: {e}"));
    let mut out = std::io::BufWriter::with_capacity(1 << 16, w);
    let mut r = read::open(path)?;
    for (k, v) in &r.footer().entries {
        writeln!(out, "{k}={}", v.escape_debug()).map_err(io)?;
    }
    for f in file_schema(path)?.fields() {
        let null = if f.is_nullable() { "null" } else { "not null" };
        let ty = match f.data_type() {
            arrow_schema::DataType::Utf8 => "utf8".to_string(),
            arrow_schema::DataType::Int64 => "int64".to_string(),
            other => other.to_string(),
        };
        writeln!(out, "column {} {ty} {null}", f.name()).map_err(io)?;
    }
    let mut rows = Vec::new();
    while r.next_rows(&mut rows)? {
        let Some(i) = r.info() else { continue };
        let prefix = format!(
            "row\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            i.build_id.escape_debug(),
            i.binary_path.escape_debug(),
            i.host.escape_debug(),
            i.host_class.escape_debug(),
            i.recorder.escape_debug(),
            i.window_start_ns,
            i.window_end_ns,
            i.samples
        );
        for row in &rows {
            writeln!(
                out,
                "{prefix}\t{}\t{}\t{}\t{}",
                row.kind.as_str(),
                row.from,
                row.to,
                row.count
            )
            .map_err(io)?;
        }
    }
    out.flush().map_err(io)
}

/// The file's Arrow schema as its writer declared it (names, types, nullability).
fn file_schema(path: &Path) -> Result<arrow_schema::SchemaRef, RawError> {
    let file =
        std::fs::File::open(path).map_err(|e| RawError::bad(path, format!("cannot open: {e}")))?;
    let b = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| RawError::bad(path, format!("not a readable Parquet file: {e}")))?;
    Ok(b.schema().clone())
}
