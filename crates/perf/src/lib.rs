//! kfdo-perf: perf.data reading and writing, and `perf script` text reading.
//!
//! A standalone format crate (it knows nothing of profiles or DWARF). Reading is streaming
//! and zero-copy over a memory map: records borrow from the file, and iterating a
//! multi-gigabyte file allocates nothing per sample. Every input error is a typed
//! [`PerfError`] naming the file and the byte offset (or line), never a panic.
//!
//! ```no_run
//! use kfdo_perf::{PerfData, Record};
//! let pd = PerfData::open("perf.data".as_ref())?;
//! for r in pd.records() {
//!     if let Record::Sample(s) = r? {
//!         for br in s.branch_stack.iter() {
//!             println!("{:#x} -> {:#x}", br.from, br.to);
//!         }
//!     }
//! }
//! # Ok::<(), kfdo_perf::PerfError>(())
//! ```
//!
//! Format references: tools/perf/Documentation/perf.data-file-format.txt and
//! include/uapi/linux/perf_event.h in the Linux sources.
//!
//! # Design
//!
//! One file, one job: [`header`](crate::PerfData) detection (file vs pipe mode by header
//! size), `attr` (perf_event_attr of any size), `features` (feature ids and the sections
//! read as values), `record` and `sample` (zero-copy record decoding in the kernel's field
//! order), `reader` ([`PerfData`], [`RecordIter`], chunking), `encode` and `writer`
//! ([`PerfWriter`], [`PipeWriter`]), [`script`] (`perf script` text), `error`.
//!
//! - Everything that comes from the file goes through bounds-checked reads (`bytes.rs`);
//!   lengths and counts from the file are checked against the bytes actually present
//!   before anything is sliced or allocated, so no input can panic, overflow or allocate
//!   more than the file's size.
//! - Attrs, feature sections and build-ids are decoded at open (they are small); records
//!   are decoded only when iterated. Pipe mode has no index, so `open` walks the record
//!   headers once to collect HEADER_ATTR / HEADER_FEATURE / HEADER_BUILD_ID / EVENT_UPDATE.
//! - [`PerfData::record_chunks`] and [`script::ScriptFile::script_chunks`] split at record
//!   or line boundaries for parallel consumers (perf.data has no sync markers, so finding
//!   record boundaries walks the 8-byte headers once).
//! - Records are yielded in file order (perf's `perf script` sorts by time; per CPU the
//!   file order is time order).
//!
//! Not read: zstd-compressed records (`perf record -z`; a clear error suggests
//! `perf inject`), big-endian files, the trailing `sample_id` of non-sample records
//! (framed and skipped).
//!
//! # Layers
//!
//! Each module uses only the layers below it; modules in one layer are
//! independent of each other (the `layering` test checks every `crate::` /
//! `super::` path against this list):
//!
//! 1. `bytes` (little-endian cursors), `consts` (the kernel's ABI numbers), `error`.
//! 2. `attr` (perf_event_attr), `header` (the file header), `mapped` (the mapping).
//! 3. `features` (header feature sections), `sample` (a sample's fields).
//! 4. `record`: the records of the data section.
//! 5. `encode` (records to bytes), `reader` ([`PerfData`]), `script` (`perf script` text).
//! 6. `writer`: [`PerfWriter`] and [`PipeWriter`], one [`RecordStream`] each.
//!
//! - `script/`: `fields` (one line's fields), then `tests`.
//!
//! Not checked: `script/tests.rs` (the tests use the folder's parser, in `mod.rs`).

mod attr;
mod bytes;
pub mod consts;
mod encode;
mod error;
mod features;
mod header;
mod mapped;
mod reader;
mod record;
mod sample;
pub mod script;
mod writer;

pub use attr::EventAttr;
pub use encode::SampleOut;
pub use error::PerfError;
pub use features::{decode_cmdline, decode_nrcpus, decode_string, FeatureId};
pub use reader::{Mode, PerfData, RecordIter};
pub use record::{BuildIdEntry, Comm, Fork, Mmap, OwnedMmap, Record};
pub use sample::{
    BranchEntry, BranchStack, CpuMode, ReadValue, ReadValues, Regs, Sample, U64Slice,
};
pub use script::{ScriptFile, ScriptItem, ScriptReader};
pub use writer::{PerfWriter, PipeWriter, RecordStream};

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
