//! The repository's shell scripts that steps run, embedded so that an installed kfdo
//! needs no checkout: written under `OUT/.kfdo/scripts/` with their layout (the fetchers
//! source `lib/`) before they run.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// (path relative to `scripts/`, content)
const SCRIPTS: &[(&str, &str)] = &[
    (
        "fetch-debian-source.sh",
        include_str!("../../../../scripts/fetch-debian-source.sh"),
    ),
    (
        "fetch-debian-binary.sh",
        include_str!("../../../../scripts/fetch-debian-binary.sh"),
    ),
    (
        "lib/isolated-apt.sh",
        include_str!("../../../../scripts/lib/isolated-apt.sh"),
    ),
];

/// The content of `name` and of what it sources (for step keys).
pub fn identity(name: &str) -> String {
    SCRIPTS
        .iter()
        .filter(|(n, _)| *n == name || n.starts_with("lib/"))
        .map(|(n, c)| format!("{n}\n{c}"))
        .collect()
}

/// Writes every script under `out/.kfdo/scripts` and returns the path of `name`.
pub fn write(out: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let dir = out.join(".kfdo/scripts");
    for (n, content) in SCRIPTS {
        let p = dir.join(n);
        std::fs::create_dir_all(p.parent().unwrap())
            .with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::write(&p, content).with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(dir.join(name))
}
