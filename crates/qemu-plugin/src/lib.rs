//! The vLBR QEMU TCG plugin: emulated last-branch records and counters.
//!
//! Built by `crates/record/build.rs` as a standalone `cdylib` with plain `rustc` (no crates),
//! embedded in the `kfdo-record` library and written to a temporary file at record time.
//! This crate is also a workspace member, so that `cargo fmt` and clippy cover it (see its
//! Cargo.toml).
//! It is loaded by QEMU 7.2 (`-plugin lib.so,key=value,...`, plugin API version 1): the part
//! of `qemu-plugin.h` it uses is declared in `qemu_api.rs`.
//!
//! What it does, per executed translation block (TB):
//! - Taken-branch detection. The previous TB's last instruction is classified when the TB is
//!   translated (conditional, direct/indirect jump or call, return, far transfer, or not a
//!   branch). When the next TB starts, a branch of the previous TB was *taken* if it is an
//!   unconditional transfer (whatever its target, so `call next; pop` counts), or a
//!   conditional one whose successor is not its fall-through. A TB that ends without a
//!   branch (page boundary, size limit, `syscall`, a `rep` string instruction that QEMU loops
//!   on itself) records nothing: hardware LBR has no entry for those either.
//! - A ring of the last N (default 32) taken branches per vCPU; every PERIOD taken branches
//!   a sample (time, pid, tid, ip = target of the sampled branch, the ring newest first).
//! - Optional counters: instructions, taken and conditional branches, L1i and iTLB misses
//!   from a small LRU model, split user / kernel by address (kernel = upper half). The
//!   iTLB's pages are the sizes each region really uses: small (4 KiB) for user code,
//!   large (2 MiB) for the kernel image's text. With them, the threads each process
//!   started (vCPU starts): over one, the counts depend on the threads' interleaving and
//!   are not deterministic, and readers say so.
//! - Guest mappings (user mode): the images QEMU loaded itself (program and ELF
//!   interpreter) from the host's /proc/self/maps at the first executed TB, translated by
//!   the guest base (host address of the code - guest address, both known exactly from
//!   the first instruction); libraries from the guest's `mmap` syscalls with PROT_EXEC
//!   (guest and host file descriptors are the same in qemu-user).
//!
//! Output: a little-endian record stream (`stream_format.rs`, read by
//! `crates/record/src/emulated/stream.rs`), appended to the file given as `out=` with
//! whole-record `write(2)` calls on an O_APPEND descriptor, so that forked guest processes
//! can share it.
//!
//! The files, one job each:
//! - the boundary: `qemu_api.rs` (qemu-plugin.h and safe wrappers), `libc_api.rs` (the few
//!   libc calls, wrapped); every other `unsafe` is about the plugin's own shared state
//!   (the vCPU states in `vcpu.rs`, the block descriptors in `desc.rs`, used from the
//!   callbacks) and says why it holds;
//! - set-up and teardown: `install.rs` (the entry point), `config.rs` (its arguments),
//!   `lifecycle.rs` (vCPU start and exit, process exit);
//! - per block: `translate.rs` (when QEMU translates a block), `classify.rs` (x86 branch
//!   kinds), `classify_a64.rs` (AArch64 branch kinds; `config.rs` says which guest, from
//!   QEMU's target name), `word.rs` (the one word a block leaves for the next), `desc.rs`
//!   (blocks that need more than a word), `exec.rs` (the execution callbacks, the hot path),
//!   `filter.rs` (user / kernel side of an address);
//! - the measurement window (`window=markers`): `window.rs` (instrument only between
//!   the guest's start and stop markers, by resetting the plugin at each marker);
//! - per vCPU: `vcpu.rs` (its state), `ring.rs` (the branch stack and sampling period),
//!   `cache_model.rs` (the L1i / iTLB model behind the counters);
//! - output: `stream_format.rs` (shared with the reader: the record layouts and the
//!   counters, `Counts`), `stream_encode.rs` (records),
//!   `stream_write.rs` (the descriptor, batching, failure);
//! - guest mappings: `syscalls.rs` (mmap, fork, exec), `guest_maps.rs`, `proc_maps.rs`.
//!
//! The plain-logic modules (classify, word, filter, ring, cache_model, config,
//! proc_maps, stream_format, stream_encode) hold their unit tests; the library compiles these same
//! files into its own tests (`crates/record/src/emulated/plugin_units.rs`), so `cargo test` runs them.
//! They name their siblings as `super::x`, which means the same in both places.

#![deny(unsafe_op_in_unsafe_fn)]

mod cache_model;
mod classify;
mod classify_a64;
mod config;
mod desc;
mod exec;
mod filter;
mod guest_maps;
mod install;
mod libc_api;
mod lifecycle;
mod proc_maps;
mod qemu_api;
mod ring;
mod stream_encode;
mod stream_format;
mod stream_write;
mod syscalls;
mod translate;
mod vcpu;
mod window;
mod word;
