//! A whole crate checked at once: its layer tables (the crate root's and each checked
//! folder's), given, or read from the `# Layers` section of its crate doc.

use std::path::Path;

use super::check_folder;
use super::doc::documented_layers;

/// One folder's layer table.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FolderLayers {
    /// The folder under `src/` (`propeller/layout`); empty for the crate root.
    pub folder: String,
    /// Its modules, bottom layer first.
    pub layers: Vec<Vec<String>>,
    /// Files of the folder (paths under `src/`, as `script/tests.rs`) that sit above
    /// its layers and are not checked.
    pub unchecked: Vec<String>,
}

impl FolderLayers {
    /// The table of `folder` (empty for the crate root), bottom layer first.
    pub fn new(folder: &str, layers: &[&[&str]]) -> FolderLayers {
        FolderLayers {
            folder: folder.to_string(),
            layers: layers
                .iter()
                .map(|l| l.iter().map(|m| m.to_string()).collect())
                .collect(),
            unchecked: Vec::new(),
        }
    }

    /// The table of `folder` whose modules are each a layer of their own, in order.
    pub fn one_per_layer(folder: &str, modules: &[&str]) -> FolderLayers {
        let layers: Vec<&[&str]> = modules.iter().map(std::slice::from_ref).collect();
        FolderLayers::new(folder, &layers)
    }

    /// How messages name the folder.
    pub(super) fn name(&self) -> String {
        if self.folder.is_empty() {
            "the crate root".to_string()
        } else {
            format!("`{}/`", self.folder)
        }
    }
}

/// Checks the crate whose manifest is in `manifest_dir` against `tables`; every
/// violation of every table.
pub fn check_crate(manifest_dir: &Path, tables: &[FolderLayers]) -> Result<(), Vec<String>> {
    let src = manifest_dir.join("src");
    let mut problems = Vec::new();
    for t in tables {
        let layers: Vec<Vec<&str>> = t
            .layers
            .iter()
            .map(|l| l.iter().map(String::as_str).collect())
            .collect();
        let layers: Vec<&[&str]> = layers.iter().map(Vec::as_slice).collect();
        let unchecked: Vec<&str> = t.unchecked.iter().map(String::as_str).collect();
        if let Err(p) = check_folder(&src, &t.folder, &layers, &unchecked) {
            problems.extend(p);
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// The layer tables of the crate doc of the crate in `manifest_dir` (`src/lib.rs`, or
/// `src/main.rs` for a binary).
pub fn crate_doc_layers(manifest_dir: &Path) -> Result<Vec<FolderLayers>, String> {
    let src = manifest_dir.join("src");
    let (name, path) = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| (format!("src/{f}"), src.join(f)))
        .find(|(_, p)| p.is_file())
        .ok_or_else(|| format!("{}: no lib.rs or main.rs", src.display()))?;
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    documented_layers(&name, &text)
}

/// [`check_crate`], failing the test with every violation listed.
pub fn assert_crate_layers(manifest_dir: &str, tables: &[FolderLayers]) {
    if let Err(problems) = check_crate(Path::new(manifest_dir), tables) {
        panic!(
            "imports that break the layering (a module may use lower layers only):\n  {}",
            problems.join("\n  ")
        );
    }
}

/// The layering test of a crate: every `crate::` / `super::` path under `src/` of the
/// crate in `manifest_dir` (`env!("CARGO_MANIFEST_DIR")`) checked against the `# Layers`
/// section of its crate doc; the test fails with every violation, or with what is wrong
/// in the section.
pub fn assert_documented_layers(manifest_dir: &str) {
    let tables = crate_doc_layers(Path::new(manifest_dir)).unwrap_or_else(|e| panic!("{e}"));
    if let Err(problems) = check_crate(Path::new(manifest_dir), &tables) {
        panic!(
            "imports that break the layering (the layers are the `# Layers` section of the \
             crate doc; a module may use lower layers only):\n  {}",
            problems.join("\n  ")
        );
    }
}
