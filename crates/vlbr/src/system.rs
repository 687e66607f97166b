//! System mode: boot a kernel under `qemu-system-x86_64` with the plugin and write kernel
//! samples with a `[kernel.kallsyms]` mapping.

use crate::{CacheModel, CountersFile, Error};
use std::path::PathBuf;

/// Which branches to keep (by privilege: kernel = upper half of the address space).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    All,
    User,
    Kernel,
}

#[derive(Debug, Clone)]
pub struct SystemConfig {
    pub kernel: PathBuf,
    pub initrd: Option<PathBuf>,
    pub append: Option<String>,
    /// The vmlinux of `kernel` (for its build-id and `_text` / `_stext` addresses).
    pub vmlinux: Option<PathBuf>,
    pub period: u64,
    pub depth: u32,
    pub output: PathBuf,
    pub counters: Option<PathBuf>,
    pub cache: CacheModel,
    pub filter: Filter,
    pub qemu: Option<PathBuf>,
    pub memory_mb: u32,
    pub timeout_s: u64,
}

impl SystemConfig {
    pub fn new(kernel: impl Into<PathBuf>, output: impl Into<PathBuf>) -> SystemConfig {
        SystemConfig {
            kernel: kernel.into(),
            initrd: None,
            append: None,
            vmlinux: None,
            period: crate::DEFAULT_PERIOD,
            depth: crate::DEFAULT_DEPTH,
            output: output.into(),
            counters: None,
            cache: CacheModel::default(),
            filter: Filter::Kernel,
            qemu: None,
            memory_mb: 256,
            timeout_s: 600,
        }
    }
}

#[derive(Debug, Clone)]
pub struct SystemOutcome {
    pub samples: u64,
    pub output: PathBuf,
    pub counters: Option<CountersFile>,
    pub warnings: Vec<String>,
}

pub fn record_system(_cfg: &SystemConfig) -> Result<SystemOutcome, Error> {
    Err(Error::Config(
        "--emulated-kernel is not implemented yet".into(),
    ))
}
