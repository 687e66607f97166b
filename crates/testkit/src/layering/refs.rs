//! The paths in one file that can name another module of its crate: `crate::...`
//! and `super::...` chains (a plain `x::` path cannot name a module outside the
//! file's own in the 2018 edition without one of those first), resolved to paths
//! from the crate root. Inline `mod m { ... }` blocks are tracked, so `use super::*`
//! in a `mod tests` resolves to its own file's module; the paths inside an inline
//! `#[cfg(test)] mod` block are not the library's imports and are left out (a test
//! may render what it computed with a higher layer).

use super::lex::{code_only, tokens, Tok};

/// One path that reaches into the crate.
#[derive(Debug, PartialEq)]
pub(super) enum Reference {
    /// The path from the crate root (`["propeller", "layout", "chain", "ChainSet"]`),
    /// with `crate::` / `super::` resolved; `*` for a glob.
    Path {
        line: usize,
        path: Vec<String>,
        /// How the path starts in the source (`crate::`, `super::super::`).
        written: String,
        /// Where in `path` the segments written after that start.
        from: usize,
    },
    /// More `super`s than the file is deep.
    AboveRoot { line: usize, written: String },
}

/// The paths of the use tree at `toks[j..]`: `a::b::c`, `a::{b, c::d}`, `a::*`,
/// `{a, b}`, each as its segments (`self` inside a group names the prefix itself).
fn use_paths(toks: &[(Tok, usize)], j: usize) -> Vec<Vec<String>> {
    let sep = |k: usize| matches!(toks.get(k), Some((Tok::PathSep, _)));
    match toks.get(j) {
        Some((Tok::Ident(name), _)) => {
            let mut rest = if sep(j + 1) {
                use_paths(toks, j + 2)
            } else {
                vec![Vec::new()]
            };
            for r in &mut rest {
                if name != "self" {
                    r.insert(0, name.clone());
                }
            }
            rest
        }
        Some((Tok::Punct('*'), _)) => vec![vec!["*".to_string()]],
        Some((Tok::Punct('{'), _)) => {
            let mut out = Vec::new();
            let mut depth = 0;
            let mut item_start = true;
            for (k, (t, _)) in toks.iter().enumerate().skip(j) {
                match t {
                    Tok::Punct('{') if depth == 0 => {
                        depth = 1;
                        continue;
                    }
                    Tok::Punct('}') if depth == 1 => break,
                    Tok::Punct(',') if depth == 1 => {
                        item_start = true;
                        continue;
                    }
                    _ => {
                        if depth == 1 && item_start {
                            out.extend(use_paths(toks, k));
                        }
                        match t {
                            Tok::Punct('{') => depth += 1,
                            Tok::Punct('}') => depth -= 1,
                            _ => {}
                        }
                    }
                }
                item_start = false;
            }
            out
        }
        _ => vec![Vec::new()],
    }
}

/// Every path in `src` (the file of module `file_mod`, e.g. `["arch", "x86_64"]`)
/// that starts at the crate root or climbs with `super`.
pub(super) fn references(file_mod: &[String], src: &str) -> Vec<Reference> {
    let toks = tokens(&code_only(src));
    let ident = |k: usize, name: &str| matches!(toks.get(k), Some((Tok::Ident(n), _)) if n == name);
    let sep = |k: usize| matches!(toks.get(k), Some((Tok::PathSep, _)));
    let mut out = Vec::new();
    // Inline `mod m {` blocks: (name, brace depth outside the block, under cfg(test)).
    let mut inline: Vec<(String, usize, bool)> = Vec::new();
    let mut pending_mod: Option<String> = None;
    // A `#[cfg(test)]` seen, for the item that follows.
    let mut pending_test = false;
    let mut depth = 0usize;
    let cfg_test = [
        Tok::Punct('#'),
        Tok::Punct('['),
        Tok::Ident("cfg".into()),
        Tok::Punct('('),
        Tok::Ident("test".into()),
        Tok::Punct(')'),
        Tok::Punct(']'),
    ];
    for (i, (tok, line)) in toks.iter().enumerate() {
        if toks.len() >= i + cfg_test.len()
            && toks[i..i + cfg_test.len()]
                .iter()
                .map(|(t, _)| t)
                .eq(cfg_test.iter())
        {
            pending_test = true;
        }
        let in_test = inline.iter().any(|b| b.2);
        match tok {
            Tok::Punct('{') => {
                if let Some(m) = pending_mod.take() {
                    inline.push((m, depth, pending_test));
                }
                pending_test = false;
                depth += 1;
            }
            Tok::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|b| b.1 == depth) {
                    inline.pop();
                }
            }
            Tok::Ident(k) if k == "mod" => {
                pending_mod = match toks.get(i + 1) {
                    Some((Tok::Ident(name), _)) => Some(name.clone()),
                    _ => None,
                };
            }
            Tok::Punct(';') => {
                pending_mod = None;
                pending_test = false;
            }
            _ if in_test => {}
            Tok::Ident(k)
                if k == "crate"
                    && sep(i + 1)
                    && !matches!(i.checked_sub(1).map(|p| &toks[p].0), Some(Tok::Punct('$'))) =>
            {
                for path in use_paths(&toks, i + 2) {
                    out.push(Reference::Path {
                        line: *line,
                        path,
                        written: "crate::".into(),
                        from: 0,
                    });
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
                let written = "super::".repeat(ups);
                let here: Vec<&String> =
                    file_mod.iter().chain(inline.iter().map(|b| &b.0)).collect();
                if ups > here.len() {
                    out.push(Reference::AboveRoot {
                        line: *line,
                        written,
                    });
                    continue;
                }
                let base = &here[..here.len() - ups];
                for rest in use_paths(&toks, j) {
                    let path = base.iter().map(|s| s.to_string()).chain(rest).collect();
                    out.push(Reference::Path {
                        line: *line,
                        path,
                        written: written.clone(),
                        from: base.len(),
                    });
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{references, Reference};

    fn paths(file_mod: &[&str], src: &str) -> Vec<String> {
        let m: Vec<String> = file_mod.iter().map(|s| s.to_string()).collect();
        references(&m, src)
            .into_iter()
            .map(|r| match r {
                Reference::Path { path, .. } => path.join("::"),
                Reference::AboveRoot { written, .. } => format!("above {written}"),
            })
            .collect()
    }

    #[test]
    fn paths_resolve_from_the_crate_root() {
        assert_eq!(
            paths(
                &["a", "b"],
                "use crate::x::{y::Z, self, w::{P, Q}};\n\
                 fn f() { super::c::g(); super::super::d::h(); }\n\
                 use super::{e, f::*};\n\
                 mod tests { use super::*; use super::super::k; }\n\
                 #[cfg(test)]\n\
                 mod more { use crate::up::X; mod deep { use crate::up::Y; } }\n\
                 use crate::after::Z;\n\
                 use super::super::super::x;\n"
            ),
            [
                "x::y::Z",
                "x",
                "x::w::P",
                "x::w::Q",
                "a::c::g",
                "d::h",
                "a::e",
                "a::f::*",
                "a::b::*",
                "a::k",
                "after::Z",
                "above super::super::super::",
            ]
        );
    }
}
