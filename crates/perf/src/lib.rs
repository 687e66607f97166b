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
pub use writer::{PerfWriter, PipeWriter};
