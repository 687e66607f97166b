//! Rust source reduced to the tokens a path is made of: comments and string /
//! char literals blanked out first (so `"crate::x"` or `// use super::y` is not
//! an import), then identifiers, `::` and single punctuation with their lines.

pub(super) fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `src` with comments and string / char literals replaced by spaces
/// (newlines kept, so line numbers stay right and braces balance).
pub(super) fn code_only(src: &str) -> String {
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
pub(super) enum Tok {
    Ident(String),
    PathSep,
    Punct(char),
}

pub(super) fn tokens(code: &str) -> Vec<(Tok, usize)> {
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
