//! What GCC's AutoFDO pass warns in a build log, in words: program and kernel
//! builds read the same warning.

use std::path::Path;

/// What GCC said about the AutoFDO build, in words, from its log: the warning its
/// AutoFDO pass gives for a location more than 65535 lines from the start of the
/// function it is inlined into (it keeps line offsets in 16 bits), which no profile can
/// avoid: such code goes unannotated. Big amalgamations (sqlite3.c) have many.
pub fn gcc_autofdo_note(log: &Path) -> Option<String> {
    let text = std::fs::read_to_string(log).ok()?;
    let n = text
        .lines()
        .filter(|l| l.contains("warning: offset exceeds 16 bytes"))
        .count();
    (n > 0).then(|| {
        format!(
            "autofdo: gcc warned {n} times \"offset exceeds 16 bytes\" (-Woverflow): its AutoFDO \
             pass keeps a line's offset from its function's first line in 16 bits, so code \
             inlined from more than 65535 lines away is not annotated, whatever the profile \
             (see {})",
            log.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gccs_16_bit_offset_warnings_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("build-autofdo.log");
        std::fs::write(
            &log,
            "x.c:9:1: warning: offset exceeds 16 bytes [-Woverflow]\nok\n\
            x.c:9:2: warning: offset exceeds 16 bytes [-Woverflow]\n",
        )
        .unwrap();
        let note = gcc_autofdo_note(&log).unwrap();
        assert!(
            note.contains("warned 2 times") && note.contains("build-autofdo.log"),
            "{note}"
        );
        std::fs::write(&log, "clean\n").unwrap();
        assert_eq!(gcc_autofdo_note(&log), None);
    }
}
