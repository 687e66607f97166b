//! kfdo-convert: `kfdo profile` and `kfdo show` as typed calls.
//!
//! A conversion reads recordings (perf.data, `perf script` text, raw aggregates) into
//! one raw profile of the binary (`kfdo-aggregate`: which samples are the binary's,
//! range and branch counts), then hands it to the writer of the format asked for: the
//! raw aggregate itself, or an AutoFDO sample profile symbolized with DWARF
//! (`kfdo-afdo`). A new profile format is a writer in its own crate and one more
//! [`OutputFormat`] here.

mod arch_check;
mod bolt;
mod fleet;
mod gcov;
mod profile;
mod propeller;
mod show;
mod show_bb_addr_map;

pub use bolt::BoltSummary;
pub use fleet::{parquet_recorder, write_raw_parquet, RawOut, RawOutOutcome};
pub use gcov::gcc_major_on_path;
pub use profile::{
    profile, Input, ModuleOutcome, OutputFormat, ProfileError, ProfileOutcome, ProfileRequest,
};
pub use propeller::{propeller_paths, PropellerSummary};
pub use show::{show, ShowError};
pub use show_bb_addr_map::show_bb_addr_map;
