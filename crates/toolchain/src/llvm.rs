//! One LLVM release and the names of its tools.

use std::fmt;
use std::path::PathBuf;

/// An LLVM release, by its major number: the tools of one run all come from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Llvm {
    pub major: u32,
}

/// Why a text does not name an LLVM release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseLlvmError(pub String);

impl fmt::Display for ParseLlvmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not an LLVM release: give its major number (\"22\"), \"llvm-22\" or \
             \"clang-22\" (kfdo is tested with {})",
            self.0,
            Llvm::KNOWN
                .iter()
                .map(|l| l.major.to_string())
                .collect::<Vec<_>>()
                .join(" and ")
        )
    }
}

impl std::error::Error for ParseLlvmError {}

impl Llvm {
    /// The release a run uses when nothing names one.
    pub const DEFAULT: Llvm = Llvm { major: 19 };
    /// The releases kfdo's tests prove it against, oldest first.
    pub const KNOWN: [Llvm; 2] = [Llvm { major: 19 }, Llvm { major: 22 }];

    pub const fn new(major: u32) -> Llvm {
        Llvm { major }
    }

    /// `22`, `llvm-22` or `clang-22`.
    pub fn parse(text: &str) -> Result<Llvm, ParseLlvmError> {
        let t = text.trim();
        let number = t
            .strip_prefix("llvm-")
            .or_else(|| t.strip_prefix("clang-"))
            .unwrap_or(t);
        match number.parse::<u32>() {
            // Release numbers start at 1; clang's first with the tools kfdo runs is far later.
            Ok(major) if major > 0 => Ok(Llvm { major }),
            _ => Err(ParseLlvmError(text.to_string())),
        }
    }

    /// Whether kfdo's tests cover this release ([`Llvm::KNOWN`]).
    pub fn is_known(self) -> bool {
        Llvm::KNOWN.contains(&self)
    }

    /// `NAME-N`, the name Debian links on PATH for this release's tool `name`.
    pub fn tool(self, name: &str) -> String {
        format!("{name}-{}", self.major)
    }

    /// The release's own directory of tools, `/usr/lib/llvm-N/bin`.
    pub fn bin_dir(self) -> PathBuf {
        PathBuf::from(format!("/usr/lib/llvm-{}/bin", self.major))
    }

    pub fn clang(self) -> String {
        self.tool("clang")
    }

    pub fn clangxx(self) -> String {
        self.tool("clang++")
    }

    pub fn lld(self) -> String {
        self.tool("ld.lld")
    }

    pub fn profgen(self) -> String {
        self.tool("llvm-profgen")
    }

    pub fn profdata(self) -> String {
        self.tool("llvm-profdata")
    }

    pub fn objcopy(self) -> String {
        self.tool("llvm-objcopy")
    }

    pub fn readobj(self) -> String {
        self.tool("llvm-readobj")
    }

    pub fn bolt(self) -> String {
        self.tool("llvm-bolt")
    }

    /// perf2bolt by its path in the release's directory: the BOLT binary picks its mode
    /// from the name it was started by, and the PATH link `perf2bolt-N` is not
    /// `perf2bolt`.
    pub fn perf2bolt(self) -> PathBuf {
        self.bin_dir().join("perf2bolt")
    }

    /// LLVM's plugin for the GNU linkers (Debian: `llvm-N-linker-tools`).
    pub fn gold_plugin(self) -> PathBuf {
        PathBuf::from(format!("/usr/lib/llvm-{}/lib/LLVMgold.so", self.major))
    }

    /// kbuild's `LLVM=` value for this release: the version suffix form, `-22`.
    pub fn kbuild_llvm(self) -> String {
        format!("-{}", self.major)
    }

    /// The Debian packages that install this release's tools kfdo runs.
    pub fn packages(self) -> Vec<String> {
        ["clang", "lld", "llvm", "bolt", "libclang-rt", "llvm"]
            .iter()
            .zip(["", "", "", "", "-dev", "-linker-tools"])
            .map(|(p, tail)| format!("{p}-{}{tail}", self.major))
            .collect()
    }
}

impl Default for Llvm {
    fn default() -> Llvm {
        Llvm::DEFAULT
    }
}

impl fmt::Display for Llvm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LLVM {}", self.major)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_spellings_and_refuses_the_rest() {
        for t in ["22", "llvm-22", "clang-22", " 22 "] {
            assert_eq!(Llvm::parse(t), Ok(Llvm::new(22)), "{t}");
        }
        for t in ["", "0", "llvm", "gcc-12", "clang-", "22.1", "x22"] {
            let e = Llvm::parse(t).unwrap_err();
            assert!(e.to_string().contains("19 and 22"), "{e}");
        }
    }

    #[test]
    fn every_tool_comes_from_the_same_release() {
        let l = Llvm::new(22);
        assert_eq!(l.clang(), "clang-22");
        assert_eq!(l.clangxx(), "clang++-22");
        assert_eq!(l.lld(), "ld.lld-22");
        assert_eq!(l.profgen(), "llvm-profgen-22");
        assert_eq!(l.profdata(), "llvm-profdata-22");
        assert_eq!(l.bolt(), "llvm-bolt-22");
        assert_eq!(
            l.perf2bolt(),
            PathBuf::from("/usr/lib/llvm-22/bin/perf2bolt")
        );
        assert_eq!(l.kbuild_llvm(), "-22");
        assert_eq!(
            l.gold_plugin(),
            PathBuf::from("/usr/lib/llvm-22/lib/LLVMgold.so")
        );
        assert!(l.packages().contains(&"llvm-22-linker-tools".to_string()));
        assert!(l.packages().contains(&"libclang-rt-22-dev".to_string()));
        assert_eq!(Llvm::default().major, 19);
        assert!(Llvm::new(22).is_known() && !Llvm::new(20).is_known());
    }
}
