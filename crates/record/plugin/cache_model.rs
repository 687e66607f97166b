//! The L1i and iTLB model behind the counters: a set-associative cache with LRU
//! replacement, of granules (cache lines or pages) of a power-of-two size.

pub struct Lru {
    sets: u64,
    ways: usize,
    shift: u32,
    /// sets * ways granule numbers, each set most recently used first; u64::MAX = empty.
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
        let (mut n, mut miss) = (0, 0);
        let mut g = start >> self.shift;
        while g << self.shift < end {
            n += 1;
            miss += self.access(g << self.shift) as u64;
            g += 1;
        }
        (n, miss)
    }

    /// Touches the granule holding `addr`; true on a miss.
    #[inline]
    pub fn access(&mut self, addr: u64) -> bool {
        let g = addr >> self.shift;
        let set = (g % self.sets) as usize;
        let row = &mut self.tags[set * self.ways..(set + 1) * self.ways];
        if row[0] == g {
            return false;
        }
        match row.iter().position(|&t| t == g) {
            Some(p) => {
                row[..=p].rotate_right(1);
                false
            }
            None => {
                row.rotate_right(1);
                row[0] = g;
                true
            }
        }
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
