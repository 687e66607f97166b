//! Building a test program with clang: the one way the CLI tests compile their C and C++
//! fixtures. The command line is the arguments given, in the order given (the tests
//! compare against reference tools run on the same binaries, so each build's flags are
//! its own and nothing is added), and a failed build fails the test with clang's output.
//!
//! ```ignore
//! Clang::new().flags(["-O1", "-g"]).out(&bin).input(&src).run();
//! ```

use super::{program_source, run_ok, CFLAGS};
use kfdo_toolchain::Llvm;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

/// One clang command, built up argument by argument.
pub struct Clang {
    cmd: Command,
}

impl Clang {
    /// clang-19, the release the tests' reference tools come from.
    pub fn new() -> Clang {
        Clang::named(Llvm::DEFAULT.clang())
    }

    /// `llvm`'s clang for `source`: clang++ for a `.cpp` file.
    pub fn for_source(llvm: Llvm, source: &str) -> Clang {
        Clang::named(clang_for(llvm, source))
    }

    /// The compiler `program` (a name on PATH, such as `clang-22`).
    pub fn named(program: impl AsRef<OsStr>) -> Clang {
        Clang {
            cmd: Command::new(program),
        }
    }

    /// Options, in order (`-O2`, `-g`, `-fbasic-block-address-map`, `-Wl,...`, `-lm`).
    pub fn flags<S: AsRef<OsStr>>(mut self, flags: impl IntoIterator<Item = S>) -> Clang {
        self.cmd.args(flags);
        self
    }

    /// One option.
    pub fn flag(self, flag: impl AsRef<OsStr>) -> Clang {
        self.flags([flag])
    }

    /// The test programs' options, [`CFLAGS`] (`-O2 -g` and the profiling debug info).
    pub fn cflags(self) -> Clang {
        self.flags(CFLAGS)
    }

    /// `-o out`.
    pub fn out(self, out: impl AsRef<OsStr>) -> Clang {
        self.flag("-o").flag(out)
    }

    /// An input file (a source, an object); a relative path is read from the directory
    /// the build runs in.
    pub fn input(self, file: impl AsRef<OsStr>) -> Clang {
        self.flag(file)
    }

    /// A program of `testdata/programs` as the input.
    pub fn program(self, name: &str) -> Clang {
        self.input(program_source(name))
    }

    /// Runs the build in `dir`.
    pub fn in_dir(mut self, dir: &Path) -> Clang {
        self.cmd.current_dir(dir);
        self
    }

    /// Builds; the test fails, showing clang's messages, if the build does.
    pub fn run(mut self) -> Output {
        run_ok(&mut self.cmd)
    }

    /// Starts the build, for builds run side by side; the caller waits for it.
    pub fn spawn(mut self) -> Child {
        self.cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{:?}: cannot start: {e}", self.cmd))
    }
}

impl Default for Clang {
    fn default() -> Clang {
        Clang::new()
    }
}

/// The clang of `llvm` that compiles `source` (C or C++ by extension).
fn clang_for(llvm: Llvm, source: &str) -> String {
    if source.ends_with(".cpp") {
        llvm.clangxx()
    } else {
        llvm.clang()
    }
}

/// Compiles the test program `source` (C or C++ by extension, from `testdata/programs`)
/// with `llvm`'s clang and [`CFLAGS`], then `extra`, into `dir`, named after its stem.
pub fn build_with(llvm: Llvm, source: &str, dir: &Path, extra: &[&str]) -> PathBuf {
    let stem = Path::new(source).file_stem().unwrap().to_str().unwrap();
    let out = dir.join(stem);
    Clang::for_source(llvm, source)
        .cflags()
        .flags(extra)
        .out(&out)
        .program(source)
        .run();
    out
}

/// [`build_with`] clang-19.
pub fn build(source: &str, dir: &Path, extra: &[&str]) -> PathBuf {
    build_with(Llvm::DEFAULT, source, dir, extra)
}
