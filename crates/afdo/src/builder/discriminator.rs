//! LLVM's encoding of DWARF discriminators (non flow-sensitive form).
//!
//! A discriminator packs up to three components, each "prefix encoded": the
//! base discriminator (which copy of a line's code), the duplication factor
//! (how many copies unrolling or vectorization made) and a copy id. The
//! profile is keyed by the base discriminator; the duplication factor scales
//! counts back up, because only one of the copies executes per iteration.

/// One prefix-encoded component: bit 0 set means the component is absent (0);
/// otherwise 5 bits, or 11 bits when bit 6 says the long form is used.
fn decode_component(u: u32) -> u32 {
    if u & 1 != 0 {
        return 0;
    }
    let u = u >> 1;
    if u & 0x20 != 0 {
        ((u >> 1) & 0xfe0) | (u & 0x1f)
    } else {
        u & 0x1f
    }
}

/// Drop the first component, whatever its length.
fn next_component(d: u32) -> u32 {
    if d & 1 == 0 {
        d >> if d & 0x40 != 0 { 14 } else { 7 }
    } else {
        d >> 1
    }
}

pub fn base_discriminator(d: u32) -> u32 {
    decode_component(d)
}

pub fn duplication_factor(d: u32) -> u32 {
    match decode_component(next_component(d)) {
        0 => 1,
        n => n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_seen_in_clang_19_line_tables() {
        // (raw discriminator, base, duplication) as llvm-profgen-19 printed them
        // for a loop clang-19 vectorized by 8 (see the conformance tests).
        for (d, base, dup) in [
            (0, 0, 1),
            (2, 1, 1),
            (4, 2, 1),
            (12, 6, 1),
            (14, 7, 1),
            (2052, 2, 8),
            (2060, 6, 8),
            (2050, 1, 8),
        ] {
            assert_eq!(base_discriminator(d), base, "base of {d}");
            assert_eq!(duplication_factor(d), dup, "dup of {d}");
        }
    }
}
