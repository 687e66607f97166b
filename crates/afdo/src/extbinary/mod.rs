//! LLVM's extensible binary sample-profile format (`SPF_Ext_Binary`,
//! version 103), the format `llvm-profgen` writes by default and clang reads
//! fastest.
//!
//! Layout (all integers ULEB128 unless noted):
//!
//! ```text
//! magic (SPMagic(SPF_Ext_Binary)), version (103)
//! u64 LE section count, then per section four u64 LE: type, flags, offset, size
//! sections, at their offsets (from the file start)
//! ```
//!
//! kfdo writes the same seven sections, in the same file order and header
//! order, as `llvm-profdata merge --sample --extbinary` and
//! `llvm-profgen --format=extbinary` (no MD5 names, no compression):
//!
//! | header order         | file order           | content |
//! | ---                  | ---                  | --- |
//! | ProfSummary (1)      | ProfSummary          | total, max count, max function count, num counts, num functions, n, n x (cutoff, min count, num counts) |
//! | NameTable (2)        | NameTable            | n, n x NUL-terminated name, sorted by bytes |
//! | CSNameTable (6)      | CSNameTable          | 0 (no contexts) |
//! | FuncOffsetTable (4)  | LBRProfile           | per function: head, then body(f) |
//! | LBRProfile (0x20)    | ProfileSymbolList    | empty |
//! | ProfileSymbolList (3)| FuncOffsetTable      | n, n x (name index, offset of the function in LBRProfile) |
//! | FuncMetadata (5)     | FuncMetadata         | empty |
//!
//! `body(f)` = name index, total, n records, n x (line offset, discriminator,
//! count, n targets, n x (name index, count)), n inlinees, n x (line offset,
//! discriminator, body(inlinee)). Records are in location order, call targets
//! by count descending then name, inlinees by location then name; functions
//! by total descending then name.

mod layout;
mod reader;
mod writer;

pub use layout::{flags, has_magic, sec, MAGIC_BINARY, MAGIC_EXT_BINARY, VERSION};
pub use reader::{parse_extbinary, parse_extbinary_with_summary, read_extbinary, MAX_DEPTH};
pub use writer::write_extbinary;
