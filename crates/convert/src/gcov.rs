//! `kfdo profile --format gcov`: which GCC release the profile is for.

use std::process::Command;

use kfdo_afdo::GcovVersion;

use crate::error::ProfileError;

/// The layout for GCC release `gcc_version`, or for the `gcc` on PATH when
/// none is given: the file's version must be the one that compiler reads, or
/// it refuses the profile.
pub(crate) fn gcov_version(gcc_version: Option<u32>) -> Result<GcovVersion, ProfileError> {
    let major = match gcc_version {
        Some(v) => v,
        None => gcc_major_on_path()?,
    };
    GcovVersion::for_gcc(major).map_err(ProfileError::Request)
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
    use super::{gcc_major_of, parse_gcc_major};
    use crate::error::ProfileError;

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
