//! Emulated recording: a program (user mode, `qemu-x86_64`) or a kernel (system mode,
//! `qemu-system-x86_64`) runs under QEMU with the vLBR plugin, which sees every taken
//! branch of the guest, keeps the last 32 per vCPU and takes a sample every PERIOD taken
//! branches, as Intel LBR sampling on `br_inst_retired.near_taken` does. What it captured
//! becomes a real perf.data (through `kfdo-perf`'s writer): attr with a branch stack,
//! COMM/FORK events, MMAP2 events for the program and every library it maps, and build-ids
//! in the header.

pub(crate) mod capture;
pub mod counters;
pub(crate) mod guest_arch;
pub mod guest_modules;
pub(crate) mod guest_program;
pub mod launcher;
pub mod maps;
mod perfout;
pub mod plugin;
mod plugin_args;
#[cfg(test)]
mod plugin_units;
mod program_file;
pub(crate) mod recording;
pub mod stream;
/// The capture stream's format, shared with the plugin (one definition for both sides).
#[path = "../../../qemu-plugin/src/stream_format.rs"]
pub mod stream_format;
pub mod system;
pub mod user;

pub use recording::{RecordConfig, RecordOutcome, Window, DEFAULT_DEPTH, DEFAULT_PERIOD};
