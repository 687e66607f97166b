//! Which compiler built a binary: the `DW_AT_producer` of its compile units, e.g.
//! "GNU C17 11.3.0 -mtune=generic -O2 -g" (GCC) or "Debian clang version 19.1.7"
//! (clang). A GCC AutoFDO profile must carry the version of the GCC that reads it,
//! and the one that built the binary is the one that will rebuild it.

use gimli::constants as dw;

use super::ctx::DwarfCtx;
use crate::binary::Binary;
use crate::error::ElfError;

/// The `DW_AT_producer` of each compile unit that has one, in unit order; empty for
/// a binary without DWARF (stripped, or built without -g).
pub fn producers(bin: &Binary) -> Result<Vec<String>, ElfError> {
    let ctx = DwarfCtx::load(bin)?;
    let mut out = Vec::new();
    for u in ctx.units.iter().filter(|u| u.is_compile) {
        let mut cursor = u.unit.entries();
        let Ok(Some((_, root))) = cursor.next_dfs() else {
            continue;
        };
        let Some(v) = root.attr_value(dw::DW_AT_producer).ok().flatten() else {
            continue;
        };
        if let Ok(s) = ctx.dwarf.attr_string(&u.unit, v) {
            out.push(String::from_utf8_lossy(s.slice()).into_owned());
        }
    }
    Ok(out)
}

/// The GCC major release in a GCC producer ("GNU C17 11.3.0 ...", "GNU C++17
/// 12.2.0 ...", "GNU GIMPLE 12.2.0 ..." for LTO); None for any other producer,
/// clang's included, and for the GNU assembler's ("GNU AS 2.40", a binutils
/// version, not GCC's).
pub fn gcc_major_of_producer(producer: &str) -> Option<u32> {
    let mut words = producer.split_whitespace();
    if words.next()? != "GNU" || words.next()? == "AS" {
        return None;
    }
    let version = words.next()?;
    let (major, rest) = version.split_once('.')?;
    if !rest.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    major.parse().ok()
}

/// The clang major release in a clang producer ("Debian clang version 19.1.7
/// (3+b1)", "clang version 17.0.6", "Ubuntu clang version 18.1.3"); None for any
/// other producer, rustc's ("clang LLVM (rustc version ...)") included.
pub fn clang_major_of_producer(producer: &str) -> Option<u32> {
    let (_, version) = producer.split_once("clang version ")?;
    let (major, rest) = version.split_once('.')?;
    if !rest.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    major.parse().ok()
}

/// A compiler release that built compile units of a binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Compiler {
    Gcc(u32),
    Clang(u32),
}

impl Compiler {
    /// The compiler's versioned command, as Debian installs it (`gcc-12`, `clang-19`).
    pub fn command(self) -> String {
        match self {
            Compiler::Gcc(major) => format!("gcc-{major}"),
            Compiler::Clang(major) => format!("clang-{major}"),
        }
    }
}

/// The compiler release that built most of the compile units `producers`
/// describe (among equals, the later in this order: clang before GCC, older
/// before newer); None when no unit names GCC or clang (no DWARF, or another
/// language's compiler).
pub fn compiler_of_producers(producers: &[String]) -> Option<Compiler> {
    let mut units: std::collections::BTreeMap<Compiler, usize> = Default::default();
    for p in producers {
        let c = gcc_major_of_producer(p)
            .map(Compiler::Gcc)
            .or_else(|| clang_major_of_producer(p).map(Compiler::Clang));
        if let Some(c) = c {
            *units.entry(c).or_default() += 1;
        }
    }
    units
        .into_iter()
        .max_by_key(|&(c, n)| (n, c))
        .map(|(c, _)| c)
}

#[cfg(test)]
mod tests {
    use super::{clang_major_of_producer, compiler_of_producers, gcc_major_of_producer, Compiler};

    #[test]
    fn gcc_producers_give_their_major_release() {
        let gcc = [
            ("GNU C17 11.3.0 -mtune=generic -march=x86-64 -g -O2", 11),
            ("GNU C++17 12.2.0 -mtune=generic -march=x86-64 -g -O2", 12),
            ("GNU C11 12.2.1 20230201 -O2 -g", 12),
            ("GNU GIMPLE 13.1.0 -mtune=generic -O2 -flto", 13),
        ];
        for (p, major) in gcc {
            assert_eq!(gcc_major_of_producer(p), Some(major), "{p}");
        }
    }

    #[test]
    fn other_producers_give_none() {
        for p in [
            "Debian clang version 19.1.7 (3+b1)",
            "clang version 17.0.6",
            "clang LLVM (rustc version 1.87.0)",
            "GNU AS 2.40",
            "GNU C17",
            "GNU C17 -O2",
            "GNU",
            "",
        ] {
            assert_eq!(gcc_major_of_producer(p), None, "{p:?}");
        }
    }

    #[test]
    fn clang_producers_give_their_major_release() {
        for (p, major) in [
            ("Debian clang version 19.1.7 (3+b1)", Some(19)),
            ("clang version 17.0.6", Some(17)),
            ("Ubuntu clang version 18.1.3 (1ubuntu1)", Some(18)),
            ("clang LLVM (rustc version 1.87.0)", None),
            ("GNU C17 12.2.0 -O2", None),
            ("clang version x.y", None),
        ] {
            assert_eq!(clang_major_of_producer(p), major, "{p}");
        }
    }

    #[test]
    fn the_compiler_of_most_units_built_the_binary() {
        let units = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            compiler_of_producers(&units(&[
                "GNU C17 12.2.0 -O2 -g",
                "GNU AS 2.40",
                "GNU AS 2.40",
                "GNU C17 12.2.0 -O2 -g",
                "Debian clang version 19.1.7",
            ])),
            Some(Compiler::Gcc(12))
        );
        assert_eq!(
            compiler_of_producers(&units(&["Debian clang version 19.1.7 (3+b1)"])),
            Some(Compiler::Clang(19))
        );
        assert_eq!(compiler_of_producers(&units(&["GNU AS 2.40"])), None);
        assert_eq!(compiler_of_producers(&[]), None);
        assert_eq!(Compiler::Gcc(12).command(), "gcc-12");
        assert_eq!(Compiler::Clang(19).command(), "clang-19");
    }
}
