//! The counters of one vCPU or process, user and kernel: instructions, taken and
//! conditional branches, and the L1i and iTLB model's accesses and misses.

use super::stream_format::COUNTER_FIELDS;

/// Index 0 counts user addresses, 1 kernel ones.
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    pub insns: [u64; 2],
    pub taken: [u64; 2],
    pub cond: [u64; 2],
    pub l1i_access: [u64; 2],
    pub l1i_miss: [u64; 2],
    pub itlb_access: [u64; 2],
    pub itlb_miss: [u64; 2],
}

impl Counts {
    /// All zero (`Default` for statics).
    pub const ZERO: Counts = Counts {
        insns: [0; 2],
        taken: [0; 2],
        cond: [0; 2],
        l1i_access: [0; 2],
        l1i_miss: [0; 2],
        itlb_access: [0; 2],
        itlb_miss: [0; 2],
    };

    pub fn add(&mut self, o: &Counts) {
        for k in 0..2 {
            self.insns[k] += o.insns[k];
            self.taken[k] += o.taken[k];
            self.cond[k] += o.cond[k];
            self.l1i_access[k] += o.l1i_access[k];
            self.l1i_miss[k] += o.l1i_miss[k];
            self.itlb_access[k] += o.itlb_access[k];
            self.itlb_miss[k] += o.itlb_miss[k];
        }
    }

    /// `[user, kernel]` in the order of the stream's COUNTERS record.
    pub fn by_side(&self) -> [[u64; COUNTER_FIELDS]; 2] {
        [0, 1].map(|k| {
            [
                self.insns[k],
                self.taken[k],
                self.cond[k],
                self.l1i_access[k],
                self.l1i_miss[k],
                self.itlb_access[k],
                self.itlb_miss[k],
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_and_order() {
        let mut a = Counts::ZERO;
        assert_eq!(a, Counts::default());
        let b = Counts {
            insns: [1, 2],
            taken: [3, 4],
            cond: [5, 6],
            l1i_access: [7, 8],
            l1i_miss: [9, 10],
            itlb_access: [11, 12],
            itlb_miss: [13, 14],
        };
        a.add(&b);
        a.add(&b);
        assert_eq!(
            a.by_side(),
            [[2, 6, 10, 14, 18, 22, 26], [4, 8, 12, 16, 20, 24, 28]]
        );
    }
}
