//! The compiler that builds a variant, for programs and kernels: clang of one LLVM
//! release (its tools come from the same release, `kfdo_toolchain::Llvm`: `ld.lld-22`,
//! `llvm-profgen-22` ...)
//! or GCC of one major release (which picks the gcov profile's format version: each
//! release reads only its own). A recipe of either kind names it the same way
//! ([`CompilerName`], one parse rule, one `--llvm` rule); which names a kernel recipe
//! may use, and how a program's `gcc` on PATH is resolved, is each pipeline's own.

use std::fmt;

use anyhow::bail;
use kfdo_toolchain::Llvm;
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compiler {
    Clang { llvm: Llvm },
    Gcc { major: u32 },
}

impl Compiler {
    /// clang of LLVM's default release.
    pub const CLANG: Compiler = Compiler::Clang {
        llvm: Llvm::DEFAULT,
    };
    /// GCC of Debian 12's release.
    pub const GCC: Compiler = Compiler::Gcc { major: 12 };

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
}

/// What a recipe's `compiler` names: `clang` (LLVM's default release), `clang-N`,
/// `gcc-N`, or `gcc`, the gcc on PATH, whose release is asked of it when a run starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum CompilerName {
    Is(Compiler),
    GccOnPath,
}

impl CompilerName {
    pub fn parse(text: &str) -> anyhow::Result<CompilerName> {
        let named = match text {
            "clang" => Some(CompilerName::Is(Compiler::CLANG)),
            "gcc" => Some(CompilerName::GccOnPath),
            c if c.starts_with("clang-") => Llvm::parse(c)
                .ok()
                .map(|llvm| CompilerName::Is(Compiler::Clang { llvm })),
            c => Compiler::from_command(c)
                .filter(|c| c.is_gcc())
                .map(CompilerName::Is),
        };
        match named {
            Some(n) => Ok(n),
            None => bail!(
                "compiler = {text:?}: use \"clang\" (the default: {}), \"clang-N\" (e.g. \
                 \"clang-22\"), \"gcc\" (the gcc on PATH) or \"gcc-N\" (e.g. \"gcc-12\")",
                Llvm::DEFAULT.clang()
            ),
        }
    }

    /// The compiler, unless it is the gcc on PATH (not yet asked).
    pub fn compiler(self) -> Option<Compiler> {
        match self {
            CompilerName::Is(c) => Some(c),
            CompilerName::GccOnPath => None,
        }
    }

    pub fn is_clang(self) -> bool {
        self.compiler().is_some_and(Compiler::is_clang)
    }

    /// With `--llvm` applied: a clang build uses that release; GCC has no LLVM release
    /// to change, so `--llvm` is refused for it.
    pub fn with_llvm(self, llvm: Option<Llvm>) -> anyhow::Result<CompilerName> {
        match llvm {
            None => Ok(self),
            Some(llvm) if self.is_clang() => Ok(CompilerName::Is(Compiler::Clang { llvm })),
            Some(l) => bail!(
                "--llvm {}: the recipe builds with {:?} (its compiler); --llvm picks the \
                 release of a clang recipe's tools",
                l.major,
                self.to_string()
            ),
        }
    }

    /// The C and C++ compilers it names (a program's `--cc` / `--cxx` override them).
    pub fn commands(self) -> (String, String) {
        match self {
            CompilerName::Is(Compiler::Clang { llvm }) => (llvm.clang(), llvm.clangxx()),
            CompilerName::Is(Compiler::Gcc { major }) => {
                (format!("gcc-{major}"), format!("g++-{major}"))
            }
            CompilerName::GccOnPath => ("gcc".into(), "g++".into()),
        }
    }
}

impl TryFrom<String> for CompilerName {
    type Error = anyhow::Error;
    fn try_from(text: String) -> anyhow::Result<CompilerName> {
        CompilerName::parse(&text)
    }
}

/// The command's name (`clang-19`, `gcc-12`, `gcc`): how keys and messages spell it.
impl fmt::Display for CompilerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompilerName::Is(c) => f.write_str(&c.command()),
            CompilerName::GccOnPath => f.write_str("gcc"),
        }
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
    fn recipes_name_compilers_one_way() {
        for ok in ["clang", "clang-19", "clang-22", "gcc", "gcc-11", "gcc-12"] {
            let n = CompilerName::parse(ok).unwrap();
            if ok != "clang" {
                assert_eq!(n.to_string(), ok);
            }
        }
        for bad in ["icc", "gcc-", "gcc-x", "clang-", "clang-x", "llvm-22"] {
            let e = CompilerName::parse(bad).unwrap_err().to_string();
            assert!(e.contains("compiler = ") && e.contains(bad), "{e}");
        }
        assert_eq!(
            CompilerName::parse("gcc-11").unwrap().commands(),
            ("gcc-11".into(), "g++-11".into())
        );
        assert_eq!(
            CompilerName::parse("clang").unwrap().commands().0,
            "clang-19"
        );
        assert_eq!(
            CompilerName::parse("clang-22").unwrap().commands(),
            ("clang-22".into(), "clang++-22".into())
        );
        assert_eq!(CompilerName::GccOnPath.commands().0, "gcc");
    }

    #[test]
    fn llvm_picks_a_clang_release_and_is_refused_for_gcc() {
        let l22 = Some(Llvm::new(22));
        let named = |t| CompilerName::parse(t).unwrap();
        assert_eq!(
            named("clang").with_llvm(l22).unwrap().to_string(),
            "clang-22"
        );
        assert_eq!(
            named("clang-19").with_llvm(l22).unwrap().to_string(),
            "clang-22"
        );
        assert_eq!(
            named("gcc-12").with_llvm(None).unwrap().to_string(),
            "gcc-12"
        );
        let e = named("gcc-12").with_llvm(l22).unwrap_err().to_string();
        assert!(e.contains("--llvm 22") && e.contains("gcc-12"), "{e}");
        assert!(CompilerName::GccOnPath.with_llvm(l22).is_err());
    }
}
