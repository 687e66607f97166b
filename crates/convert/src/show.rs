//! `kfdo show`: any profile kfdo writes (or llvm-profgen / llvm-profdata write), as text.

use std::io::Write;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum ShowError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Afdo(#[from] kfdo_afdo::AfdoError),
    #[error(transparent)]
    Elf(#[from] kfdo_elf::ElfError),
    #[error("cannot write: {0}")]
    Write(#[from] std::io::Error),
}

/// Writes `profile` to `out` as LLVM sample-profile text; unsymbolized counts are written
/// as they are (they are text already).
pub fn show(profile: &Path, out: &mut dyn Write) -> Result<(), ShowError> {
    let data = std::fs::read(profile).map_err(|source| ShowError::Read {
        path: profile.display().to_string(),
        source,
    })?;
    if looks_unsymbolized(&data) {
        out.write_all(&data)?;
    } else {
        let name = profile.display().to_string();
        let p = kfdo_afdo::parse_profile(&data, &name)?;
        kfdo_afdo::write_profile(&p, kfdo_afdo::Format::Text, &mut *out)?;
    }
    out.flush()?;
    Ok(())
}

/// Unsymbolized counts start with a line holding only a decimal count.
fn looks_unsymbolized(data: &[u8]) -> bool {
    let first = data.split(|&b| b == b'\n').next().unwrap_or(&[]);
    !first.is_empty() && first.iter().all(|b| b.is_ascii_digit())
}
