//! The compiler that builds a variant, for programs and kernels: clang of one LLVM
//! release (its tools come from the same release, `kfdo_toolchain::Llvm`: `ld.lld-22`,
//! `llvm-profgen-22` ...)
//! or GCC of one major release (which picks the gcov profile's format version: each
//! release reads only its own). How a recipe spells its choice, and how it is resolved,
//! is each pipeline's own (`program::compiler`, `kernel::recipe`).

use kfdo_toolchain::Llvm;

use super::variant::Variant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compiler {
    Clang { llvm: Llvm },
    Gcc { major: u32 },
}

impl Compiler {
    /// `clang-N` or `gcc-N`, the command's own name.
    pub fn from_command(command: &str) -> Option<Compiler> {
        let (family, release) = command.split_once('-')?;
        let release: u32 = release.parse().ok()?;
        match family {
            "clang" => Some(Compiler::Clang {
                llvm: Llvm::new(release),
            }),
            "gcc" => Some(Compiler::Gcc { major: release }),
            _ => None,
        }
    }

    pub fn is_gcc(self) -> bool {
        matches!(self, Compiler::Gcc { .. })
    }

    pub fn is_clang(self) -> bool {
        !self.is_gcc()
    }

    /// The family, and for GCC its release, in words ("clang", "gcc 12").
    pub fn name(self) -> String {
        match self {
            Compiler::Clang { .. } => "clang".into(),
            Compiler::Gcc { major } => format!("gcc {major}"),
        }
    }

    /// The C compiler's command: `clang-19`, `gcc-12`.
    pub fn command(self) -> String {
        match self {
            Compiler::Clang { llvm } => llvm.clang(),
            Compiler::Gcc { major } => format!("gcc-{major}"),
        }
    }

    /// kbuild's `LLVM=` version suffix of a clang build (`-19`).
    pub fn llvm_suffix(self) -> Option<String> {
        self.llvm().map(Llvm::kbuild_llvm)
    }

    /// The LLVM release of a clang build; None for GCC.
    pub fn llvm(self) -> Option<Llvm> {
        match self {
            Compiler::Clang { llvm } => Some(llvm),
            Compiler::Gcc { .. } => None,
        }
    }

    /// GCC's major release; None for clang.
    pub fn gcc_major(self) -> Option<u32> {
        match self {
            Compiler::Gcc { major } => Some(major),
            Compiler::Clang { .. } => None,
        }
    }

    /// Whether this compiler builds `v` (see [`Variant::needs_llvm`]).
    pub fn can_build(self, v: Variant) -> bool {
        self.is_clang() || !v.needs_llvm()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_name_family_and_release_both_ways() {
        for command in ["clang-19", "clang-22", "gcc-12", "gcc-11"] {
            assert_eq!(Compiler::from_command(command).unwrap().command(), command);
        }
        for bad in ["clang", "gcc", "gcc-x", "icc-1", "clang-"] {
            assert_eq!(Compiler::from_command(bad), None, "{bad}");
        }
        let clang = Compiler::Clang {
            llvm: Llvm::DEFAULT,
        };
        assert_eq!(clang.llvm_suffix().as_deref(), Some("-19"));
        assert_eq!(Compiler::Gcc { major: 12 }.llvm_suffix(), None);
        assert_eq!(Compiler::Gcc { major: 12 }.name(), "gcc 12");
        assert_eq!(clang.name(), "clang");
    }

    #[test]
    fn gcc_builds_what_needs_no_llvm() {
        let gcc = Compiler::Gcc { major: 12 };
        for v in Variant::ALL {
            assert_eq!(gcc.can_build(v), !v.needs_llvm(), "{v:?}");
            assert!(Compiler::Clang {
                llvm: Llvm::new(22)
            }
            .can_build(v));
        }
    }
}
