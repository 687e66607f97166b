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

    /// The caller is done with `bytes[start..end]`: drop those pages from this
    /// process's resident set (they stay in the page cache, and reading them
    /// again faults them back in unchanged, since the map is a read-only file
    /// mapping). In-memory bytes are left alone. Lets a streaming reader keep
    /// its resident memory flat however large the input.
    pub(crate) fn release(&self, start: u64, end: u64) {
        #[cfg(unix)]
        if let Bytes::Map(m) = self {
            let page = 4096u64;
            let s = start.div_ceil(page) * page;
            let e = end.min(m.len() as u64) / page * page;
            if e > s {
                // SAFETY: DontNeed on a read-only file mapping discards nothing: the
                // pages are clean and are re-read from the file on the next access.
                let _ = unsafe {
                    m.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        s as usize,
                        (e - s) as usize,
                    )
                };
            }
        }
        #[cfg(not(unix))]
        let _ = (start, end);
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Map(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}
