//! A stripped binary, refused before any input is read: kfdo (like llvm-profgen)
//! finds the binary's instructions through its `.symtab` symbols, so without them no
//! sample falls in its code, and the count of samples that missed would not say why.

use kfdo_elf::{Binary, Code};

use crate::error::ProfileError;
use crate::request::OutputFormat;

/// Fails when `bin` has no symbol in its code (no `.symtab`), naming what was
/// stripped and what to profile instead; `format` says whether DWARF is needed too.
pub(crate) fn check_symbols(bin: &Binary, format: OutputFormat) -> Result<(), ProfileError> {
    if Code::symbols_to_decode(bin) > 0 {
        return Ok(());
    }
    Err(ProfileError::Request(message(
        &bin.path().display().to_string(),
        bin.has_debug_info(),
        bin.gnu_debuglink(),
        format,
    )))
}

fn message(path: &str, dwarf: bool, debuglink: Option<&str>, format: OutputFormat) -> String {
    let autofdo = matches!(
        format,
        OutputFormat::Text | OutputFormat::Extbinary | OutputFormat::Gcov
    );
    let what = if dwarf {
        "no symbol table (.symtab)"
    } else {
        "no symbol table (.symtab) and no DWARF"
    };
    let why = match debuglink {
        Some(link) if !dwarf => format!(
            "they were moved to a separate debug file (.gnu_debuglink -> {link}), which kfdo \
             does not read yet"
        ),
        _ => "it was stripped (strip -s)".to_string(),
    };
    // Stripping keeps the build-id, so the recording of the stripped binary matches
    // the unstripped one.
    let fix = "profile the unstripped binary (the same build before strip: recordings of the \
               stripped one match it by build-id)";
    let keep = if autofdo {
        "; a sample profile needs the DWARF too: build with -g and do not strip it"
    } else {
        ", or keep the symbols with `strip --strip-debug` instead of `strip -s`"
    };
    format!("{path} has {what}: {why}, so no sample can be placed in its code; {fix}{keep}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_what_was_stripped_and_what_to_profile() {
        let m = message("/b/prog", false, None, OutputFormat::Unsymbolized);
        assert_eq!(
            m,
            "/b/prog has no symbol table (.symtab) and no DWARF: it was stripped (strip -s), so \
             no sample can be placed in its code; profile the unstripped binary (the same build \
             before strip: recordings of the stripped one match it by build-id), or keep the \
             symbols with `strip --strip-debug` instead of `strip -s`"
        );
        let m = message("/b/prog", false, None, OutputFormat::Extbinary);
        assert!(
            m.ends_with("a sample profile needs the DWARF too: build with -g and do not strip it")
        );
        let m = message("/b/prog", true, None, OutputFormat::Unsymbolized);
        assert!(m.starts_with("/b/prog has no symbol table (.symtab): it was stripped"));
        let m = message(
            "/b/lib.so",
            false,
            Some("lib.so.debug"),
            OutputFormat::Unsymbolized,
        );
        assert!(
            m.contains("separate debug file (.gnu_debuglink -> lib.so.debug)"),
            "{m}"
        );
    }
}
