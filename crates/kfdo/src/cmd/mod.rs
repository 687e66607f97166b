//! One module per subcommand.
pub mod capabilities;
pub mod compare;
pub mod heatmap;
pub mod optimize;
pub mod profile;
pub mod record;
pub mod report;
pub mod show;
