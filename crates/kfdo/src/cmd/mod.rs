//! One module per subcommand.
pub mod capabilities;
pub mod collect;
pub mod compare;
pub mod counters_vs_time;
pub mod diff;
pub mod heatmap;
pub mod merge;
pub mod merge_raw;
pub mod optimize;
pub mod overlap;
pub mod profile;
pub mod raw;
pub mod record;
pub mod report;
pub mod show;
