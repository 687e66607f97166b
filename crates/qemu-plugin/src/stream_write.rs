//! Writing the capture stream: one O_APPEND descriptor for the whole process (and the
//! processes it forks), buffers of whole records written with `write(2)`, and a latch
//! that stops writing after the first failure.

use super::libc_api;
use super::qemu_api::outs;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering::Relaxed};

static FD: AtomicI32 = AtomicI32::new(-1);
static WRITE_FAILED: AtomicBool = AtomicBool::new(false);

/// Samples are written in batches of this many bytes. QEMU 7.2 does not run plugin exit
/// callbacks when the guest dies of a signal, so a crash loses at most the last batch
/// (the side-band records are written at once, see `flush`).
const BATCH: usize = 1 << 16;

/// Opens the stream file for appending; false if it cannot be opened.
pub fn open(path: &[u8]) -> bool {
    let fd = libc_api::open_append(path);
    if fd < 0 {
        return false;
    }
    FD.store(fd, Relaxed);
    true
}

/// Whether a write has failed (the stream then ends without its END record).
pub fn write_failed() -> bool {
    WRITE_FAILED.load(Relaxed)
}

fn write_all(fd: c_int, mut data: &[u8]) -> bool {
    while !data.is_empty() {
        let n = libc_api::write(fd, data);
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        if n == 0 {
            return false;
        }
        data = &data[n as usize..];
    }
    true
}

/// Writes out a buffer of whole records. After a failed write (full disk) nothing more is
/// written and the stream ends without its END record, which the reader reports.
pub fn flush(buf: &mut Vec<u8>) {
    if buf.is_empty() {
        return;
    }
    if !WRITE_FAILED.load(Relaxed) && !write_all(FD.load(Relaxed), buf) {
        WRITE_FAILED.store(true, Relaxed);
        outs("vlbr: cannot write the capture stream; recording stopped\n");
    }
    buf.clear();
}

/// Flushes a buffer of samples once a batch has gathered.
pub fn maybe_flush(buf: &mut Vec<u8>) {
    if buf.len() >= BATCH {
        flush(buf);
    }
}

/// A new buffer, with room for one batch.
pub fn new_buffer() -> Vec<u8> {
    Vec::with_capacity(BATCH)
}
