//! File bytes: memory-mapped when large, read when small.

use std::fs::File;
use std::path::Path;

use crate::error::PerfError;

/// Files smaller than this are read into memory rather than mapped: cheaper, and immune to
/// the file being truncated under us.
const MMAP_THRESHOLD: u64 = 1 << 20;

pub(crate) enum Bytes {
    Map(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Bytes {
    pub(crate) fn open(path: &Path) -> Result<Bytes, PerfError> {
        let io = |source| PerfError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len < MMAP_THRESHOLD {
            let mut v = Vec::with_capacity(len as usize);
            std::io::Read::read_to_end(&mut &file, &mut v).map_err(io)?;
            return Ok(Bytes::Owned(v));
        }
        // SAFETY: the map is read-only and only ever read through bounds-checked slices.
        // If another process truncates the file while it is mapped, reads past the new end
        // fault (SIGBUS); that is the documented cost of zero-copy reading, as in every
        // mmap-based reader, and perf never truncates a finished file.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(Bytes::Map(map))
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Map(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}
