//! One vCPU's branch stack, as an LBR holds it: a ring of the last taken branches, and the
//! sampling period (every `period`-th taken branch is sampled, with the ring newest
//! first).
//!
//! It sits in the hot part of `Vcpu`: its counters in the first cache line, and entries
//! aligned so that no entry straddles two cache lines.

/// Ring slots (the depth is at most 1024; `mask + 1` of them are used).
pub const RING_CAP: usize = 2048;

/// One taken branch.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct Entry {
    pub from: u64,
    pub to: u64,
}

#[repr(C)]
pub struct Ring {
    /// Taken branches put into the ring since the thread started: the newest is at
    /// `slots[nbr & mask]`.
    nbr: u64,
    /// The value of `nbr` at which the next sample is taken.
    next: u64,
    period: u64,
    /// Ring slots in use (a power of two, more than the depth) - 1.
    mask: u32,
    /// Entries per sample (at most).
    depth: u32,
    slots: [Entry; RING_CAP],
}

impl Ring {
    /// A ring for stacks of `depth` (1..=1024) entries, sampling every `period` (> 0)
    /// taken branches.
    pub fn new(depth: usize, period: u64) -> Ring {
        let depth = depth.max(1);
        // One slot more than the depth: left from a branch-free design that wrote the slot
        // after the newest for every block. Nothing needs it now; kept so that the ring's
        // size and mask stay as they were.
        let cap = (depth + 1).next_power_of_two();
        assert!(cap <= RING_CAP);
        Ring {
            nbr: 0,
            next: period,
            period,
            mask: (cap - 1) as u32,
            depth: depth as u32,
            slots: [Entry { from: 0, to: 0 }; RING_CAP],
        }
    }

    /// Puts a taken branch into the ring; true when it is the one to sample.
    #[inline(always)]
    pub fn push(&mut self, from: u64, to: u64) -> bool {
        self.nbr += 1;
        let i = (self.nbr & self.mask as u64) as usize & (RING_CAP - 1);
        self.slots[i] = Entry { from, to };
        if self.nbr == self.next {
            self.next += self.period;
            return true;
        }
        false
    }

    pub fn period(&self) -> u64 {
        self.period
    }

    /// The entries a sample holds now: the last `depth` branches (fewer at the start),
    /// newest first.
    pub fn newest_first(&self) -> impl ExactSizeIterator<Item = (u64, u64)> + '_ {
        let n = self.nbr.min(self.depth as u64) as usize;
        let mask = self.mask as u64;
        let newest = self.nbr;
        (0..n).map(move |k| {
            let e = self.slots[(newest.wrapping_sub(k as u64) & mask) as usize];
            (e.from, e.to)
        })
    }

    /// A new thread on this vCPU: an empty ring, and the countdown to the next sample
    /// carries on (the period stays exact across threads).
    pub fn restart(&mut self) {
        self.next -= self.nbr;
        self.nbr = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(r: &Ring) -> Vec<(u64, u64)> {
        r.newest_first().collect()
    }

    #[test]
    fn newest_first_up_to_depth() {
        let mut r = Ring::new(4, 1000);
        assert!(stack(&r).is_empty());
        r.push(1, 10);
        r.push(2, 20);
        assert_eq!(stack(&r), [(2, 20), (1, 10)]);
        r.push(3, 30);
        r.push(4, 40);
        r.push(5, 50);
        r.push(6, 60);
        assert_eq!(stack(&r), [(6, 60), (5, 50), (4, 40), (3, 30)]);
        assert_eq!(r.newest_first().len(), 4);
    }

    #[test]
    fn wraps_around() {
        // Depth 5 uses 8 slots; push well past several wraps.
        let mut r = Ring::new(5, u64::MAX);
        for i in 1..=1000u64 {
            r.push(i, i + 1);
        }
        assert_eq!(
            stack(&r),
            [
                (1000, 1001),
                (999, 1000),
                (998, 999),
                (997, 998),
                (996, 997)
            ]
        );
        // The largest depth fills the whole ring.
        let mut r = Ring::new(1024, u64::MAX);
        for i in 1..=5000u64 {
            r.push(i, 0);
        }
        let s = stack(&r);
        assert_eq!(s.len(), 1024);
        assert_eq!((s[0].0, s[1023].0), (5000, 3977));
    }

    #[test]
    fn depth_one_and_zero() {
        let mut r = Ring::new(1, 1000);
        r.push(1, 2);
        r.push(3, 4);
        assert_eq!(stack(&r), [(3, 4)]);
        // Depth 0 is taken as 1.
        let mut r = Ring::new(0, 1000);
        r.push(1, 2);
        r.push(3, 4);
        assert_eq!(stack(&r), [(3, 4)]);
    }

    #[test]
    fn samples_every_period() {
        let mut r = Ring::new(32, 3);
        let sampled: Vec<u64> = (1..=10).filter(|&i| r.push(i, i)).collect();
        assert_eq!(sampled, [3, 6, 9]);
        // The sampled branch is the newest entry when the sample is taken.
        let mut r = Ring::new(2, 2);
        assert!(!r.push(1, 10));
        assert!(r.push(2, 20));
        assert_eq!(stack(&r), [(2, 20), (1, 10)]);
        assert_eq!(r.period(), 2);
    }

    #[test]
    fn period_one_samples_every_branch() {
        let mut r = Ring::new(32, 1);
        assert!((0..100).all(|i| r.push(i, i)));
    }

    #[test]
    fn restart_empties_and_keeps_the_countdown() {
        let mut r = Ring::new(4, 5);
        for i in 0..3 {
            assert!(!r.push(i, i));
        }
        r.restart();
        assert!(stack(&r).is_empty());
        // Two more branches complete the period begun before the restart.
        assert!(!r.push(7, 70));
        assert!(r.push(8, 80));
        assert_eq!(stack(&r), [(8, 80), (7, 70)]);
        let sampled: Vec<u64> = (0..10).filter(|&i| r.push(i, i)).collect();
        assert_eq!(sampled, [4, 9]);
    }

    #[test]
    fn entries_do_not_straddle_cache_lines() {
        assert_eq!(std::mem::size_of::<Entry>(), 16);
        assert_eq!(std::mem::align_of::<Entry>(), 16);
        // The counters and the first entries share the ring's first 64 bytes.
        assert_eq!(std::mem::offset_of!(Ring, slots), 32);
    }
}
