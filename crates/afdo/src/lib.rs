//! kfdo-afdo: the AutoFDO sample-profile model and its file formats.
//!
//! - [`model`]: [`Profile`] / [`FunctionSamples`] / [`SampleRecord`] /
//!   [`LineLocation`], the same shape as LLVM's (non context-sensitive)
//!   `FunctionSamples`.
//! - [`summary`]: the profile summary exactly as LLVM computes it.
//! - [`text`]: LLVM's text format (byte-identical to `llvm-profdata --text`).
//! - [`extbinary`]: LLVM's extensible binary format (what clang reads fastest).
//! - [`gcov`]: GCC's AutoFDO profile (`gcc -fauto-profile=`), GCC 11 and 12.
//! - [`read_profile`] / [`write_profile`]: format sniffing and dispatch.
//!
//! # Layers
//!
//! Each module uses only the layers below it; modules in one layer are
//! independent of each other (the `layering` test checks every `crate::` /
//! `super::` path against this list):
//!
//! 1. `error`, `model` (the sample profile).
//! 2. `builder` (a profile from raw counts and DWARF), `gcov` (GCC's format),
//!    `summary` (LLVM's profile summary).
//! 3. `extbinary`: LLVM's extensible binary format (with the summary).
//! 4. `text`: LLVM's text format.
//!
//! Inside the folders the layers are tested too (each folder's `mod.rs` only
//! declares its modules and re-exports):
//!
//! - `builder/`: `discriminator`, `names`, `ranges`, then `functions`.
//! - `text/`: `reader` and `writer`, independent.
//! - `gcov/`: `layout` (magic, tags, [`GcovVersion`]) and `fold` (GCC's view of a
//!   profile), then `reader` and `writer`, independent.
//! - `extbinary/`: `layout` (magic, version, section types and flags, ULEB128),
//!   then `reader`, then `writer` (whose tests read back with the reader).

pub mod builder;
pub mod error;
pub mod extbinary;
pub mod gcov;
pub mod model;
pub mod summary;
pub mod text;

use std::io::Write;
use std::path::Path;

pub use error::AfdoError;
pub use gcov::GcovVersion;
pub use model::{FunctionSamples, LineLocation, Profile, SampleRecord, MAX_LINE_OFFSET};
pub use summary::{ProfileSummary, SummaryEntry, DEFAULT_CUTOFFS};

/// An on-disk sample-profile format.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Format {
    /// LLVM text (`llvm-profdata --text`).
    Text,
    /// LLVM extensible binary (`llvm-profdata --extbinary`, the default of
    /// `llvm-profgen`).
    ExtBinary,
    /// GCC's AutoFDO profile (`gcc -fauto-profile=`) in the layout of one
    /// GCC release.
    Gcov(GcovVersion),
}

impl Format {
    /// Which format `data` is in: extbinary if it starts with the extbinary
    /// magic number, gcov if it starts with the gcda magic and a known
    /// version, otherwise text if it looks like text.
    pub fn sniff(data: &[u8]) -> Option<Format> {
        if extbinary::has_magic(data) {
            return Some(Format::ExtBinary);
        }
        if gcov::has_magic(data) {
            return gcov::stored_version(data)
                .and_then(GcovVersion::from_number)
                .map(Format::Gcov);
        }
        let head = &data[..data.len().min(4096)];
        let texty = head
            .iter()
            .all(|&b| b == b'\n' || b == b'\r' || b == b'\t' || b >= 0x20);
        if texty {
            Some(Format::Text)
        } else {
            None
        }
    }
}

/// Read a profile file in any format (sniffed from its content).
pub fn read_profile(path: &Path) -> Result<Profile, AfdoError> {
    let data = std::fs::read(path).map_err(|source| AfdoError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_profile(&data, &path.display().to_string())
}

/// Parse a profile held in memory; `file` names it in errors.
pub fn parse_profile(data: &[u8], file: &str) -> Result<Profile, AfdoError> {
    if data.is_empty() {
        return Err(AfdoError::UnknownFormat {
            file: file.to_owned(),
            msg: "empty file: no profile in it".to_owned(),
        });
    }
    // A gcov file of an unknown version gets the gcov reader's own message.
    if gcov::has_magic(data) {
        return gcov::parse_gcov(data, file, None);
    }
    match Format::sniff(data) {
        Some(Format::ExtBinary) => extbinary::parse_extbinary(data, file),
        Some(Format::Text) => text::parse_text(data, file),
        Some(Format::Gcov(v)) => gcov::parse_gcov(data, file, Some(v)),
        None => Err(AfdoError::UnknownFormat {
            file: file.to_owned(),
            msg: "neither an LLVM extbinary sample profile (wrong magic number) nor a text one \
                  (binary bytes) nor a GCC one (no gcda magic); other binary variants (binary, compbinary) are not supported: \
                  convert with `llvm-profdata merge --sample --extbinary`"
                .to_owned(),
        }),
    }
}

/// Write `p` in `fmt` to the file `path`, atomically: the profile goes to a
/// temporary file in the same directory that is renamed over `path` only
/// once complete, so a failure never leaves a partial profile behind.
pub fn write_profile_file(p: &Profile, fmt: Format, path: &Path) -> Result<(), AfdoError> {
    let io_err = |e: kfdo_outfile::OutputError| AfdoError::Io {
        path: path.to_owned(),
        source: std::io::Error::other(e.message),
    };
    let mut out = kfdo_outfile::AtomicOutput::create(path).map_err(io_err)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out.file());
    write_profile(p, fmt, &mut w)?;
    w.flush().map_err(|source| AfdoError::Io {
        path: path.to_owned(),
        source,
    })?;
    drop(w);
    out.commit().map_err(io_err)
}

/// Write `p` in `fmt` to `w`. Nothing is written if the profile cannot be
/// represented (line offsets above 0xffff, bad names).
pub fn write_profile(p: &Profile, fmt: Format, w: impl Write) -> Result<(), AfdoError> {
    match fmt {
        Format::Text => text::write_text(p, w),
        Format::ExtBinary => extbinary::write_extbinary(p, w),
        Format::Gcov(v) => gcov::write_gcov(p, v, w),
    }
}

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
