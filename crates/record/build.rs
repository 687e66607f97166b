//! Builds the QEMU plugin (the crate `crates/qemu-plugin`: `src/lib.rs` and the module
//! files beside it) as a shared object with plain `rustc` and leaves it in OUT_DIR, where
//! `src/emulated/plugin.rs` embeds it with `include_bytes!`.
//!
//! Why this way: the plugin crate, a `cdylib` member of the workspace (so that `cargo fmt`
//! and clippy cover it), is not built by `cargo build -p kfdo`, and Cargo has no stable
//! artifact dependencies. The plugin needs no crates (it declares
//! the few QEMU and libc functions it calls), so one `rustc` call builds it in seconds,
//! as part of every normal build, and the `kfdo` binary carries it: nothing to install
//! or find at run time.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let src = PathBuf::from("../qemu-plugin/src/lib.rs");
    // The directory: every module file of the plugin (rustc finds them from `mod x;`).
    println!("cargo:rerun-if-changed=../qemu-plugin/src");
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let so = out.join("libkfdo_record_plugin.so");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let target = std::env::var("TARGET").unwrap_or_default();
    let mut cmd = Command::new(rustc);
    cmd.args([
        "--edition",
        "2021",
        "--crate-type",
        "cdylib",
        "--crate-name",
        "kfdo_record_plugin",
    ])
    .args([
        "-C",
        "opt-level=3",
        "-C",
        "panic=abort",
        "-C",
        "debuginfo=0",
    ])
    .args(["-C", "strip=symbols", "--cap-lints", "warn"])
    .arg("-o")
    .arg(&so)
    .arg(&src);
    if !target.is_empty() {
        cmd.args(["--target", &target]);
    }
    let status = cmd
        .status()
        .expect("cannot run rustc to build the vLBR QEMU plugin");
    if !status.success() {
        panic!("building the vLBR QEMU plugin ({}) failed", src.display());
    }
    println!("cargo:rustc-env=KFDO_VLBR_PLUGIN_SO={}", so.display());
}
