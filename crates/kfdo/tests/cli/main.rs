//! kfdo's command-line tests: one test binary with a module per area (as ripgrep's
//! `tests/tests.rs`), so the crate links one executable instead of one per file and the
//! fixtures in `common` (lz built and recorded, ...) are made once per run and shared.
//!
//! Tests in one binary run on parallel threads. The long ones that take the machine
//! (kernel builds and boots, the sqlite3 and Spark builds) start with
//! [`common::heavy_test`] and hold its guard for their whole body, so they still run one
//! after another as they did when each was its own binary (and a quick run,
//! `KFDO_QUICK=1`, leaves them out).

mod common;

mod cli_conventions;
mod closed_pipe;
mod collect_cli;
mod compare_cli;
mod compare_emulated;
mod compare_sqlite;
mod compare_tags;
mod fleet_loop;
mod fleet_spark;
mod heatmap_perf;
mod merge_raw_s3;
mod next_steps;
mod next_views;
mod optimize_aarch64;
mod optimize_cli;
mod optimize_gcc;
mod optimize_kernel;
mod optimize_kernel_arm64;
mod optimize_kernel_gcc;
mod optimize_kernel_propeller;
mod optimize_layout;
mod optimize_llvm;
mod profile_aarch64;
mod profile_bolt;
mod profile_brbe;
mod profile_conformance;
mod profile_errors;
mod profile_gcov;
mod profile_propeller;
mod profile_staleness;
mod profile_tools;
mod raw_fleet;
mod record_cli;
mod record_kernel;
mod report_chromium;
mod sample_counts;
mod show_bb_addr_map;
mod trust_commands;
mod trust_outputs;
