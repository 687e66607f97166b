//! kfdo-collect: `kfdo collect`, the sampler that runs on every host of a fleet.
//!
//! It records the machine in windows (say 10 s every 10 minutes) with perf: branch
//! stacks where the hardware has them, IP-only `cpu-clock` samples where it does not.
//! After each window it turns the recording into raw host files, one per binary with
//! samples (the raw schema of `kfdo-rawfleet`, the same conversion as `kfdo profile
//! --raw-out`), keeps them in a bounded spool and uploads them to an object store
//! through the S3 API, under names that make a retried upload rewrite the same object.
//! Its own CPU share is held under a budget, and a status file says what it recorded,
//! spooled, uploaded and dropped, and why.
//!
//! # Layers
//!
//! Each module uses only the layers below it (the `layering` test checks them):
//!
//! 1. `error` ([`CollectError`]), `naming` (window ids, spool names, object keys).
//! 2. `config` ([`CollectConfig`]), `status` ([`Status`], the status file), `lock`
//!    (one collector per spool), `budget` (CPU and memory, `--max-cpu`), `spool` (the
//!    spool folder and its cap).
//! 3. `record_window` (perf for one window), `aggregate_window` (a window's host
//!    files), `upload` (the spool to the store).
//! 4. `run` ([`run`]): the loop.
//!
//! `lib.rs` only declares and re-exports.

mod aggregate_window;
mod budget;
mod config;
mod error;
mod lock;
mod naming;
mod record_window;
mod run;
mod spool;
mod status;
mod upload;

pub use budget::usage;
pub use config::{CollectConfig, Scope};
pub use error::CollectError;
pub use run::{run, Finished};
pub use status::Status;

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
