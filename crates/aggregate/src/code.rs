//! What the aggregator needs to know about the binary's code: which addresses
//! start instructions, and where the instructions no fall-through run can cross are
//! (llvm-profgen's UncondBranchAddrSet).
//!
//! Both are bitmaps over the text's address span (one bit per byte), because
//! the aggregator asks `is_code` twice per branch record: 128 million times for
//! two million 32-entry samples, where a sorted-vector binary search was far slower
//! (docs/performance.md); the bitmap costs span/8 bytes (4 MiB for a 32 MiB text).

#[derive(Clone, Debug, Default)]
pub struct CodeMap {
    base: u64,
    span: u64,
    insn_bits: Vec<u64>,
    jump_bits: Vec<u64>,
}

impl CodeMap {
    /// `insns`: every instruction start; `uncond_jumps`: the instructions a linear run
    /// cannot pass (llvm-profgen's UncondBranchAddrSet: calls, returns, direct `jmp`s).
    pub fn new(insns: &[u64], uncond_jumps: &[u64]) -> Self {
        let (Some(&lo), Some(&hi)) = (insns.iter().min(), insns.iter().max()) else {
            return Self::default();
        };
        let span = hi - lo + 1;
        let words = span.div_ceil(64) as usize;
        let mut insn_bits = vec![0u64; words];
        let mut jump_bits = vec![0u64; words];
        for &a in insns {
            let o = a - lo;
            insn_bits[(o / 64) as usize] |= 1 << (o % 64);
        }
        for &a in uncond_jumps {
            if a >= lo && a <= hi {
                let o = a - lo;
                jump_bits[(o / 64) as usize] |= 1 << (o % 64);
            }
        }
        Self {
            base: lo,
            span,
            insn_bits,
            jump_bits,
        }
    }

    /// From the decoded binary.
    pub fn from_code(code: &kfdo_elf::Code) -> Self {
        let n = code.len();
        let mut insns = Vec::with_capacity(n);
        let mut jumps = Vec::new();
        for i in 0..n {
            let a = code.addr(i);
            insns.push(a);
            // As llvm-profgen-19: a call or a return always leaves the run, so a range
            // over one is bogus. In a kernel it is not always so (the alternatives patch
            // some calls into inline code at boot), but the profile follows the
            // reference tool.
            use kfdo_elf::InsnKind::*;
            if matches!(code.kind(i), Jump | Call | IndirectCall | Return) {
                jumps.push(a);
            }
        }
        Self::new(&insns, &jumps)
    }

    /// llvm-profgen's `addressIsCode`: `addr` is the first byte of a decoded instruction.
    #[inline]
    pub fn is_code(&self, addr: u64) -> bool {
        let o = addr.wrapping_sub(self.base);
        o < self.span && self.insn_bits[(o / 64) as usize] & (1 << (o % 64)) != 0
    }

    /// `addr`'s offset from the lowest instruction when it is code (see [`Self::is_code`]).
    #[inline]
    pub fn offset_of_code(&self, addr: u64) -> Option<u32> {
        let o = addr.wrapping_sub(self.base);
        // The span is below 4 GiB: `kfdo_elf::Code` refuses larger texts.
        (o < self.span && self.insn_bits[(o / 64) as usize] & (1 << (o % 64)) != 0)
            .then_some(o as u32)
    }

    /// The address of the code at `offset` (from [`Self::offset_of_code`]).
    #[inline]
    pub fn code_at_offset(&self, offset: u32) -> u64 {
        self.base + u64::from(offset)
    }

    /// A fall-through range `[start, end]` cannot hold a direct jump before its
    /// last instruction: execution would have left the range there.
    pub fn crosses_uncond_jump(&self, start: u64, end: u64) -> bool {
        if start >= end {
            return false;
        }
        // Search [start, end) clipped to the map, a word at a time.
        let lo = start.max(self.base);
        let hi = end.min(self.base + self.span);
        if lo >= hi {
            return false;
        }
        let (lo, hi) = (lo - self.base, hi - self.base);
        let (mut w, last_w) = ((lo / 64) as usize, ((hi - 1) / 64) as usize);
        while w <= last_w {
            let mut bits = self.jump_bits[w];
            if w == (lo / 64) as usize {
                bits &= u64::MAX << (lo % 64);
            }
            if w == last_w {
                let top = (hi - 1) % 64;
                bits &= if top == 63 {
                    u64::MAX
                } else {
                    (1u64 << (top + 1)) - 1
                };
            }
            if bits != 0 {
                return true;
            }
            w += 1;
        }
        false
    }

    /// llvm-profgen's validity rule for a fall-through range.
    #[inline]
    pub fn is_valid_fall_through(&self, start: u64, end: u64) -> bool {
        start <= end && !self.crosses_uncond_jump(start, end)
    }

    pub fn is_empty(&self) -> bool {
        self.span == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_and_jumps() {
        let m = CodeMap::new(&[0x1000, 0x1002, 0x1005, 0x1080, 0x10c0], &[0x1005, 0x10c0]);
        assert!(m.is_code(0x1000) && m.is_code(0x1080) && m.is_code(0x10c0));
        assert!(!m.is_code(0x1001) && !m.is_code(0xfff) && !m.is_code(0x10c1) && !m.is_code(1));
        assert!(m.crosses_uncond_jump(0x1000, 0x1080)); // jmp at 0x1005 inside
        assert!(!m.crosses_uncond_jump(0x1000, 0x1005)); // a range may end at its jmp
        assert!(!m.crosses_uncond_jump(0x1006, 0x10c0));
        assert!(m.crosses_uncond_jump(0x1006, 0x10c1));
        assert!(!m.is_valid_fall_through(0x1080, 0x1000));
        assert!(m.is_valid_fall_through(0x1080, 0x1080));
    }
}
