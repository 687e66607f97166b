//! Whether a kernel profile can drive an AutoFDO build: kbuild's AutoFDO flags
//! (`-fdebug-info-for-profiling` and the flow-sensitive discriminators of
//! CONFIG_AUTOFDO_CLANG) give every basic block of a line its own discriminator in the
//! DWARF line table, and the profile keys samples by them. A vmlinux built without them
//! has none, so its profile has none: clang would spread each line's samples over all of
//! its blocks, and the AutoFDO build would be tuned on blurred counts.

use kfdo_afdo::{FunctionSamples, Profile};

/// Sample locations with a discriminator, over all functions and inlinees.
pub fn locations_with_discriminators(p: &Profile) -> usize {
    fn count(f: &FunctionSamples) -> usize {
        f.body.keys().filter(|l| l.discriminator != 0).count()
            + f.callsites
                .values()
                .flat_map(|callees| callees.values())
                .map(count)
                .sum::<usize>()
    }
    p.functions.values().map(count).sum()
}

/// The error for a profile without discriminators, naming the vmlinux and the fix.
pub fn no_discriminators(vmlinux: &std::path::Path) -> String {
    format!(
        "{}: the profile has no discriminators, so this vmlinux was built without \
         -fdebug-info-for-profiling and the flow-sensitive discriminators that AutoFDO \
         needs; build the profiled kernel with CONFIG_AUTOFDO_CLANG=y (Linux >= 6.13) or, \
         for older kernels, with the recipe's fdo = \"kcflags\" (KCFLAGS=\"-fdebug-info-for-profiling \
         -mllvm -enable-fs-discriminator=true -mllvm -improved-fs-discriminator=true\")",
        vmlinux.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kfdo_afdo::{LineLocation, SampleRecord};

    fn loc(line_offset: u32, discriminator: u32) -> LineLocation {
        LineLocation {
            line_offset,
            discriminator,
        }
    }

    #[test]
    fn discriminators_are_counted_in_bodies_and_inlinees() {
        let mut f = FunctionSamples {
            name: "tcp_sendmsg".into(),
            ..Default::default()
        };
        f.body.insert(loc(1, 0), SampleRecord::default());
        let mut p = Profile::new();
        p.functions.insert(f.name.clone(), f.clone());
        assert_eq!(locations_with_discriminators(&p), 0);
        let mut inlinee = FunctionSamples {
            name: "skb_put".into(),
            ..Default::default()
        };
        inlinee
            .body
            .insert(loc(2, 0x10001), SampleRecord::default());
        f.callsites
            .entry(loc(3, 0))
            .or_default()
            .insert(inlinee.name.clone(), inlinee);
        p.functions.insert(f.name.clone(), f);
        assert_eq!(locations_with_discriminators(&p), 1);
        assert!(no_discriminators(std::path::Path::new("/k/vmlinux"))
            .contains("/k/vmlinux: the profile has no discriminators"));
    }
}
