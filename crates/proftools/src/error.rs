//! One error type for the profile tools: each variant says which file and why.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A profile that cannot be read (the reader's error names the file and
    /// the line or byte offset).
    #[error("{0}")]
    Read(#[from] kfdo_afdo::AfdoError),
    /// A `--weight` argument that is not `W:FILE` / `W,FILE` with W >= 1.
    #[error("bad weighted input {arg:?}: {why} (expected W:FILE with W a positive integer)")]
    BadWeight { arg: String, why: String },
    /// A profile without a single sample, which no ratio can be taken of.
    #[error("{}: the profile has no samples (every body count is 0), so there is nothing to compare", path.display())]
    NoSamples { path: PathBuf },
    /// Two profiles that do not look like profiles of the same program.
    #[error("{msg}")]
    Unrelated { msg: String },
    /// The binary side of the staleness check.
    #[error("{}: {source}", path.display())]
    Binary {
        path: PathBuf,
        #[source]
        source: kfdo_elf::ElfError,
    },
}
