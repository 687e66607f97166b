//! The layout steps of the Propeller and BOLT variants that are not compiles: BOLT
//! rewriting a linked program with kfdo's fdata (the run's `llvm-bolt-N`), and reading back
//! what the tools said about the profiles (lld's symbol-ordering warnings, BOLT's),
//! so they reach the progress output and the summary instead of staying in a log.

use std::path::Path;
use std::process::Command;

use kfdo_toolchain::Llvm;

use super::compile::Built;
use super::ctx::Ctx;
use super::flags::BOLT_OPTIONS;
use crate::steps::cache::Key;
use crate::steps::exec::Stdout;
use crate::steps::fresh_dir;
use crate::steps::ProfileFile;
use crate::vocabulary::Variant;

/// How many of a tool's warnings the progress output and the summary quote.
pub const QUOTED_WARNINGS: usize = 5;

/// `llvm-bolt-N --version` of the run's LLVM release, for keys; an error that says how
/// to get it.
pub fn bolt_identity(llvm: Llvm) -> anyhow::Result<String> {
    let bolt = llvm.bolt();
    crate::steps::tool_identity(&[&bolt]).map_err(|e| {
        anyhow::anyhow!(
            "the BOLT variants need {bolt}: {e:#} (Debian: apt-get install bolt-{}, which \
             bash scripts/install-deps.sh does)",
            llvm.major
        )
    })
}

impl Ctx {
    /// `variant` (a BOLT variant): the run's `llvm-bolt-N` rewrites `base` (linked with
    /// `--emit-relocs`) with the fdata `profile`, into `build/VARIANT/BINARY`. Keyed by
    /// the input program's and the profile's content, BOLT's options and its version.
    pub fn bolt(
        &self,
        base: &Built,
        profile: &ProfileFile,
        variant: Variant,
        bolt_id: &str,
    ) -> anyhow::Result<Built> {
        let r = self.recipe();
        let label = variant.name();
        let dir = self.dir(&format!("build/{label}"));
        let binary = dir.join(&r.build.binary);
        let step = format!("build {label}");
        let bolt = self.opts.llvm().bolt();
        let key = Key::new("bolt")
            .add("binary", &base.hash)
            .add("fdata", &profile.hash)
            .add("options", BOLT_OPTIONS.join(" "))
            .add("tool", bolt_id)
            .finish();
        let done = self.step(&step, key, std::slice::from_ref(&binary), |log| {
            fresh_dir(&dir)?;
            if let Some(parent) = binary.parent() {
                std::fs::create_dir_all(parent)?;
            }
            log.note(&format!(
                "BOLT rewrites {} ({}) with {}",
                base.binary.display(),
                base.label,
                profile.path.display()
            ));
            // BOLT reports on stdout and warns on stderr: both go to this step's log.
            log.run(
                Command::new(&bolt)
                    .arg(&base.binary)
                    .arg("-o")
                    .arg(&binary)
                    .arg(format!("-data={}", profile.path.display()))
                    .args(BOLT_OPTIONS),
                Stdout::Log,
            )?;
            if !binary.is_file() {
                return Err(log.fail(format!(
                    "{bolt} succeeded but did not write {}",
                    binary.display()
                )));
            }
            Ok(serde_json::json!({}))
        })?;
        Ok(Built {
            label: label.to_string(),
            hash: done.hash_of(&binary).to_string(),
            binary,
            cflags: base.cflags.clone(),
            ldflags: base.ldflags.clone(),
            postlink: format!(
                "{bolt} -data={} {}",
                profile.path.display(),
                BOLT_OPTIONS.join(" ")
            ),
        })
    }
}

/// What a warning about the layout or its profile mentions.
const ABOUT_LAYOUT: [&str; 9] = [
    "order",
    "profile",
    "basic-block",
    "basic block",
    "propeller",
    "stale",
    "fdata",
    "mismatch",
    "sample",
];

/// The lines of a step's log that a tool wrote as warnings about the layout: lld's,
/// clang's and BOLT's (`BOLT-WARNING`) warnings that name the symbol ordering, a
/// profile, basic-block sections or stale data (or one of `files`), and every
/// `BOLT-ERROR`. Others (an unused variable; BOLT dropping the debug info, which it
/// always does without `-update-debug-sections`) stay in the log.
pub fn layout_warnings(log: &Path, files: &[&Path]) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(log) else {
        return Vec::new();
    };
    let names: Vec<String> = files
        .iter()
        .filter_map(|f| f.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            if l.starts_with("BOLT-ERROR") {
                return true;
            }
            let lower = l.to_ascii_lowercase();
            (lower.contains("warning:") || l.starts_with("BOLT-WARNING"))
                && (ABOUT_LAYOUT.iter().any(|w| lower.contains(w))
                    || names.iter().any(|n| l.contains(n.as_str())))
        })
        .filter(|l| seen.insert(l.to_string()))
        .map(str::to_string)
        .collect()
}

