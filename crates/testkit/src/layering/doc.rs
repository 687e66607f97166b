//! A crate's layer tables read from its crate doc (the `//!` lines at the top of
//! `lib.rs` or `main.rs`), so the list a reader sees is the list the test checks.
//!
//! The doc's `# Layers` section (a heading of any level, up to the next heading of the
//! same level or a higher one) holds:
//!
//! - numbered lists, one item per layer, bottom first and numbered from 1. An item
//!   starts with its modules, backquoted, separated by commas or `and`, each optionally
//!   followed by a parenthesised note; the first other word or sign (`:`, `;`, a word
//!   of prose) ends the names, and the rest of the item is prose;
//! - a line starting ``Inside `folder/` ``: the numbered list after it is that folder's
//!   (`propeller/layout/` for a nested one); before any such line, the list is the
//!   crate root's;
//! - a bullet ``- `folder/`: `a` and `b`, then `c` ``: a folder's whole table on one
//!   item, its layers separated by `then`, names as in a numbered item;
//! - a line starting `Not checked:`: the backquoted `.rs` files in it (paths under
//!   `src/`, outside parentheses) sit above their folder's layers and are not checked.
//!
//! Anything else is prose and ignored.

use std::path::Path;

use super::FolderLayers;

/// The item being read: where it starts, what it is, and its text so far (its lines
/// joined).
struct Item {
    line: usize,
    kind: ItemKind,
    text: String,
}

enum ItemKind {
    /// `N. ...`: the next layer of the current folder's table.
    Layer,
    /// ``- `folder/`: ...``: the whole table of that folder.
    Folder(String),
}

/// The tables read so far, and the one a numbered item adds to.
struct Tables<'a> {
    file: &'a str,
    all: Vec<FolderLayers>,
    current: usize,
}

impl Tables<'_> {
    /// A new table for `folder`; an error if it has one already.
    fn add(&mut self, line: usize, folder: &str) -> Result<usize, String> {
        if self.all.iter().any(|t| t.folder == folder) {
            return Err(format!(
                "{}:{line}: the layers of `{folder}/` are listed twice",
                self.file
            ));
        }
        self.all.push(FolderLayers {
            folder: folder.to_string(),
            ..FolderLayers::default()
        });
        Ok(self.all.len() - 1)
    }

    fn finish(&mut self, item: Option<Item>) -> Result<(), String> {
        let Some(Item { line, kind, text }) = item else {
            return Ok(());
        };
        let file = self.file;
        match kind {
            ItemKind::Layer => {
                let names = leading_names(&text);
                if names.is_empty() {
                    return Err(format!(
                        "{file}:{line}: this layer names no module: start the item with its \
                         modules, as \"1. `error`, `model` (the profile): what they hold\""
                    ));
                }
                self.all[self.current].layers.push(names);
            }
            ItemKind::Folder(folder) => {
                let layers = then_layers(&text);
                if layers.is_empty() || layers.iter().any(Vec::is_empty) {
                    return Err(format!(
                        "{file}:{line}: `{folder}/`'s layers name no module, or a `then` is \
                         followed by none: write them as \"- `{folder}/`: `a` and `b`, then \
                         `c`\""
                    ));
                }
                let at = self.add(line, &folder)?;
                self.all[at].layers = layers;
            }
        }
        Ok(())
    }
}

