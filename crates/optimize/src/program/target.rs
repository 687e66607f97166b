//! `[build] target`: a program recipe built for another architecture than this
//! machine's (only `aarch64-linux-gnu`, on an x86-64 host), and what follows from it.
//!
//! clang cross-compiles with `--target=aarch64-linux-gnu` and finds Debian's cross
//! toolchain by itself: the sysroot `/usr/aarch64-linux-gnu` (libc6-dev-arm64-cross:
//! headers, crt1.o, libc) and GCC's `/usr/lib/gcc-cross/aarch64-linux-gnu/N`
//! (gcc-aarch64-linux-gnu: crtbegin.o, libgcc), so no `--sysroot`, `-B` or `-L` is
//! needed, and lld links for any target. The program then runs only under
//! `qemu-aarch64`: the recorder picks it from the ELF header, the emulated counters do
//! too, and the timed runs are wrapped in it here, so their seconds are emulated time
//! (QEMU TCG on this host, not an Arm CPU) and are labelled so.

use std::path::{Path, PathBuf};

use anyhow::bail;
use kfdo_elf::Arch;
use kfdo_record::hardware::Method;

/// The targets a recipe may name.
pub const TARGETS: [&str; 1] = ["aarch64-linux-gnu"];

/// A cross target: its triple and the architecture its programs' ELF header must name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub triple: String,
    pub arch: Arch,
}

impl Target {
    /// `[build] target = TRIPLE` of a recipe.
    pub fn parse(triple: &str) -> anyhow::Result<Target> {
        match triple {
            "aarch64-linux-gnu" => Ok(Target {
                triple: triple.to_string(),
                arch: Arch::Aarch64,
            }),
            t => bail!(
                "[build] target = {t:?}: kfdo builds for {} (clang --target, Debian's cross \
                 sysroot); leave `target` out to build for this machine",
                TARGETS.join(", ")
            ),
        }
    }

    /// The flag that makes clang compile and link for the target (CFLAGS and LDFLAGS:
    /// a recipe may link in a separate command).
    pub fn clang_flag(&self) -> String {
        format!("--target={}", self.triple)
    }

    /// QEMU's user-mode emulator for the target.
    pub fn qemu(&self) -> String {
        format!("qemu-{}", self.arch.uname().unwrap_or("aarch64"))
    }

    /// Debian's cross sysroot: the dynamic loader and libraries the program runs with.
    pub fn sysroot(&self) -> PathBuf {
        Path::new("/usr").join(&self.triple)
    }

    /// The recording method: auto is emulated LBR (the program runs only under QEMU
    /// here); a hardware method would run it on this CPU and is refused by name.
    pub fn method(&self, requested: Option<Method>) -> anyhow::Result<(Method, Vec<String>)> {
        match requested {
            None => Ok((
                Method::Emulated,
                vec![format!(
                    "record: emulated (the recipe builds {} programs, which run here only \
                     under {})",
                    self.arch,
                    self.qemu()
                )],
            )),
            Some(Method::Emulated) => Ok((Method::Emulated, Vec::new())),
            Some(m) => bail!(
                "--method {}: the recipe builds {} programs ([build] target = {:?}), which \
                 run here only under {}; use --method emulated (or auto)",
                m.name(),
                self.arch,
                self.triple,
                self.qemu()
            ),
        }
    }

    /// The benchmark's counters: the emulated ones; this CPU's (`perf`) and cachegrind's
    /// (valgrind runs host programs only) cannot count a foreign program.
    pub fn counters(
        &self,
        requested: kfdo_bench::counters::Choice,
    ) -> anyhow::Result<kfdo_bench::counters::Choice> {
        use kfdo_bench::counters::Choice;
        match requested {
            Choice::Auto | Choice::Emulated => Ok(Choice::Emulated),
            Choice::None => Ok(Choice::None),
            c => bail!(
                "--counters {}: the recipe builds {} programs ([build] target = {:?}), which \
                 neither this CPU's counters nor valgrind can run; use --counters emulated \
                 (the default for a cross recipe) or none",
                c.name(),
                self.arch,
                self.triple
            ),
        }
    }

    /// A benchmark command template with the program (`{bin}`) run under QEMU, for the
    /// timed runs: `qemu-aarch64 -L /usr/aarch64-linux-gnu {bin} ARGS`.
    pub fn timed_template(&self, template: &str) -> String {
        let wrapped = format!(
            "{} -L {} {}",
            self.qemu(),
            crate::steps::recipe_file::quote(&self.sysroot()),
            kfdo_bench::runner::PROGRAM_PLACEHOLDER
        );
        template.replace(kfdo_bench::runner::PROGRAM_PLACEHOLDER, &wrapped)
    }

    /// What clock the timed runs' seconds are (the summary says "emulated time (THIS)").
    pub fn time_label(&self) -> String {
        format!("{} TCG on this host", self.qemu())
    }

    /// The benchmark's name in the results and the report: every table under it says
    /// that its times are emulated.
    pub fn bench_name(&self, name: &str) -> String {
        format!("{name} (emulated time, {})", self.qemu())
    }

    /// The build made a program of the target's architecture (a recipe's build command
    /// that drops `$CFLAGS` or `$LDFLAGS` would make a host program instead).
    pub fn check_binary(&self, binary: &Path, recipe: &Path) -> anyhow::Result<()> {
        let arch = kfdo_elf::Binary::open(binary)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", binary.display()))?
            .arch();
        if arch != self.arch {
            bail!(
                "{} is an {arch} program, but {} says [build] target = {:?}: the build command \
                 must pass $CFLAGS to every compile and $LDFLAGS to the link (they carry {})",
                binary.display(),
                recipe.display(),
                self.triple,
                self.clang_flag()
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_aarch64_is_a_target() {
        let t = Target::parse("aarch64-linux-gnu").unwrap();
        assert_eq!(t.arch, Arch::Aarch64);
        assert_eq!(t.qemu(), "qemu-aarch64");
        assert_eq!(t.clang_flag(), "--target=aarch64-linux-gnu");
        let e = Target::parse("riscv64-linux-gnu").unwrap_err().to_string();
        assert!(e.contains("[build] target") && e.contains("riscv64"), "{e}");
    }

    #[test]
    fn hardware_methods_and_counters_refused() {
        use kfdo_bench::counters::Choice;
        let t = Target::parse("aarch64-linux-gnu").unwrap();
        assert_eq!(t.method(None).unwrap().0, Method::Emulated);
        let e = t.method(Some(Method::Lbr)).unwrap_err().to_string();
        assert!(
            e.contains("--method lbr") && e.contains("qemu-aarch64"),
            "{e}"
        );
        assert_eq!(t.counters(Choice::Auto).unwrap(), Choice::Emulated);
        let e = t.counters(Choice::Perf).unwrap_err().to_string();
        assert!(e.contains("--counters perf"), "{e}");
        assert!(t.counters(Choice::Cachegrind).is_err());
    }

    #[test]
    fn timed_runs_run_the_program_under_qemu() {
        let t = Target::parse("aarch64-linux-gnu").unwrap();
        assert_eq!(
            t.timed_template("{bin} --size 5 && {bin} -q"),
            "qemu-aarch64 -L /usr/aarch64-linux-gnu {bin} --size 5 && \
             qemu-aarch64 -L /usr/aarch64-linux-gnu {bin} -q"
        );
    }
}
