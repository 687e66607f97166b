//! Schema v1 of a kfdo raw Parquet file: column names, types, footer keys.
//!
//! Fixed by the contract between `kfdo merge-raw` and the fleet's Spark job
//! (`docs/raw-contract.md`): both write these columns, in this order, all NOT NULL, with
//! Parquet/Spark-native types only (no unsigned integers, so Spark reads and writes
//! them unchanged). A change here is a new schema version.

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use std::sync::Arc;

/// The version this build writes; a reader refuses a larger one.
pub const SCHEMA_VERSION: u32 = 1;

/// Footer key: the schema version, decimal ("1").
pub const META_SCHEMA_VERSION: &str = "kfdo.raw.schema_version";
/// Footer key: "host" (one host's recording) or "merged" (`kfdo merge-raw`).
pub const META_KIND: &str = "kfdo.raw.kind";
/// Footer key of a merged file: how many distinct hosts were kept.
pub const META_HOSTS: &str = "kfdo.raw.hosts";
/// Footer key of a merged file: how many files were kept.
pub const META_FILES: &str = "kfdo.raw.files";
/// The footer keys this schema defines (the dump prints these and no others: writers add
/// their own, such as `ARROW:schema` or Spark's row metadata).
pub const META_KEYS: [&str; 4] = [META_FILES, META_HOSTS, META_KIND, META_SCHEMA_VERSION];

/// Values of `kfdo.raw.kind`.
pub const KIND_HOST: &str = "host";
pub const KIND_MERGED: &str = "merged";

/// Values of the `recorder` column: how the branch stacks were taken.
pub const RECORDER_LBR: &str = "lbr";
pub const RECORDER_BRS: &str = "brs";
pub const RECORDER_BRBE: &str = "brbe";
pub const RECORDER_EMULATED: &str = "emulated";
/// No branch stacks: IP samples only.
pub const RECORDER_IP: &str = "ip";
/// A merge of files with different recorders.
pub const RECORDER_MIXED: &str = "mixed";

/// The address of "outside the binary" in the `from` column (llvm-profgen's
/// `ExternalAddr`, as in the text form).
pub const EXTERNAL: i64 = 1;

/// Columns, in file order, with what each means.
pub const COLUMNS: [(&str, Col); 12] = [
    // The binary's GNU build-id, lowercase hex ("" if it has none).
    ("build_id", Col::Utf8),
    // The binary's path as the recording mapped it ("[kernel.kallsyms]" for a kernel).
    ("binary_path", Col::Utf8),
    // The recording host (`--host`, default the hostname); "" in a merged file.
    ("host", Col::Utf8),
    // `--host-class` ("" by default); "" in a merged file.
    ("host_class", Col::Utf8),
    // lbr | brs | brbe | emulated | ip; a merge of several: mixed.
    ("recorder", Col::Utf8),
    // First sample's time of the recording (perf clock, ns); merged: min over inputs.
    ("window_start_ns", Col::Int64),
    // Last sample's time; merged: max over inputs.
    ("window_end_ns", Col::Int64),
    // Samples of this binary on this host (same on every row); merged: sum of scaled.
    ("samples", Col::Int64),
    // range (first..last inclusive) | branch (from->to) | ip (IP-only sample, to == from).
    ("kind", Col::Utf8),
    // Address relative to the binary's preferred base; 1 = outside the binary.
    ("from", Col::Int64),
    // Same: range end or branch target.
    ("to", Col::Int64),
    // How often: > 0.
    ("count", Col::Int64),
];

/// Column indexes, in [`COLUMNS`] order.
pub const C_BUILD_ID: usize = 0;
pub const C_BINARY_PATH: usize = 1;
pub const C_HOST: usize = 2;
pub const C_HOST_CLASS: usize = 3;
pub const C_RECORDER: usize = 4;
pub const C_WINDOW_START: usize = 5;
pub const C_WINDOW_END: usize = 6;
pub const C_SAMPLES: usize = 7;
pub const C_KIND: usize = 8;
pub const C_FROM: usize = 9;
pub const C_TO: usize = 10;
pub const C_COUNT: usize = 11;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Col {
    Utf8,
    Int64,
}

impl Col {
    pub fn data_type(self) -> DataType {
        match self {
            Col::Utf8 => DataType::Utf8,
            Col::Int64 => DataType::Int64,
        }
    }
}

/// The Arrow schema of every kfdo raw file (host or merged), without metadata.
pub fn arrow_schema() -> SchemaRef {
    Arc::new(Schema::new(
        COLUMNS
            .iter()
            .map(|&(name, col)| Field::new(name, col.data_type(), false))
            .collect::<Vec<_>>(),
    ))
}

/// What a row counts. Declared in the byte order of the names, so the derived order is
/// the file's sort order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RowKind {
    Branch,
    Ip,
    Range,
}

impl RowKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RowKind::Branch => "branch",
            RowKind::Ip => "ip",
            RowKind::Range => "range",
        }
    }

    pub fn parse(s: &str) -> Option<RowKind> {
        match s {
            "branch" => Some(RowKind::Branch),
            "ip" => Some(RowKind::Ip),
            "range" => Some(RowKind::Range),
            _ => None,
        }
    }
}

/// One counted key; files are sorted by (kind, from, to), each key once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Row {
    pub kind: RowKind,
    pub from: i64,
    pub to: i64,
    pub count: i64,
}

/// The columns that hold one value for the whole file (repeated on every row).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileInfo {
    pub build_id: String,
    pub binary_path: String,
    pub host: String,
    pub host_class: String,
    pub recorder: String,
    pub window_start_ns: i64,
    pub window_end_ns: i64,
    pub samples: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_order_is_byte_order_of_names() {
        let mut names = ["range", "ip", "branch"];
        names.sort();
        let kinds: Vec<_> = names.iter().map(|n| RowKind::parse(n).unwrap()).collect();
        assert!(kinds.windows(2).all(|w| w[0] < w[1]));
        for k in kinds {
            assert_eq!(RowKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(RowKind::parse("Range"), None);
    }

    #[test]
    fn schema_is_the_contracts() {
        let s = arrow_schema();
        let names: Vec<_> = s.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(
            names,
            [
                "build_id",
                "binary_path",
                "host",
                "host_class",
                "recorder",
                "window_start_ns",
                "window_end_ns",
                "samples",
                "kind",
                "from",
                "to",
                "count"
            ]
        );
        assert!(s.fields().iter().all(|f| !f.is_nullable()));
        assert_eq!(s.field(C_COUNT).data_type(), &DataType::Int64);
        assert_eq!(s.field(C_KIND).data_type(), &DataType::Utf8);
    }
}
