//! LLVM's encodings of DWARF discriminators.
//!
//! The classic form packs up to three components, each "prefix encoded": the
//! base discriminator (which copy of a line's code), the duplication factor
//! (how many copies unrolling or vectorization made) and a copy id. The
//! profile is keyed by the base discriminator; the duplication factor scales
//! counts back up, because only one of the copies executes per iteration.
//!
//! Flow-sensitive discriminators (`-enable-fs-discriminator`, which kbuild's
//! CONFIG_AUTOFDO_CLANG turns on) are assigned by the code generator pass by
//! pass and are kept whole: the profile is keyed by the full value, with no
//! duplication factor. Clang marks such objects with a weak symbol,
//! [`FS_DISCRIMINATOR_SYMBOL`], which survives into the linked binary.
//!
//! GCC's discriminators are neither: `gcc -g` numbers the basic blocks of a
//! line 1, 2, 3... with no encoding and no duplication factor, so decoding
//! them the LLVM way would scale counts by a made-up factor (GCC's
//! discriminator 1024 reads as LLVM's base 0 duplicated 4 times).

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

/// The symbol clang defines in every object built with flow-sensitive
/// discriminators.
pub const FS_DISCRIMINATOR_SYMBOL: &str = "__llvm_fs_discriminator__";

/// How a binary's discriminators are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Discriminators {
    /// Base discriminator and duplication factor, prefix encoded.
    #[default]
    Encoded,
    /// Flow-sensitive: the whole value, duplication factor 1.
    FlowSensitive,
    /// GCC's plain block numbers: the whole value, duplication factor 1.
    Gcc,
}

impl Discriminators {
    /// The profile key of discriminator `d`.
    pub fn key(self, d: u32) -> u32 {
        match self {
            Discriminators::Encoded => base_discriminator(d),
            Discriminators::FlowSensitive | Discriminators::Gcc => d,
        }
    }

    /// The factor that scales a location's count back up.
    pub fn duplication(self, d: u32) -> u32 {
        match self {
            Discriminators::Encoded => duplication_factor(d),
            Discriminators::FlowSensitive | Discriminators::Gcc => 1,
        }
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
            assert_eq!(Discriminators::Encoded.key(d), base);
            assert_eq!(Discriminators::Encoded.duplication(d), dup);
        }
    }

    #[test]
    fn flow_sensitive_discriminators_are_kept_whole() {
        // Values llvm-profgen-19 wrote for a CONFIG_AUTOFDO_CLANG kernel: 1, 257, 0x10002.
        for d in [0, 1, 257, 0x1_0002] {
            assert_eq!(Discriminators::FlowSensitive.key(d), d);
            assert_eq!(Discriminators::FlowSensitive.duplication(d), 1);
        }
    }

    #[test]
    fn gcc_discriminators_are_plain_numbers() {
        assert_eq!(
            duplication_factor(1024),
            4,
            "what LLVM's decoding would make of it"
        );
        for d in [0, 1, 3, 7, 1024] {
            assert_eq!(Discriminators::Gcc.key(d), d);
            assert_eq!(Discriminators::Gcc.duplication(d), 1);
        }
    }
}
