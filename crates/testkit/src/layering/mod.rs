//! Keeps a crate's modules in the layers its docs describe, so an import cycle
//! cannot creep back in: each crate lists its modules bottom layer first in the
//! `# Layers` section of its crate doc, and its `layering` test checks every
//! `crate::` / `super::` path of every file under `src/` against that list. A module
//! may use modules in lower layers only; modules in one layer are independent of each
//! other.
//!
//! [`check`] checks the crate's top-level modules; [`check_folder`] checks the
//! modules inside one folder (`src/propeller/layout/*.rs`) against each other, as
//! sub-layers of the folder's module. The file that owns a folder (`lib.rs`,
//! `mod.rs`, or `x.rs` beside `x/`) sits above the folder's layers: it declares the
//! modules and may use all of them. [`check_crate`] runs both over every table of a
//! crate ([`FolderLayers`]), which `doc` reads from the crate doc (its format is
//! described there).
//!
//! A crate's whole test:
//!
//! ```no_run
//! #[test]
//! fn modules_only_use_lower_layers() {
//!     kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
//! }
//! ```

mod doc;
mod lex;
mod refs;
mod tables;

use std::path::{Path, PathBuf};

use refs::{references, Reference};
pub use tables::{
    assert_crate_layers, assert_documented_layers, check_crate, crate_doc_layers, FolderLayers,
};

/// Checks the top-level modules of the crate whose sources are `src_dir`:
/// `layers` lists them bottom first, `unchecked` names files (relative to
/// `src_dir`) above every layer that are not checked. Returns the violations,
/// each naming the file, the line, the import and the two layers.
pub fn check(src_dir: &Path, layers: &[&[&str]], unchecked: &[&str]) -> Result<(), Vec<String>> {
    check_folder(src_dir, "", layers, unchecked)
}

/// As [`check`], for the modules in `src_dir/folder` (`folder` as
/// `propeller/layout`; empty for the crate root) against each other.
pub fn check_folder(
    src_dir: &Path,
    folder: &str,
    layers: &[&[&str]],
    unchecked: &[&str],
) -> Result<(), Vec<String>> {
    let base: Vec<String> = folder
        .split('/')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let dir = src_dir.join(folder);
    let mut files = Vec::new();
    rust_files(&dir, &mut files).map_err(|e| vec![format!("{}: {e}", dir.display())])?;
    let table = if folder.is_empty() {
        "the layer table".to_string()
    } else {
        format!("the layer table of {folder}/")
    };
    let mut problems = Vec::new();
    let mut modules = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src_dir).expect("under src_dir");
        let file_mod = module_path(rel);
        if file_mod.len() <= base.len() {
            continue;
        }
        modules.push(file_mod[base.len()].clone());
        if unchecked.iter().any(|u| rel == Path::new(u)) {
            continue;
        }
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                problems.push(format!("{}: {e}", f.display()));
                continue;
            }
        };
        problems.extend(violations(
            &format!("src/{}", rel.display()),
            &file_mod,
            &base,
            &text,
            layers,
            &table,
        ));
    }
    // A module whose file lives elsewhere (`#[path = "..."] mod x;`, such as a file shared
    // with a separately built plugin) is declared in the folder's `mod.rs` / `lib.rs`.
    let owner = if folder.is_empty() {
        "lib.rs"
    } else {
        "mod.rs"
    };
    modules.extend(path_modules(
        &std::fs::read_to_string(dir.join(owner)).unwrap_or_default(),
    ));
    for name in layers.iter().flat_map(|l| l.iter()) {
        if !modules.iter().any(|m| m == name) {
            problems.push(format!(
                "`{name}` is in {table} but {} has no module of that name (a stale entry, or the wrong folder)",
                dir.display()
            ));
        }
    }
    for u in unchecked {
        if !src_dir.join(u).is_file() {
            problems.push(format!(
                "`{u}` is left unchecked but src/{u} does not exist (a stale entry)"
            ));
        }
    }
    problems.dedup();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// The modules `text` declares with a `#[path = ...]` attribute (their file is not in
/// the folder).
fn path_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut after_path = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with("#[path") {
            after_path = true;
            continue;
        }
        if after_path && !line.starts_with("#[") && !line.starts_with("//") {
            let decl = line
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ");
            if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                out.push(name.trim().to_string());
            }
            after_path = false;
        }
    }
    out
}

fn layer_of(layers: &[&[&str]], module: &str) -> Option<usize> {
    layers.iter().position(|l| l.contains(&module))
}

/// Layering violations of one file (module path `file_mod`) against the layers of
/// the folder module `base`, as messages naming the file, the line and the import.
fn violations(
    file: &str,
    file_mod: &[String],
    base: &[String],
    src: &str,
    layers: &[&[&str]],
    table: &str,
) -> Vec<String> {
    let me = &file_mod[base.len()];
    let Some(my_layer) = layer_of(layers, me) else {
        return vec![format!(
            "{file}: module `{me}` is not in {table}; add it to the layer it belongs to"
        )];
    };
    let mut out = Vec::new();
    for r in references(file_mod, src) {
        let (line, path, written, from) = match r {
            Reference::AboveRoot { line, written } => {
                out.push(format!(
                    "{file}:{line}: `{written}` climbs above the crate root"
                ));
                continue;
            }
            Reference::Path {
                line,
                path,
                written,
                from,
            } => (line, path, written, from),
        };
        if path.len() <= base.len() || path[..base.len()] != *base {
            continue;
        }
        let target = &path[base.len()];
        if target == me {
            continue;
        }
        // The path as written, up to the module it names.
        let shown = format!(
            "{written}{}",
            path[from.min(base.len())..=base.len()].join("::")
        );
        match layer_of(layers, target) {
            Some(l) if l < my_layer => {}
            Some(l) => out.push(format!(
                "{file}:{line}: `{shown}`: `{me}` (layer {}) may only use lower layers, `{target}` is layer {}",
                my_layer + 1,
                l + 1
            )),
            None => out.push(format!(
                "{file}:{line}: `{shown}`: `{target}` is not a module in {table} (import from the defining module, not a re-export)"
            )),
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries = Vec::new();
    for e in std::fs::read_dir(dir)? {
        entries.push(e?.path());
    }
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

/// `a/b.rs` -> `["a", "b"]`; `a/mod.rs` and `a.rs` -> `["a"]`; `lib.rs` and
/// `main.rs` -> `[]` (the crate root).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    parts
}

#[cfg(test)]
mod tests;
