//! The L1i and iTLB model behind the counters: a set-associative cache with LRU
//! replacement, of granules (cache lines or pages) of a power-of-two size; and the iTLB,
//! whose entries map pages of the size each region of the address space really uses.

use std::ops::Range;

pub struct Lru {
    sets: u64,
    ways: usize,
    shift: u32,
    /// sets * ways tags (a granule's first address), each set most recently used first;
    /// u64::MAX = empty.
    tags: Vec<u64>,
}

impl Lru {
    /// `entries` granules of `granule` bytes in sets of `ways`.
    pub fn new(entries: u64, ways: usize, granule: u64) -> Lru {
        let ways = ways.max(1);
        let sets = (entries / ways as u64).max(1);
        Lru {
            sets,
            ways,
            shift: granule.max(1).trailing_zeros(),
            tags: vec![u64::MAX; (sets as usize) * ways],
        }
    }

    /// Touches every granule of `[start, end)`: (granules touched, misses).
    pub fn access_range(&mut self, start: u64, end: u64) -> (u64, u64) {
        self.access_range_of(start, end, self.shift)
    }

    /// Touches every granule of `2^shift` bytes of `[start, end)`: (touched, misses). A
    /// TLB whose entries map pages of several sizes calls this with each region's page
    /// size; the tags (a page's first address) of pages of different sizes never clash
    /// as long as the regions do not overlap.
    pub fn access_range_of(&mut self, start: u64, end: u64, shift: u32) -> (u64, u64) {
        let (mut n, mut miss) = (0, 0);
        let mut g = start >> shift;
        while g << shift < end {
            n += 1;
            miss += self.access_tag(g << shift) as u64;
            g += 1;
        }
        (n, miss)
    }

    /// Touches the granule holding `addr`; true on a miss. (The plugin touches ranges;
    /// the tests check the model one address at a time.)
    #[cfg(test)]
    #[inline]
    pub fn access(&mut self, addr: u64) -> bool {
        self.access_tag(addr >> self.shift << self.shift)
    }

    /// Touches the granule that starts at `tag`; true on a miss.
    #[inline]
    fn access_tag(&mut self, tag: u64) -> bool {
        let set = ((tag >> self.shift) % self.sets) as usize;
        let row = &mut self.tags[set * self.ways..(set + 1) * self.ways];
        if row[0] == tag {
            return false;
        }
        match row.iter().position(|&t| t == tag) {
            Some(p) => {
                row[..=p].rotate_right(1);
                false
            }
            None => {
                row.rotate_right(1);
                row[0] = tag;
                true
            }
        }
    }
}

/// The iTLB model: fully associative, LRU, its entries shared by every region of the
/// address space. The kernel image's text is mapped with large pages (x86-64 and arm64
/// kernels map it with 2 MiB pages), everything else (user code, module code) with small
/// ones, so a kernel block and a user block each touch the pages the hardware would.
pub struct Itlb {
    lru: Lru,
    small_shift: u32,
    large_shift: u32,
    /// Where the large pages are: the kernel image's text range.
    large: Range<u64>,
}

impl Itlb {
    /// `entries` entries; `small_page` bytes per page, `large_page` in `large`.
    pub fn new(entries: u64, small_page: u64, large_page: u64, large: Range<u64>) -> Itlb {
        Itlb {
            lru: Lru::new(entries, entries as usize, small_page),
            small_shift: small_page.max(1).trailing_zeros(),
            large_shift: large_page.max(1).trailing_zeros(),
            large,
        }
    }

