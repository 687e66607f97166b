//! User or kernel: the side of the address space an address is on, and whether the
//! recording's filter keeps branches from or to it.

use super::stream_format::{FILTER_KERNEL, FILTER_USER};

const KERNEL_START: u64 = 0xffff_8000_0000_0000;

/// The upper half of the address space is the kernel's.
#[inline]
pub fn is_kernel(a: u64) -> bool {
    a >= KERNEL_START
}

/// Whether the filter (a `FILTER_*` of the stream format) keeps branches from or to a
/// block at `addr`.
#[inline(always)]
pub fn side_kept(filter: u8, addr: u64) -> bool {
    match filter as u32 {
        FILTER_USER => !is_kernel(addr),
        FILTER_KERNEL => is_kernel(addr),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::super::stream_format::FILTER_ALL;
    use super::*;

    #[test]
    fn sides() {
        let (user, kernel) = (0x7fff_ffff_ffff_u64, 0xffff_ffff_8100_0000_u64);
        assert!(!is_kernel(user) && !is_kernel(0x8000_0000_0000));
        assert!(is_kernel(kernel) && is_kernel(0xffff_8000_0000_0000));
        let kept = |f: u32| (side_kept(f as u8, user), side_kept(f as u8, kernel));
        assert_eq!(kept(FILTER_ALL), (true, true));
        assert_eq!(kept(FILTER_USER), (true, false));
        assert_eq!(kept(FILTER_KERNEL), (false, true));
    }
}
