//! kfdo-record: recording branch-stack profiles of programs and kernels.
//!
//! - [`hardware`]: what this machine's PMU can record (Intel LBR, AMD BRS / LBRv2, Arm
//!   SPE / BRBE), the `perf record` command line for each method, and `--method auto`'s
//!   choice with its reasons.
//! - [`emulated`]: emulated last-branch records ("vLBR") and emulated counters under QEMU,
//!   for machines without branch sampling: a QEMU TCG plugin (`crates/qemu-plugin`, built by
//!   `build.rs` and embedded here) whose capture is turned into a real perf.data.
//!
//! # Layers
//!
//! The modules form layers, and each uses only the layers below it (every `crate::` /
//! `super::` path points down this list, so an import cycle cannot come back):
//!
//! 1. `error` ([`Error`]) and `kvm` (whether this machine's KVM can run a guest).
//! 2. `stdio`: where a recorded program's standard streams go ([`StdioPlan`]).
//! 3. `hardware` (the PMU's methods and `perf record`) and `emulated` (QEMU and the
//!    plugin), independent of each other.
//! 4. `request`: [`record`], one request that picks a method and runs it.
//!
//! Inside `emulated/`, bottom first:
//!
//! 1. `stream_format` (the capture format and its counters, shared with the plugin),
//!    `plugin` (the embedded plugin), `guest_arch` (what the guest's architecture
//!    decides).
//! 2. `maps` (guest mappings), `program_file` (what kind of file a program is),
//!    `counters` (the cache model and the counters file).
//! 3. `stream` (the capture reader), `guest_program` (the program QEMU is handed),
//!    `plugin_args` (the plugin's arguments), `recording` ([`RecordConfig`],
//!    [`RecordOutcome`], [`Window`], the settings' checks), `guest_modules` (kernel
//!    modules placed in a guest).
//! 4. `capture` (a capture's side-band events), `perfout` (the perf.data writer).
//! 5. `user` ([`record_user`]), `system` ([`record_system`]) and `launcher` (counting a
//!    program a shell command runs), independent of each other.
//!
//! Not checked: `emulated/plugin_units.rs` (test-only: the plugin's plain-logic files
//! compiled into the tests). `emulated/mod.rs` (module declarations and re-exports) sits
//! above the layers; `lib.rs` only declares the modules and re-exports.
//!
//! ```no_run
//! use kfdo_record::{record_user, RecordConfig};
//! let cfg = RecordConfig::new("./a.out", "perf.data").args(["100"]).period(10007);
//! let outcome = record_user(&cfg)?;
//! std::process::exit(outcome.exit_code);
//! # Ok::<(), kfdo_record::Error>(())
//! ```

pub mod emulated;
mod error;
pub mod hardware;
pub mod kvm;
pub mod request;
pub mod stdio;

pub use emulated::counters::{CacheModel, Counters, CountersFile, DomainCounts};
pub use emulated::guest_modules::{GuestModules, PlacedModule};
pub use emulated::system::{
    kernel_command_line, record_system, Filter, KernelElf, SystemConfig, SystemOutcome,
};
pub use emulated::user::record_user;
pub use emulated::{RecordConfig, RecordOutcome, Window, DEFAULT_DEPTH, DEFAULT_PERIOD};
pub use error::Error;
pub use request::{record, KernelBoot, RecordRequest, Recorded, SystemScope, Target};
pub use stdio::{ChildSetup, StdStream, StdioPlan};

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
