//! The output directory of `kfdo optimize` is kfdo's alone: a run replaces the files it
//! wrote before and empties folders such as `bench/` and `report/`, so it takes a new or
//! empty directory, or one an earlier run marked as its own, and refuses any other
//! before any work.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The file that marks a directory as `kfdo optimize`'s output, written before anything
/// else goes there.
pub const MARKER: &str = ".kfdo-optimize-output";

/// The step records of the step cache (`engine`'s state): an output made before the
/// marker existed has them, and is taken as kfdo's own.
const LEGACY_STATE: &str = ".kfdo/steps";

/// Creates `out` (or takes it as it is when kfdo made it), marks it as kfdo's, and
/// returns it absolute. `recipe` is the recipe file, which must not lie inside it.
pub fn claim(out: &Path, recipe: &Path) -> anyhow::Result<PathBuf> {
    if out.exists() && !out.is_dir() {
        anyhow::bail!(
            "the output directory {} is a file: give -o a directory (a new one, or an \
             earlier kfdo optimize output)",
            out.display()
        );
    }
    if let (Ok(o), Ok(r)) = (std::fs::canonicalize(out), std::fs::canonicalize(recipe)) {
        if r.starts_with(&o) {
            anyhow::bail!(
                "the output directory {} holds the recipe {}: kfdo optimize replaces and \
                 deletes files in its output directory; give -o a directory of its own",
                out.display(),
                recipe.display()
            );
        }
    }
    if out.is_dir() && !is_kfdos(out) {
        let held = entries(out)?;
        if !held.is_empty() {
            anyhow::bail!(
                "the output directory {} already holds {} that kfdo optimize did not write \
                 ({}{}): a run replaces and deletes files in its output directory, so it \
                 takes only a new or empty directory or an earlier run's output (marked by \
                 {MARKER}); give -o another directory, or move those files away",
                out.display(),
                match held.len() {
                    1 => "an entry".to_string(),
                    n => format!("{n} entries"),
                },
                held.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
                if held.len() > 5 { ", ..." } else { "" }
            );
        }
    }
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create the output directory {}", out.display()))?;
    let marker = out.join(MARKER);
    if !marker.exists() {
        std::fs::write(
            &marker,
            "This directory is the output of `kfdo optimize`: each run replaces and deletes \
             files in it.\n",
        )
        .with_context(|| format!("cannot write {}", marker.display()))?;
    }
    Ok(std::fs::canonicalize(out)?)
}

/// Whether `dir` is an output of `kfdo optimize`: marked, or holding the step records of
/// a run made before the mark.
fn is_kfdos(dir: &Path) -> bool {
    dir.join(MARKER).is_file() || has_step_records(&dir.join(LEGACY_STATE))
}

fn has_step_records(state: &Path) -> bool {
    std::fs::read_dir(state).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "json"))
    })
}

/// The names in `dir`, sorted, a folder with a trailing `/`.
fn entries(dir: &Path) -> anyhow::Result<Vec<String>> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let e = e.with_context(|| format!("cannot list {}", dir.display()))?;
        let mut name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            name.push('/');
        }
        names.push(name);
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recipe(dir: &Path) -> PathBuf {
        let r = dir.join("recipe.toml");
        std::fs::write(&r, "name = \"x\"\n").unwrap();
        r
    }

    #[test]
    fn a_new_or_empty_directory_is_claimed_and_marked() {
        let d = tempfile::tempdir().unwrap();
        let r = recipe(d.path());
        for out in [d.path().join("new/out"), d.path().join("empty")] {
            if out.ends_with("empty") {
                std::fs::create_dir(&out).unwrap();
            }
            let got = claim(&out, &r).unwrap();
            assert!(got.is_absolute());
            assert!(out.join(MARKER).is_file());
            // A second run reuses it.
            std::fs::write(out.join("summary.md"), "old").unwrap();
            claim(&out, &r).unwrap();
        }
    }

    #[test]
    fn a_users_directory_is_refused_and_left_as_it_was() {
        let d = tempfile::tempdir().unwrap();
        let r = recipe(d.path());
        let out = d.path().join("mine");
        std::fs::create_dir_all(out.join("bench")).unwrap();
        std::fs::write(out.join("summary.md"), "my notes").unwrap();
        std::fs::write(out.join("bench/keep.txt"), "keep").unwrap();
        let e = claim(&out, &r).unwrap_err().to_string();
        assert!(e.contains(&out.display().to_string()), "{e}");
        assert!(
            e.contains("2 entries that kfdo optimize did not write (bench/, summary.md)"),
            "{e}"
        );
        assert!(e.contains("give -o another directory"), "{e}");
        assert!(!out.join(MARKER).exists());
        assert_eq!(
            std::fs::read_to_string(out.join("summary.md")).unwrap(),
            "my notes"
        );
    }

    #[test]
    fn an_output_made_before_the_marker_is_kfdos() {
        let d = tempfile::tempdir().unwrap();
        let r = recipe(d.path());
        let out = d.path().join("old");
        std::fs::create_dir_all(out.join(".kfdo/steps")).unwrap();
        std::fs::write(out.join(".kfdo/steps/build-baseline.json"), "{}").unwrap();
        std::fs::write(out.join("summary.md"), "old").unwrap();
        claim(&out, &r).unwrap();
        assert!(out.join(MARKER).is_file());
    }

    #[test]
    fn a_directory_holding_the_recipe_or_a_file_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let r = recipe(d.path());
        let e = claim(d.path(), &r).unwrap_err().to_string();
        assert!(e.contains("holds the recipe"), "{e}");
        let e = claim(&r, &r).unwrap_err().to_string();
        assert!(e.contains("is a file"), "{e}");
    }
}
