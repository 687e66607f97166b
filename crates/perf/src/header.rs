//! The file header (`struct perf_file_header`) and the pipe header, and telling the two
//! apart: both start with the same magic; the header size says which.

use std::path::Path;

use crate::bytes::u64_at;
use crate::error::PerfError;

/// "PERFILE2" read as a little-endian u64.
pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"PERFILE2");
/// The same magic as a big-endian writer leaves it.
pub(crate) const MAGIC_SWAPPED: u64 = u64::from_be_bytes(*b"PERFILE2");
/// Version 1 files started with "PERFFILE".
pub(crate) const MAGIC_V1: u64 = u64::from_le_bytes(*b"PERFFILE");

/// Size of `struct perf_file_header`: magic, size, attr_size, 3 sections, 256-bit bitmap.
pub(crate) const FILE_HEADER_SIZE: usize = 104;
/// Size of `struct perf_pipe_file_header`: magic, size.
pub(crate) const PIPE_HEADER_SIZE: usize = 16;

/// `struct perf_file_section`: a byte range of the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Section {
    pub offset: u64,
    pub size: u64,
}

impl Section {
    pub(crate) fn read(b: &[u8], at: usize) -> Option<Section> {
        Some(Section {
            offset: u64_at(b, at)?,
            size: u64_at(b, at + 8)?,
        })
    }

    /// The range as `usize`s, checked to lie inside a file of `file_len` bytes.
    pub(crate) fn range(&self, file_len: usize) -> Option<(usize, usize)> {
        let start = usize::try_from(self.offset).ok()?;
        let end = start.checked_add(usize::try_from(self.size).ok()?)?;
        (end <= file_len).then_some((start, end))
    }
}

#[derive(Debug, Clone)]
pub(crate) struct FileHeader {
    pub attr_size: u64,
    pub attrs: Section,
    pub data: Section,
    pub features: [u64; 4],
}

pub(crate) enum Layout {
    File(FileHeader),
    Pipe,
}

fn truncated(path: &Path, offset: usize, what: &'static str, need: usize, len: usize) -> PerfError {
    PerfError::Truncated {
        path: path.to_path_buf(),
        offset: offset as u64,
        what,
        need: need as u64,
        within: "file",
        end: len as u64,
    }
}

/// Reads the magic and the header; says whether this is a file-mode or pipe-mode stream.
pub(crate) fn parse(path: &Path, b: &[u8]) -> Result<Layout, PerfError> {
    let Some(magic) = u64_at(b, 0) else {
        return Err(truncated(path, 0, "the 8-byte perf.data magic", 8, b.len()));
    };
    match magic {
        MAGIC => {}
        MAGIC_SWAPPED => {
            return Err(PerfError::BigEndian {
                path: path.to_path_buf(),
            })
        }
        MAGIC_V1 => {
            return Err(PerfError::OldVersion {
                path: path.to_path_buf(),
            })
        }
        _ => {
            let shown: String = b[..8]
                .iter()
                .map(|&c| if c.is_ascii_graphic() { c as char } else { '.' })
                .collect();
            return Err(PerfError::BadMagic {
                path: path.to_path_buf(),
                found: format!("{:?} (bytes {:02x?})", shown, &b[..8]),
            });
        }
    }
    let Some(size) = u64_at(b, 8) else {
        return Err(truncated(path, 8, "the header size", 8, b.len()));
    };
    match size as usize {
        PIPE_HEADER_SIZE => return Ok(Layout::Pipe),
        FILE_HEADER_SIZE => {}
        _ => {
            return Err(PerfError::Malformed {
                path: path.to_path_buf(),
                offset: 8,
                what: "file header",
                detail: format!(
                    "header size is {size}, expected {FILE_HEADER_SIZE} (file mode) or {PIPE_HEADER_SIZE} (pipe mode)"
                ),
            })
        }
    }
    if b.len() < FILE_HEADER_SIZE {
        return Err(truncated(
            path,
            b.len().min(16),
            "the rest of the 104-byte file header",
            FILE_HEADER_SIZE,
            b.len(),
        ));
    }
    let w = |at| u64_at(b, at).unwrap_or(0);
    Ok(Layout::File(FileHeader {
        attr_size: w(16),
        attrs: Section::read(b, 24).unwrap_or_default(),
        data: Section::read(b, 40).unwrap_or_default(),
        // The event_types section (56..72) is obsolete and ignored, as perf does.
        features: [w(72), w(80), w(88), w(96)],
    }))
}
