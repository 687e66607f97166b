//! The few libc calls the plugin makes, declared by hand (the plugin needs no crates) and
//! wrapped in safe functions. Constants are the x86-64 Linux values.

use std::ffi::{c_char, c_int, c_uint, c_void};

mod ffi {
    use std::ffi::{c_char, c_int, c_uint, c_void};
    extern "C" {
        pub fn write(fd: c_int, buf: *const c_void, n: usize) -> isize;
        pub fn open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int;
        pub fn getpid() -> c_int;
        pub fn getppid() -> c_int;
        pub fn gettid() -> c_int;
        pub fn clock_gettime(clk: c_int, ts: *mut [i64; 2]) -> c_int;
    }
}

const O_WRONLY: c_int = 1;
const O_CREAT: c_int = 0o100;
const O_APPEND: c_int = 0o2000;
const O_CLOEXEC: c_int = 0o2000000;
const CLOCK_MONOTONIC: c_int = 1;

/// `write(2)` of `buf`: bytes written, or -1 (errno says why).
pub fn write(fd: c_int, buf: &[u8]) -> isize {
    // SAFETY: `buf` is valid for reads of `buf.len()` bytes for the whole call.
    unsafe { ffi::write(fd, buf.as_ptr() as *const c_void, buf.len()) }
}

/// Opens (creating, mode 0600) `path` for appending, close-on-exec: a descriptor, or -1.
pub fn open_append(path: &[u8]) -> c_int {
    let mut p = path.to_vec();
    p.push(0);
    let flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
    // SAFETY: `p` is NUL-terminated and outlives the call.
    unsafe { ffi::open(p.as_ptr() as *const c_char, flags, 0o600 as c_uint) }
}

pub fn getpid() -> i32 {
    // SAFETY: no arguments, cannot fail.
    unsafe { ffi::getpid() }
}

pub fn getppid() -> i32 {
    // SAFETY: no arguments, cannot fail.
    unsafe { ffi::getppid() }
}

pub fn gettid() -> i32 {
    // SAFETY: no arguments, cannot fail.
    unsafe { ffi::gettid() }
}

/// CLOCK_MONOTONIC in nanoseconds (what perf's timestamps use).
pub fn now_ns() -> u64 {
    let mut ts = [0i64; 2];
    // SAFETY: `ts` has the layout of `struct timespec` on x86-64 (two 64-bit fields) and
    // is writable for the call.
    unsafe { ffi::clock_gettime(CLOCK_MONOTONIC, &mut ts) };
    (ts[0] as u64) * 1_000_000_000 + ts[1] as u64
}
