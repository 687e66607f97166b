//! `kfdo profile --format gcov`: which GCC release the profile is for: the one
//! `--gcc-version` names, else the one that built the binary (its DWARF producer),
//! else the `gcc` on PATH.

use std::process::Command;

use kfdo_afdo::GcovVersion;

use crate::error::ProfileError;
use crate::outcome::{GccRelease, GccSource};

/// The layout for GCC release `gcc_version`, else for the GCC that built `bin`, else
/// for the `gcc` on PATH: the file's version must be the one the compiler that reads
/// it expects, or it refuses the profile.
pub(crate) fn gcov_version(
    gcc_version: Option<u32>,
    bin: &kfdo_elf::Binary,
) -> Result<(GcovVersion, GccRelease), ProfileError> {
    let release = match gcc_version {
        Some(major) => GccRelease {
            major,
            source: GccSource::Option,
            detail: format!("--gcc-version {major}"),
        },
        None => match gcc_of_binary(&kfdo_elf::producers(bin)?) {
            Some(r) => r,
            None => {
                let major = gcc_major_on_path()?;
                GccRelease {
                    major,
                    source: GccSource::Path,
                    detail: format!(
                        "{} names no GCC in its DWARF; `gcc --version` says {major}",
                        bin.path().display()
                    ),
                }
            }
        },
    };
    let version = GcovVersion::for_gcc(release.major).map_err(|e| match release.source {
        GccSource::Option => ProfileError::Request(e),
        _ => ProfileError::Request(format!("{e}; kfdo chose {release}")),
    })?;
    Ok((version, release))
}

/// The GCC release that built most of the compile units `producers` describe, if any
/// was built by GCC.
fn gcc_of_binary(producers: &[String]) -> Option<GccRelease> {
    let mut units: std::collections::BTreeMap<u32, (usize, &str)> = Default::default();
    for p in producers {
        if let Some(major) = kfdo_elf::gcc_major_of_producer(p) {
            units.entry(major).or_insert((0, p)).0 += 1;
        }
    }
    // Most units first; among equals, the newer release.
    let (&major, &(n, producer)) = units.iter().max_by_key(|(m, (n, _))| (*n, **m))?;
    let mut detail = format!("\"{producer}\"");
    if units.len() > 1 {
        let others: Vec<String> = units
            .iter()
            .filter(|(m, _)| **m != major)
            .map(|(m, (k, _))| format!("GCC {m} in {k}"))
            .collect();
        detail += &format!(
            " in {n} compile units; also {} (give --gcc-version to choose)",
            others.join(", ")
        );
    }
    Some(GccRelease {
        major,
        source: GccSource::Binary,
        detail,
    })
}

/// The major version of `gcc --version` (its first line ends with the
/// version, e.g. "gcc (Debian 12.2.0-14) 12.2.0").
pub fn gcc_major_on_path() -> Result<u32, ProfileError> {
    gcc_major_of("gcc")
}

/// The major version of `gcc --version`, `gcc` being a command name or path.
fn gcc_major_of(gcc: &str) -> Result<u32, ProfileError> {
    let no_gcc = |why: String| {
        format!(
            "--format gcov needs the GCC release the profile is for: {why}; \
             give --gcc-version 11 or 12"
        )
    };
    let out = Command::new(gcc)
        .arg("--version")
        .output()
        .map_err(|source| ProfileError::RequestIo {
            message: no_gcc(format!("cannot run gcc ({source})")),
            source,
        })?;
    if !out.status.success() {
        return Err(ProfileError::Request(no_gcc(format!(
            "`gcc --version` failed ({})",
            out.status
        ))));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    parse_gcc_major(&text).ok_or_else(|| {
        ProfileError::Request(no_gcc(format!(
            "cannot read a version in `gcc --version`: {text:?}"
        )))
    })
}

/// The major version in `gcc --version`'s first line: its last word, as
/// `MAJOR.MINOR.PATCH`. A clang posing as gcc says "clang" and is refused.
fn parse_gcc_major(text: &str) -> Option<u32> {
    let first = text.lines().next()?;
    if first.contains("clang") {
        return None;
    }
    let last = first.split_whitespace().last()?;
    last.split('.').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{gcc_major_of, gcc_of_binary, parse_gcc_major};
    use crate::error::ProfileError;
    use crate::outcome::GccSource;

    #[test]
    fn the_release_that_built_most_units_is_chosen() {
        let p = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let r = gcc_of_binary(&p(&["GNU AS 2.40", "GNU C17 11.3.0 -O2 -g"])).unwrap();
        assert_eq!((r.major, r.source), (11, GccSource::Binary));
        assert_eq!(r.detail, "\"GNU C17 11.3.0 -O2 -g\"");
        let r = gcc_of_binary(&p(&[
            "GNU C17 12.2.0 -O2",
            "GNU C17 11.3.0 -O2",
            "GNU C++17 11.3.0 -O2",
        ]))
        .unwrap();
        assert_eq!(r.major, 11);
        assert!(r.detail.contains("also GCC 12 in 1"), "{}", r.detail);
        assert_eq!(gcc_of_binary(&p(&["Debian clang version 19.1.7"])), None);
        assert_eq!(gcc_of_binary(&[]), None);
    }

    #[test]
    fn gcc_version_lines() {
        assert_eq!(
            parse_gcc_major("gcc (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright"),
            Some(12)
        );
        assert_eq!(
            parse_gcc_major("gcc-11 (Debian 11.3.0-12) 11.3.0\n"),
            Some(11)
        );
        assert_eq!(parse_gcc_major("Apple clang version 15.0.0\n"), None);
        assert_eq!(parse_gcc_major(""), None);
    }

    /// A gcc that cannot be run is reported with the system's error as the source.
    #[test]
    fn missing_gcc_keeps_its_cause() {
        let e = gcc_major_of("/nonexistent/kfdo-test/gcc").unwrap_err();
        assert!(matches!(e, ProfileError::RequestIo { .. }), "{e:?}");
        let source = std::error::Error::source(&e).expect("the io error as source");
        assert!(e.to_string().contains(&source.to_string()), "{e}");
        assert!(e.to_string().contains("--gcc-version"), "{e}");
    }
}