/// lld's words when a symbol of the ordering file is, in its global symbol table, only
/// the undefined stand-in for a function that ThinLTO internalized.
const INTERNALIZED: &str = "unable to order undefined symbol";

/// What a reader needs to know about `warnings` that they do not say themselves.
pub fn explain_warnings(warnings: &[String]) -> Option<String> {
    let n = warnings.iter().filter(|w| w.contains(INTERNALIZED)).count();
    (n > 0).then(|| {
        format!(
            "lld's {n} \"{INTERNALIZED}\" warning(s) of a ThinLTO link name functions that \
             ThinLTO internalized: lld warns about the undefined global stand-in, and orders \
             the local definition all the same"
        )
    })
}

/// The warnings of `step` in words, for the progress output and the summary: the first
/// few lines and how many more there were; none when there were none.
pub fn quote_warnings(step: &str, warnings: &[String]) -> Vec<String> {
    let mut out: Vec<String> = warnings
        .iter()
        .take(QUOTED_WARNINGS)
        .map(|w| format!("{step}: {w}"))
        .collect();
    if warnings.len() > QUOTED_WARNINGS {
        out.push(format!(
            "{step}: {} more warning lines (see its log)",
            warnings.len() - QUOTED_WARNINGS
        ));
    }
    out
}

/// BOLT's own account of how much of the profile it could use: its
/// "... have non-empty execution profile" and stale-profile lines.
pub fn bolt_profile_lines(log: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(log) else {
        return Vec::new();
    };
    text.lines()
        .map(str::trim)
        .filter(|l| {
            l.starts_with("BOLT-INFO")
                && (l.contains("non-empty execution profile") || l.contains("stale"))
        })
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_about_the_layout_are_found_and_quoted() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("build.log");
        std::fs::write(
            &log,
            "# step: build propeller\n\
             # command: sh -c 'clang -Wl,--symbol-ordering-file=/o/p_ld_profile.txt'\n\
             ld.lld: warning: symbol ordering file: no such symbol: foo\n\
             ld.lld: warning: symbol ordering file: no such symbol: foo\n\
             ld.lld: warning: <internal>: unable to order undefined symbol: run\n\
             sqlite3.c:10:5: warning: unused variable 'x' [-Wunused-variable]\n\
             clang: warning: /o/p_cc_profile.txt: no such function bar\n\
             BOLT-WARNING: 3 collisions detected while hashing binary objects\n\
             BOLT-WARNING: debug info will be stripped from the binary. Use -update-debug-sections to keep it.\n\
             BOLT-WARNING: 2 stale functions in the profile\n\
             BOLT-ERROR: cannot rewrite\n\
             BOLT-INFO: 10 out of 20 functions in the binary (50.0%) have non-empty execution profile\n",
        )
        .unwrap();
        let w = layout_warnings(&log, &[Path::new("/o/p_cc_profile.txt")]);
        assert_eq!(
            w,
            [
                "ld.lld: warning: symbol ordering file: no such symbol: foo",
                "ld.lld: warning: <internal>: unable to order undefined symbol: run",
                "clang: warning: /o/p_cc_profile.txt: no such function bar",
                "BOLT-WARNING: 2 stale functions in the profile",
                "BOLT-ERROR: cannot rewrite",
            ]
        );
        assert_eq!(
            bolt_profile_lines(&log),
            ["BOLT-INFO: 10 out of 20 functions in the binary (50.0%) have non-empty execution profile"]
        );
        let many: Vec<String> = (0..8).map(|i| format!("w{i}")).collect();
        let q = quote_warnings("build bolt", &many);
        assert_eq!(q.len(), QUOTED_WARNINGS + 1);
        assert_eq!(q[0], "build bolt: w0");
        assert!(q[QUOTED_WARNINGS].contains("3 more warning lines"));
        assert!(quote_warnings("s", &[]).is_empty());
        assert!(explain_warnings(&w[..1]).is_none());
        assert!(explain_warnings(&w)
            .unwrap()
            .starts_with("lld's 1 \"unable to order undefined symbol\" warning(s)"));
    }
}
