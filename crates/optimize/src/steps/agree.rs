//! Whether kfdo's AutoFDO profile and llvm-profgen's say the same, in words: a note
//! both pipelines put in their summary.

use std::path::Path;

/// The name a tool is known by: the file name of its path (`llvm-profgen-22`).
pub fn tool_name(path: &str) -> &str {
    Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(path)
}

/// Whether the two profiles are equal, and the summary's note saying so.
pub struct Agreement {
    /// Equal profiles: autofdo and autofdo-llvm-profgen are the same build, so the
    /// summary does not weigh their times against each other.
    pub equal: bool,
    pub note: String,
}

/// Says whether kfdo's profile equals the one `profgen_name` (the llvm-profgen that
/// ran: `llvm-profgen-22`) made of the same perf.data, and if not, how many
/// functions differ.
pub fn profiles_agree(kfdo: &Path, profgen: &Path, profgen_name: &str) -> String {
    agreement(kfdo, profgen, profgen_name).note
}

/// [`profiles_agree`]'s note, with whether the profiles are equal.
pub fn agreement(kfdo: &Path, profgen: &Path, profgen_name: &str) -> Agreement {
    let read = |p: &Path| kfdo_afdo::read_profile(p).map_err(|e| e.to_string());
    let note = match (read(kfdo), read(profgen)) {
        (Ok(a), Ok(b)) if a == b => {
            return Agreement {
                equal: true,
                note: format!(
                    "kfdo's profile equals {profgen_name}'s ({} functions), so autofdo and \
                     autofdo-llvm-profgen are the same build up to timing noise",
                    a.functions.len()
                ),
            }
        }
        (Ok(a), Ok(b)) => {
            let names: std::collections::BTreeSet<&String> =
                a.functions.keys().chain(b.functions.keys()).collect();
            let differ = names
                .iter()
                .filter(|n| a.functions.get(**n) != b.functions.get(**n))
                .count();
            format!(
                "kfdo's profile differs from {profgen_name}'s in {differ} of {} functions \
                 ({:.1} % of the functions equal)",
                names.len(),
                100.0 * (names.len() - differ) as f64 / names.len().max(1) as f64
            )
        }
        (Err(e), _) | (_, Err(e)) => format!("the two profiles could not be compared: {e}"),
    };
    Agreement { equal: false, note }
}