/// The layer tables of the crate doc of `root_file` (`src/lib.rs`), whose text is
/// `text`; an error names the file, the line and what to write instead.
pub(super) fn documented_layers(root_file: &str, text: &str) -> Result<Vec<FolderLayers>, String> {
    let doc = crate_doc(text);
    let Some(start) = doc.iter().position(|(_, l)| heading(l) == Some("Layers")) else {
        return Err(format!(
            "{root_file}: the crate doc has no `# Layers` section; add one that lists the \
             modules bottom layer first (see kfdo_testkit::layering)"
        ));
    };
    let level = heading_level(&doc[start].1);
    let section = doc[start + 1..]
        .iter()
        .take_while(|(_, l)| heading(l).is_none() || heading_level(l) > level);
    let mut tables = Tables {
        file: root_file,
        all: vec![FolderLayers::default()],
        current: 0,
    };
    let mut unchecked = Vec::new();
    let mut item: Option<Item> = None;
    for (line, l) in section {
        let line = *line;
        let t = l.trim_start();
        if let Some(it) = item
            .as_mut()
            .filter(|_| !t.is_empty() && l.starts_with(' '))
        {
            // A continuation line of the item.
            it.text.push(' ');
            it.text.push_str(t);
            continue;
        }
        tables.finish(item.take())?;
        if let Some((n, rest)) = numbered(l) {
            let table = &tables.all[tables.current];
            if n != table.layers.len() + 1 {
                return Err(format!(
                    "{root_file}:{line}: layer {n} of {} follows layer {}: number the \
                     layers 1, 2, 3, ... bottom first",
                    table.name(),
                    table.layers.len()
                ));
            }
            item = Some(Item {
                line,
                kind: ItemKind::Layer,
                text: rest.to_string(),
            });
        } else if let Some((folder, rest)) = folder_bullet(t) {
            item = Some(Item {
                line,
                kind: ItemKind::Folder(folder.to_string()),
                text: rest.to_string(),
            });
        } else if let Some(rest) = t.strip_prefix("Inside `") {
            let folder = rest.split('`').next().unwrap_or_default();
            let Some(folder) = folder.strip_suffix('/').filter(|f| !f.is_empty()) else {
                return Err(format!(
                    "{root_file}:{line}: write the folder as `name/` (with the slash), as in \
                     \"Inside `kernel/`, bottom first:\""
                ));
            };
            tables.current = tables.add(line, folder)?;
        } else if let Some(rest) = t.strip_prefix("Not checked:") {
            unchecked.extend(backquoted_files(rest));
        }
    }
    tables.finish(item.take())?;
    let mut tables = tables.all;
    for t in &tables {
        if t.layers.is_empty() {
            return Err(format!(
                "{root_file}: the `# Layers` section lists no layer for {}: add a numbered \
                 list, bottom layer first",
                t.name()
            ));
        }
    }
    // Each unchecked file belongs to the table of the folder it sits in.
    for file in unchecked {
        let folder = Path::new(&file)
            .parent()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        match tables.iter_mut().find(|t| t.folder == folder) {
            Some(t) => t.unchecked.push(file),
            None => {
                return Err(format!(
                    "{root_file}: `{file}` is not checked, but the `# Layers` section has no \
                     layers for its folder `{folder}/`: list them, or drop the file from \
                     \"Not checked:\""
                ))
            }
        }
    }
    Ok(tables)
}

/// A bullet that gives a folder's whole table (``- `bolt/`: `cfg`, then `aggregate` ``):
/// the folder and the text after the colon.
fn folder_bullet(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("- `")?;
    let (folder, after) = rest.split_once('`')?;
    let folder = folder.strip_suffix('/').filter(|f| !f.is_empty())?;
    Some((folder, after.strip_prefix(':')?))
}

/// The crate doc: the `//!` lines at the top of the file (blank lines and inner
/// attributes before them allowed), each with its line number and without the `//!`
/// and the one space after it.
fn crate_doc(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .skip_while(|(_, l)| l.trim().is_empty() || l.starts_with("#!["))
        .take_while(|(_, l)| l.trim_start().starts_with("//!"))
        .map(|(i, l)| {
            let body = l.trim_start().trim_start_matches("//!");
            (i + 1, body.strip_prefix(' ').unwrap_or(body).to_string())
        })
        .collect()
}

/// The text of a Markdown heading line (`## Layers` -> `Layers`).
fn heading(line: &str) -> Option<&str> {
    let level = heading_level(line);
    (level > 0 && line[level..].starts_with(' ')).then(|| line[level..].trim())
}

fn heading_level(line: &str) -> usize {
    line.chars().take_while(|&c| c == '#').count()
}

/// A numbered list item (`12. text` at the start of the line): its number and text.
fn numbered(line: &str) -> Option<(usize, &str)> {
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    let rest = line[digits..].strip_prefix(". ")?;
    Some((line[..digits].parse().ok()?, rest))
}

/// The modules an item starts with: backquoted identifiers separated by commas, `and`
/// and spaces, each optionally followed by a parenthesised note.
fn leading_names(item: &str) -> Vec<String> {
    names_in_layers(item, false).concat()
}

/// A folder bullet's layers: [`leading_names`] whose layers are separated by `then`.
fn then_layers(item: &str) -> Vec<Vec<String>> {
    names_in_layers(item, true)
}