    /// Touches every page of the block `[start, end)`: (pages touched, misses). A block
    /// lies in one region (the kernel image's text is page-aligned and far from the
    /// rest), so its first address says which page size it uses.
    pub fn access_range(&mut self, start: u64, end: u64) -> (u64, u64) {
        let shift = if self.large.contains(&start) {
            self.large_shift
        } else {
            self.small_shift
        };
        self.lru.access_range_of(start, end, shift)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_and_misses() {
        // 4 lines of 64 bytes, fully associative.
        let mut c = Lru::new(4, 4, 64);
        assert!(c.access(0x1000), "cold miss");
        assert!(!c.access(0x1000), "hit");
        assert!(!c.access(0x103f), "same line");
        assert!(c.access(0x1040), "next line");
    }

    #[test]
    fn evicts_least_recently_used() {
        let mut c = Lru::new(2, 2, 64);
        let (a, b, d) = (0x0, 0x40, 0x80);
        assert!(c.access(a));
        assert!(c.access(b));
        assert!(!c.access(a), "a is now the most recent");
        assert!(c.access(d), "evicts b, the least recent");
        assert!(!c.access(a), "a stayed");
        assert!(c.access(b), "b was evicted");
        assert!(c.access(d), "and b's return evicted d (a was used after d)");
    }

    #[test]
    fn sets_are_independent() {
        // 2 sets of 1 way, 64-byte lines: even lines in set 0, odd ones in set 1.
        let mut c = Lru::new(2, 1, 64);
        assert!(c.access(0x00));
        assert!(c.access(0x40));
        assert!(!c.access(0x00), "set 1's line did not evict set 0's");
        assert!(c.access(0x80), "same set as 0x00: evicts it");
        assert!(c.access(0x00));
        assert!(!c.access(0x40));
    }

    #[test]
    fn ranges_touch_every_granule() {
        let mut c = Lru::new(64, 8, 64);
        // 0x30..0x90 spans lines 0x00, 0x40 and 0x80.
        assert_eq!(c.access_range(0x30, 0x90), (3, 3));
        assert_eq!(c.access_range(0x30, 0x90), (3, 0));
        // Within one line; the end is exclusive.
        assert_eq!(c.access_range(0x80, 0xc0), (1, 0));
        assert_eq!(c.access_range(0x80, 0xc1), (2, 1));
        // An empty range touches nothing.
        assert_eq!(c.access_range(0x100, 0x100), (0, 0));
    }

    #[test]
    fn pages_for_the_tlb() {
        let mut t = Lru::new(2, 2, 4096);
        assert_eq!(t.access_range(0x1ff0, 0x2010), (2, 2));
        assert_eq!(t.access_range(0x1000, 0x3000), (2, 0));
        assert_eq!(t.access_range(0x3000, 0x3001), (1, 1), "evicts page 0x1000");
        assert_eq!(t.access_range(0x1000, 0x1001), (1, 1));
    }

    /// The kernel image's text sits in 2 MiB pages: blocks spread over 100 small pages
    /// of one large page miss once. With 4 KiB pages everywhere (the old model) the same
    /// blocks missed 100 times, more than the hardware's 64 entries could ever hold.
    #[test]
    fn kernel_text_uses_large_pages_and_user_code_small_ones() {
        let text = 0xffff_ffff_8000_0000..0xffff_ffff_c000_0000;
        let mut t = Itlb::new(64, 4096, 2 << 20, text.clone());
        let base = 0xffff_ffff_8120_0000u64; // 2 MiB aligned
        let kernel = (0..100u64).map(|i| base + i * 4096 + 0x10);
        let (mut touched, mut misses) = (0, 0);
        for a in kernel.clone() {
            let (n, m) = t.access_range(a, a + 0x20);
            touched += n;
            misses += m;
        }
        assert_eq!((touched, misses), (100, 1));
        // The same blocks with 4 KiB pages in the kernel too: every page misses.
        let mut old = Itlb::new(64, 4096, 4096, text);
        let misses_4k: u64 = kernel.map(|a| old.access_range(a, a + 0x20).1).sum();
        assert_eq!(misses_4k, 100);
        // User code keeps 4 KiB pages: 100 pages, 100 misses; the kernel's large page
        // is then the least recently used entry and was evicted.
        let user = 0x5555_5555_0000u64;
        let user_misses: u64 = (0..100u64)
            .map(|i| t.access_range(user + i * 4096, user + i * 4096 + 0x20).1)
            .sum();
        assert_eq!(user_misses, 100);
        assert_eq!(t.access_range(base, base + 1), (1, 1));
        // A block that crosses a 4 KiB boundary inside the large page is one page.
        assert_eq!(t.access_range(base + 0xff0, base + 0x1010), (1, 0));
    }

    #[test]
    fn sizes() {
        // The default L1i: 32 KiB, 8 ways, 64-byte lines = 64 sets.
        let c = Lru::new(32 * 1024 / 64, 8, 64);
        assert_eq!((c.sets, c.ways, c.shift, c.tags.len()), (64, 8, 6, 512));
        // Fewer entries than ways: one set.
        let c = Lru::new(2, 8, 64);
        assert_eq!((c.sets, c.tags.len()), (1, 8));
    }
}
