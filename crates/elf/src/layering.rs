//! Test-only: keeps the crate's modules in the layers the crate docs
//! describe, so an import cycle cannot creep back in.
//!
//! Each file under `src/` is scanned for the paths that can reach another
//! module of this crate: `crate::X` and `super::` chains that climb to the
//! crate root (a plain `X::` path cannot name a sibling module in the 2018
//! edition without one of those first). Comments and string / char literals
//! are blanked out first, and inline `mod m { ... }` blocks are tracked, so
//! `use super::*` in a `mod tests` resolves to its own file's module.

use std::path::{Path, PathBuf};

/// Top-level modules, bottom layer first (messages number them from 1, as
/// the crate docs do). A module may use modules in lower
/// layers only; modules in one layer are independent of each other. `lib.rs`
/// (re-exports only) and this file sit above everything and are not checked.
const LAYERS: &[&[&str]] = &[
    &["error"],
    &["segments", "build_id", "arch", "relocatable"],
    &["symbols", "debug_sections"],
    &["binary"],
    &["code", "dwarf", "bb_addr_map"],
    &["symbolizer"],
];

/// Files above every layer, not checked.
const UNCHECKED: &[&str] = &["lib.rs", "layering.rs"];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `src` with comments and string / char literals replaced by spaces
/// (newlines kept, so line numbers stay right and braces balance).
fn code_only(src: &str) -> String {
    let s: Vec<char> = src.chars().collect();
    let mut out = s.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for c in &mut out[from..to.min(s.len())] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let at = |i: usize| s.get(i).copied().unwrap_or('\0');
    let mut i = 0;
    while i < s.len() {
        let start = i;
        if at(i) == '/' && at(i + 1) == '/' {
            while i < s.len() && at(i) != '\n' {
                i += 1;
            }
        } else if at(i) == '/' && at(i + 1) == '*' {
            // Block comments nest in Rust.
            let mut depth = 0;
            loop {
                if i >= s.len() {
                    break;
                } else if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if at(i) == 'r'
            && (i == 0
                || !is_ident(at(i - 1))
                || (at(i - 1) == 'b' && (i < 2 || !is_ident(at(i - 2)))))
            && matches!(at(i + 1), '"' | '#')
        {
            // Raw string r"..." / r#"..."# (or br...).
            let mut hashes = 0;
            let mut j = i + 1;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) != '"' {
                i += 1;
                continue;
            }
            j += 1;
            while j < s.len() && !(at(j) == '"' && (1..=hashes).all(|h| at(j + h) == '#')) {
                j += 1;
            }
            i = j + 1 + hashes;
        } else if at(i) == '"' {
            i += 1;
            while i < s.len() && at(i) != '"' {
                i += if at(i) == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if at(i) == '\'' && at(i + 1) == '\\' {
            // Escaped char literal: '\n', '\'', '\u{7f}'.
            i += 3;
            while i < s.len() && at(i) != '\'' {
                i += 1;
            }
            i += 1;
        } else if at(i) == '\'' && at(i + 2) == '\'' {
            i += 3;
        } else {
            // Code, or the `'` of a lifetime.
            i += 1;
            continue;
        }
        blank(&mut out, start, i);
    }
    out.into_iter().collect()
}

#[derive(Debug, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Punct(char),
}

fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let s: Vec<char> = code.chars().collect();
    let (mut out, mut line, mut i) = (Vec::new(), 1, 0);
    while i < s.len() {
        let c = s[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if is_ident(c) {
            let start = i;
            while i < s.len() && is_ident(s[i]) {
                i += 1;
            }
            out.push((Tok::Ident(s[start..i].iter().collect()), line));
        } else if c == ':' && s.get(i + 1) == Some(&':') {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// The first segment of each path at `toks[j..]`, which follows a `crate::`
/// or root-reaching `super::`: `X` for `X::...`, every item's first
/// segment for a `{...}` group, `*` for a glob.
fn first_segments(toks: &[(Tok, usize)], j: usize) -> Vec<String> {
    match toks.get(j) {
        Some((Tok::Ident(name), _)) => vec![name.clone()],
        Some((Tok::Punct('*'), _)) => vec!["*".into()],
        Some((Tok::Punct('{'), _)) => {
            let (mut out, mut depth, mut item_start) = (Vec::new(), 0, true);
            for (t, _) in &toks[j..] {
                match t {
                    Tok::Punct('{') => depth += 1,
                    Tok::Punct('}') => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Tok::Punct(',') if depth == 1 => {
                        item_start = true;
                        continue;
                    }
                    Tok::Ident(name) if depth == 1 && item_start => out.push(name.clone()),
                    Tok::Punct('*') if depth == 1 && item_start => out.push("*".into()),
                    _ => {}
                }
                item_start = false;
            }
            out
        }
        _ => Vec::new(),
    }
}

/// Every reference in `src` (the file of module path `file_mod`, e.g.
/// `["arch", "x86_64"]`) to another top-level module of the crate, as
/// (line, top-level module, the path as written).
fn references(file_mod: &[String], src: &str) -> Vec<(usize, String, String)> {
    let toks = tokens(&code_only(src));
    let ident = |k: usize, name: &str| matches!(toks.get(k), Some((Tok::Ident(n), _)) if n == name);
    let sep = |k: usize| matches!(toks.get(k), Some((Tok::PathSep, _)));
    let mut out = Vec::new();
    // Inline `mod m {` blocks: (name, brace depth outside the block).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut pending_mod: Option<String> = None;
    let mut depth = 0usize;
    for (i, (tok, line)) in toks.iter().enumerate() {
        match tok {
            Tok::Punct('{') => {
                if let Some(m) = pending_mod.take() {
                    inline.push((m, depth));
                }
                depth += 1;
            }
            Tok::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|&(_, d)| d == depth) {
                    inline.pop();
                }
            }
            Tok::Ident(k) if k == "mod" => {
                pending_mod = match toks.get(i + 1) {
                    Some((Tok::Ident(name), _)) => Some(name.clone()),
                    _ => None,
                };
            }
            Tok::Punct(';') => pending_mod = None,
            Tok::Ident(k)
                if k == "crate"
                    && sep(i + 1)
                    && !matches!(i.checked_sub(1).map(|p| &toks[p].0), Some(Tok::Punct('$'))) =>
            {
                for m in first_segments(&toks, i + 2) {
                    out.push((*line, m.clone(), format!("crate::{m}")));
                }
            }
            // The first `super` of a chain (not a later one of `super::super::`).
            Tok::Ident(k) if k == "super" && sep(i + 1) && !(i >= 1 && sep(i - 1)) => {
                let mut j = i;
                let mut ups = 0;
                while ident(j, "super") && sep(j + 1) {
                    ups += 1;
                    j += 2;
                }
                let here = file_mod.len() + inline.len();
                if ups > here {
                    out.push((
                        *line,
                        "(above the crate root)".into(),
                        "super::".repeat(ups),
                    ));
                } else if ups == here {
                    // Climbed to the crate root: the next segment is a
                    // top-level module. Below the root we are still inside
                    // this file's own top-level module.
                    for m in first_segments(&toks, j) {
                        out.push((*line, m.clone(), format!("{}{m}", "super::".repeat(ups))));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Layering violations of one file, as messages naming the file, the line
/// and the import.
fn violations(file: &str, file_mod: &[String], src: &str) -> Vec<String> {
    let me = &file_mod[0];
    let Some(my_layer) = layer_of(me) else {
        return vec![format!(
            "{file}: module `{me}` is not in the layer table (LAYERS in src/layering.rs); add it to the layer it belongs to"
        )];
    };
    let mut out = Vec::new();
    for (line, target, written) in references(file_mod, src) {
        if &target == me {
            continue;
        }
        match layer_of(&target) {
            Some(l) if l < my_layer => {}
            Some(l) => out.push(format!(
                "{file}:{line}: `{written}`: `{me}` (layer {}) may only use lower layers, `{target}` is layer {}",
                my_layer + 1,
                l + 1
            )),
            None => out.push(format!(
                "{file}:{line}: `{written}`: `{target}` is not a module in the layer table (import from the defining module, not a crate-root re-export)"
            )),
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `src/a/b.rs` -> `["a", "b"]`; `src/a/mod.rs` and `src/a.rs` -> `["a"]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.len() > 1 && parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

#[test]
fn modules_only_use_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    let mut checked = 0;
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        if UNCHECKED.iter().any(|u| rel == Path::new(u)) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        problems.extend(violations(
            &format!("src/{}", rel.display()),
            &module_path(rel),
            &text,
        ));
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} files found under {src:?}");
    assert!(
        problems.is_empty(),
        "imports that break the layering:\n  {}",
        problems.join("\n  ")
    );
}

/// The checker itself: it must see through the ways an upward import can be
/// written, and ignore what only looks like one.
#[test]
fn checker_finds_upward_imports() {
    let m = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let bad = "use crate::symbolizer::Symbolizer;\n\
               use crate::{error::ElfError, code::Code};\n\
               fn f() { super::dwarf::x(); }\n\
               use crate::Binary;\n";
    let v = violations("src/binary.rs", &m(&["binary"]), bad);
    assert_eq!(v.len(), 4, "{v:#?}");
    assert!(
        v[0].starts_with("src/binary.rs:1: `crate::symbolizer`"),
        "{v:#?}"
    );
    assert!(v[1].starts_with("src/binary.rs:2: `crate::code`"), "{v:#?}");
    assert!(
        v[2].starts_with("src/binary.rs:3: `super::dwarf`"),
        "{v:#?}"
    );
    assert!(v[3].contains("`Binary` is not a module"), "{v:#?}");

    // From a submodule, two `super`s reach the root.
    let v = violations(
        "src/arch/x86_64.rs",
        &m(&["arch", "x86_64"]),
        "use super::super::binary::Binary;",
    );
    assert_eq!(v.len(), 1, "{v:#?}");

    let fine = "// use crate::symbolizer;\n\
                /* use crate::code; /* nested */ */\n\
                const S: &str = \"crate::code\";\n\
                const R: &str = r#\"super::code \"quoted\"\"#;\n\
                const C: char = '{';\n\
                fn g<'a>(x: &'a u8) -> &'a u8 { x }\n\
                use super::segments::LoadSegment;\n\
                pub(crate) fn h() {}\n\
                mod tests { use super::*; use super::super::error::ElfError; }\n";
    let v = violations("src/binary.rs", &m(&["binary"]), fine);
    assert!(v.is_empty(), "{v:#?}");

    let v = violations("src/new.rs", &m(&["new"]), "");
    assert!(v[0].contains("not in the layer table"), "{v:#?}");
}