fn names_in_layers(item: &str, then_separates: bool) -> Vec<Vec<String>> {
    let mut layers = vec![Vec::new()];
    let mut rest = item.trim_start();
    loop {
        if let Some(r) = rest.strip_prefix('`') {
            let Some((name, after)) = r.split_once('`') else {
                break;
            };
            if !is_module_name(name) {
                break;
            }
            layers.last_mut().expect("a layer").push(name.to_string());
            rest = after;
        } else if let Some(r) = rest.strip_prefix('(') {
            rest = after_parens(r);
        } else if let Some(r) = rest.strip_prefix(',') {
            rest = r;
        } else if let Some(r) = rest.strip_prefix("and ") {
            rest = r;
        } else if let Some(r) = rest.strip_prefix("then ").filter(|_| then_separates) {
            layers.push(Vec::new());
            rest = r;
        } else {
            break;
        }
        rest = rest.trim_start();
    }
    if layers.iter().all(Vec::is_empty) {
        layers.clear();
    }
    layers
}

fn is_module_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The text after the `)` that closes a `(` just before `s` (nested pairs counted).
fn after_parens(s: &str) -> &str {
    let mut depth = 1;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return &s[i + 1..];
                }
            }
            _ => {}
        }
    }
    ""
}

/// The backquoted `.rs` paths of `text` outside parentheses.
fn backquoted_files(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(['`', '(']) {
        let (c, after) = (&rest[i..i + 1], &rest[i + 1..]);
        if c == "(" {
            rest = after_parens(after);
            continue;
        }
        let Some((quoted, after)) = after.split_once('`') else {
            break;
        };
        if quoted.ends_with(".rs") {
            out.push(quoted.to_string());
        }
        rest = after;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{backquoted_files, crate_doc, documented_layers, leading_names, then_layers};

    fn names(item: &str) -> Vec<String> {
        leading_names(item)
    }

    #[test]
    fn an_item_names_its_modules_before_its_prose() {
        assert_eq!(names("`error`, `model` (the profile)."), ["error", "model"]);
        assert_eq!(
            names("`code` (the binary's (own) starts), `error`, `space` (address\n spaces), `target`: independent"),
            ["code", "error", "space", "target"]
        );
        assert_eq!(
            names("`hardware` (the PMU and `perf record`) and `emulated` (QEMU), independent of each other."),
            ["hardware", "emulated"]
        );
        // Prose after the names may mention other modules: they are not this layer's.
        assert_eq!(
            names("`symbolizer`: [`Symbolizer`], DWARF plus what `code` says."),
            ["symbolizer"]
        );
        assert_eq!(names("`error`; `kvm`"), ["error"]);
        assert!(names("The vocabulary: `request`").is_empty());
        assert!(names("`--from-raw`").is_empty());
    }

    #[test]
    fn a_folder_bullet_separates_its_layers_with_then() {
        assert_eq!(
            then_layers(
                " `layout` (magic, [`V`]) and `fold`, then `reader` and `writer`, independent."
            ),
            [vec!["layout", "fold"], vec!["reader", "writer"]]
        );
        assert_eq!(
            then_layers(" `a`, then `b`, then `c`."),
            [["a"], ["b"], ["c"]]
        );
        assert!(then_layers(" layers: `a`").is_empty());
        // A `then` with no module after it leaves an empty layer, which is refused.
        assert_eq!(then_layers(" `a`, then the rest"), [vec!["a"], vec![]]);
    }

    #[test]
    fn unchecked_files_are_the_backquoted_paths_outside_notes() {
        assert_eq!(
            backquoted_files(" `a/tests.rs` (uses `mod.rs`'s `x`), `b.rs` and `c`."),
            ["a/tests.rs", "b.rs"]
        );
    }

    const DOC: &str = "//! The crate.\n\
        //!\n\
        //! # Layers\n\
        //!\n\
        //! Each module uses only the layers below it:\n\
        //!\n\
        //! 1. `error`, `model` (the\n\
        //!    profile): the vocabulary.\n\
        //! 2. `parse`: uses `model`.\n\
        //!\n\
        //! Inside `kernel/`, bottom first:\n\
        //!\n\
        //! 1. `steps`\n\
        //! 2. `plan` and `tests`\n\
        //!\n\
        //! Not checked: `kernel/tests.rs` (it drives `mod.rs`), `main.rs`.\n\
        //!\n\
        //! - `bolt/`: `cfg` and `fdata` (BOLT's\n\
        //!   records), then `aggregate`.\n\
        //!\n\
        //! # Examples\n\
        //!\n\
        //! 1. `not_a_layer`\n\
        \n\
        mod error;\n";

    #[test]
    fn the_layers_section_gives_each_folders_table() {
        let t = documented_layers("src/lib.rs", DOC).unwrap();
        assert_eq!(t.len(), 3, "{t:#?}");
        assert_eq!(t[0].folder, "");
        assert_eq!(t[0].layers, [vec!["error", "model"], vec!["parse"]]);
        assert_eq!(t[0].unchecked, ["main.rs"]);
        assert_eq!(t[1].folder, "kernel");
        assert_eq!(t[1].layers, [vec!["steps"], vec!["plan", "tests"]]);
        assert_eq!(t[1].unchecked, ["kernel/tests.rs"]);
        assert_eq!(t[2].folder, "bolt");
        assert_eq!(t[2].layers, [vec!["cfg", "fdata"], vec!["aggregate"]]);
    }

    /// Each way the section can be wrong is an error naming the line and the fix.
    #[test]
    fn a_section_that_cannot_be_read_is_an_error_naming_the_line() {
        let err = |doc: &str| documented_layers("src/lib.rs", doc).unwrap_err();
        let e = err("//! The crate.\n//! 1. `a`\n");
        assert!(
            e.starts_with("src/lib.rs: the crate doc has no `# Layers` section"),
            "{e}"
        );
        let e = err("//! # Layers\n//! 1. `a`\n//! 3. `b`\n");
        assert!(
            e.starts_with("src/lib.rs:3: layer 3 of the crate root follows layer 1"),
            "{e}"
        );
        let e = err("//! # Layers\n//! 1. The bottom: `a`\n");
        assert!(
            e.starts_with("src/lib.rs:2: this layer names no module"),
            "{e}"
        );
        let e = err("//! # Layers\n//! 1. `a`\n//! Inside `k`:\n//! 1. `b`\n");
        assert!(
            e.starts_with("src/lib.rs:3: write the folder as `name/`"),
            "{e}"
        );
        let e = err("//! # Layers\n//! 1. `a`\n//! Inside `k/`:\n//! 1. `b`\n//! Inside `k/`:\n");
        assert!(e.contains(":5: the layers of `k/` are listed twice"), "{e}");
        let e = err("//! # Layers\n//! 1. `a`\n//! Inside `k/`:\n");
        assert!(e.contains("lists no layer for `k/`"), "{e}");
        let e = err("//! # Layers\n//! 1. `a`\n//! - `k/`: `b`, then\n//!   more.\n");
        assert!(
            e.starts_with("src/lib.rs:3: `k/`'s layers name no module"),
            "{e}"
        );
        let e = err("//! # Layers\n//! 1. `a`\n//! Not checked: `x/t.rs`.\n");
        assert!(e.contains("`x/t.rs` is not checked, but"), "{e}");
    }

    #[test]
    fn the_crate_doc_is_the_doc_lines_at_the_top() {
        let text = "\n#![deny(missing_docs)]\n//! # Layers\n//!\n//!1. `a`\nmod a;\n//! 2. `b`\n";
        let doc = crate_doc(text);
        let lines: Vec<(usize, &str)> = doc.iter().map(|(n, l)| (*n, l.as_str())).collect();
        assert_eq!(lines, [(3, "# Layers"), (4, ""), (5, "1. `a`")]);
    }

    /// A deeper heading is part of the section; one of its level or higher ends it.
    #[test]
    fn the_section_ends_at_a_heading_of_its_level_or_higher() {
        let doc =
            "//! ## Layers\n//! 1. `a`\n//! ### Inside\n//! 2. `b`\n//! ## Next\n//! 3. `c`\n";
        let t = documented_layers("src/lib.rs", doc).unwrap();
        assert_eq!(t[0].layers, [["a"], ["b"]]);
        let doc = "//! ## Layers\n//! 1. `a`\n//! # Top\n//! 2. `b`\n";
        let t = documented_layers("src/lib.rs", doc).unwrap();
        assert_eq!(t[0].layers, [["a"]]);
    }
}
