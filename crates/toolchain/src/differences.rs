//! What differs between the LLVM releases kfdo knows, the one place that says so.
//! A step that behaves differently per release asks [`Llvm::differences`]; nothing
//! else compares release numbers.

use crate::llvm::Llvm;

/// The facts of one release that kfdo's steps and tests depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Differences {
    /// The release these facts were measured on (the nearest known release at or
    /// below the one asked for; the oldest known for an older one).
    pub measured_on: Llvm,
    /// The `.llvm_bb_addr_map` section version `clang -fbasic-block-address-map`
    /// writes (LLVM 19: 2; 22: 5, which adds the features byte's later fields).
    pub bb_addr_map_version: u8,
    /// Whether llvm-profgen converts IP-only samples (`--leading-ip-only`, each sample's
    /// leading address counted once). LLVM 22's llvm-profgen no longer has the option
    /// ("Unknown command line argument"), so it cannot be the reference converter of a
    /// recording without branch stacks.
    pub profgen_leading_ip_only: bool,
}

impl Llvm {
    /// This release's [`Differences`].
    pub fn differences(self) -> Differences {
        let measured_on = Llvm::KNOWN
            .iter()
            .rev()
            .find(|k| k.major <= self.major)
            .copied()
            .unwrap_or(Llvm::KNOWN[0]);
        match measured_on.major {
            19 => Differences {
                measured_on,
                bb_addr_map_version: 2,
                profgen_leading_ip_only: true,
            },
            _ => Differences {
                measured_on,
                bb_addr_map_version: 5,
                profgen_leading_ip_only: false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_kfdo_was_not_tested_with_takes_the_nearest_older_facts() {
        assert_eq!(Llvm::new(20).differences().measured_on, Llvm::new(19));
        assert_eq!(Llvm::new(23).differences().measured_on, Llvm::new(22));
        assert_eq!(Llvm::new(17).differences().measured_on, Llvm::new(19));
        assert_eq!(Llvm::new(19).differences().bb_addr_map_version, 2);
        assert_eq!(Llvm::new(22).differences().bb_addr_map_version, 5);
        assert!(Llvm::new(19).differences().profgen_leading_ip_only);
        assert!(!Llvm::new(22).differences().profgen_leading_ip_only);
    }
}
