//! What program and kernel recipes share: reading and parsing the TOML file (errors
//! name the file and where the format is described), the names of tables and
//! directories, and quoting a path for a recipe's shell commands.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// Whether `s` can name a directory and a benchmark: letters, digits and `. _ + -`.
pub fn name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c))
}

/// Every `[[TABLE]]` named with [`name_ok`] characters, no name twice.
pub fn check_table_names<'a>(
    table: &str,
    names: impl IntoIterator<Item = &'a str>,
) -> anyhow::Result<()> {
    let mut seen: Vec<&str> = Vec::new();
    for (i, n) in names.into_iter().enumerate() {
        if !name_ok(n) {
            bail!(
                "[[{table}]] {}: name = {n:?}: use letters, digits and . _ + - only",
                i + 1
            );
        }
        if seen.contains(&n) {
            bail!("two [[{table}]] tables are named {n:?}");
        }
        seen.push(n);
    }
    Ok(())
}

/// A recipe file's text; the error names the file and where the bundled ones are.
pub fn read_text(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        anyhow::anyhow!(
            "cannot read recipe {}: {e} (bundled recipes are in recipes/*/recipe.toml)",
            path.display()
        )
    })
}

/// A recipe of type `T` parsed from `text`, the content of `path`, with the file's
/// canonical path and directory.
pub fn parse_text<T: serde::de::DeserializeOwned>(
    path: &Path,
    text: &str,
    what: &str,
) -> anyhow::Result<(T, PathBuf, PathBuf)> {
    let r: T = toml::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "{what} {}: {}(the format is described in recipes/README.md)",
            path.display(),
            e.to_string().replace("TOML parse error at ", "")
        )
    })?;
    let canonical = std::fs::canonicalize(path)
        .with_context(|| format!("cannot resolve {}", path.display()))?;
    let dir = canonical.parent().unwrap_or(Path::new("/")).to_path_buf();
    Ok((r, canonical, dir))
}

/// `p` quoted for a shell command line.
pub fn quote(p: &Path) -> String {
    shell_words::quote(&p.to_string_lossy()).into_owned()
}
