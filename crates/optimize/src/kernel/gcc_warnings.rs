//! What GCC said, during a profiled kernel build, about the profile it read: each kind of
//! warning counted once per build, for the summary. A profile that does not fit shows up
//! here and nowhere else (GCC builds on without it), so the counts are part of the verdict.

use std::path::Path;

/// The warnings that say a profile was not used in full, and what each one means.
const KINDS: &[(&str, &str)] = &[
    (
        "[-Wmissing-profile]",
        "objects without counts (not instrumented: kbuild leaves GCOV_PROFILE := n objects \
         out, such as the boot code and vDSO), built as if never run",
    ),
    (
        "[-Wcoverage-mismatch]",
        "functions whose code differs from the instrumented build's (the gcov and debugfs \
         hooks change them), built without their counts",
    ),
];

/// The notes of variant `variant`'s build log `log` (none when GCC said nothing).
pub fn notes(variant: &str, log: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(log) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (tag, meaning) in KINDS {
        let n = text.lines().filter(|l| l.contains(tag)).count();
        if n > 0 {
            out.push(format!(
                "{variant}: gcc gave {n} {tag} warnings: {meaning} (see {})",
                log.display()
            ));
        }
    }
    out.extend(
        crate::steps::gcc_note::gcc_autofdo_note(log).map(|n| n.replacen("autofdo", variant, 1)),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_counted_by_kind() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("build.log");
        std::fs::write(
            &log,
            "  CC      kernel/fork.o\n\
             ../kernel/fork.c:9:1: warning: '/p/kernel#fork.gcda' profile count data file not found [-Wmissing-profile]\n\
             ../mm/a.c:3:1: warning: control flow checksum for function 'f' does not match its profile data [-Wcoverage-mismatch]\n\
             ../mm/b.c:3:1: warning: number of counters in profile data for function 'g' does not match [-Wcoverage-mismatch]\n",
        )
        .unwrap();
        let notes = notes("ifdo", &log);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].starts_with("ifdo: gcc gave 1 [-Wmissing-profile] warnings"));
        assert!(notes[1].starts_with("ifdo: gcc gave 2 [-Wcoverage-mismatch] warnings"));
        std::fs::write(&log, "  CC      kernel/fork.o\n").unwrap();
        assert!(super::notes("ifdo", &log).is_empty());
    }
}
