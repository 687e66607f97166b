//! Text reader: parses what LLVM's text writer (and kfdo's) prints.
//! Follows `SampleProfileReaderText`: `#` comment lines and blank lines are
//! skipped, a line's nesting is its number of leading spaces, `!` lines
//! (metadata such as `!CFGChecksum`, `!Attributes`, `!Flat`) are accepted and
//! ignored, and call-target names may contain `:` and spaces (a target ends at
//! `:<integer>` followed by a space or the end of the line).

use std::borrow::Cow;
use std::path::Path;

use crate::error::AfdoError;
use crate::model::{FunctionSamples, LineLocation, Profile};

/// Deepest inline nesting accepted (LLVM has no limit; this bounds the work
/// per line and the recursion depth of later processing on hostile input).
use crate::extbinary::MAX_DEPTH;

/// Read a text profile from a file.
pub fn read_text(path: &Path) -> Result<Profile, AfdoError> {
    let data = std::fs::read(path).map_err(|source| AfdoError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_text(&data, &path.display().to_string())
}

/// Parse a text profile; `file` names the input in errors.
pub fn parse_text(data: &[u8], file: &str) -> Result<Profile, AfdoError> {
    let mut funcs: Vec<FunctionSamples> = Vec::new();
    // Current top-level function (added to the profile, merging with an
    // earlier one of the same name, when the next header or the end comes)
    // and the inlinee path below it.
    let mut current: Option<FunctionSamples> = None;
    let mut path: Vec<(LineLocation, String)> = Vec::new();

    for (idx, raw) in data.split(|&b| b == b'\n').enumerate() {
        let lineno = idx + 1;
        let err = |msg: String| AfdoError::Text {
            file: file.to_owned(),
            line: lineno,
            msg,
        };
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.is_empty() || raw[0] == b'#' || raw.iter().all(|&b| b == b' ' || b == b'\t') {
            continue;
        }
        let line: Cow<str> = String::from_utf8_lossy(raw);
        let line: &str = &line;
        let depth = line.bytes().take_while(|&b| b == b' ').count();
        if depth == 0 {
            let (name, total, head) = parse_head(line).map_err(|m| {
                err(format!(
                    "{m}; expected a function header `name:total_samples:head_samples`, got {line:?}"
                ))
            })?;
            if let Some(done) = current.take() {
                funcs.push(done);
            }
            let mut fs = FunctionSamples::new(name);
            fs.total_samples = total;
            fs.head_samples = head;
            current = Some(fs);
            path.clear();
            continue;
        }
        let Some(cur) = current.as_mut() else {
            return Err(err(
                "indented line before any function header (`name:total:head` at column 1)".into(),
            ));
        };
        let body = &line[depth..];
        if body.starts_with('!') {
            continue; // metadata
        }
        if depth - 1 > path.len() {
            return Err(err(format!(
                "indented {depth} spaces, but the enclosing profile is at depth {} (each inlinee adds one space)",
                path.len()
            )));
        }
        if depth > MAX_DEPTH {
            return Err(err(format!("inline nesting deeper than {MAX_DEPTH}")));
        }
        path.truncate(depth - 1);
        let parsed = parse_line(body).map_err(|m| {
            err(format!(
                "{m}; expected `offset[.discriminator]: count [target:count ...]` or `offset[.discriminator]: inlinee:total`, got {line:?}"
            ))
        })?;
        let node = node_at(cur, &path);
        match parsed {
            Parsed::Body {
                loc,
                count,
                targets,
            } => {
                let rec = node.body.entry(loc).or_default();
                for (t, c) in targets {
                    rec.add_call_target(t, c);
                }
                rec.add_count(count);
            }
            Parsed::Callsite { loc, name, total } => {
                node.inlinee_mut(loc, name).add_total(total);
                path.push((loc, name.to_owned()));
            }
        }
    }
    if let Some(done) = current.take() {
        funcs.push(done);
    }
    Ok(into_profile(funcs))
}

/// Build the profile's map in one go from the functions sorted by name
/// (merging repeated names, in file order), which is faster than a map
/// search per function.
fn into_profile(mut funcs: Vec<FunctionSamples>) -> Profile {
    funcs.sort_by(|a, b| a.name.cmp(&b.name));
    let mut merged: Vec<(String, FunctionSamples)> = Vec::with_capacity(funcs.len());
    for f in funcs {
        if let Some(last) = merged.last_mut() {
            if last.1.name == f.name {
                last.1.merge(&f);
                continue;
            }
        }
        merged.push((f.name.clone(), f));
    }
    Profile {
        functions: merged.into_iter().collect(),
        // The text format does not say; LLVM's readers take it from an option.
        fs_discriminators: false,
    }
}

fn node_at<'a>(
    top: &'a mut FunctionSamples,
    path: &[(LineLocation, String)],
) -> &'a mut FunctionSamples {
    let mut node = top;
    for (loc, name) in path {
        node = node.inlinee_mut(*loc, name);
    }
    node
}

fn parse_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_u32(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_head(line: &str) -> Result<(&str, u64, u64), String> {
    let (rest, head) = line.rsplit_once(':').ok_or("no `:`")?;
    let (name, total) = rest.rsplit_once(':').ok_or("only one `:`")?;
    let head = parse_u64(head).ok_or("head samples is not a number")?;
    let total = parse_u64(total).ok_or("total samples is not a number")?;
    if name.is_empty() {
        return Err("empty function name".into());
    }
    Ok((name, total, head))
}

enum Parsed<'a> {
    Body {
        loc: LineLocation,
        count: u64,
        targets: Vec<(&'a str, u64)>,
    },
    Callsite {
        loc: LineLocation,
        name: &'a str,
        total: u64,
    },
}

fn parse_line(s: &str) -> Result<Parsed<'_>, String> {
    let colon = s.find(':').ok_or("no `:` after the location")?;
    let loc_s = &s[..colon];
    let loc = match loc_s.split_once('.') {
        None => LineLocation::new(parse_u32(loc_s).ok_or("bad line offset")?, 0),
        Some((o, d)) => LineLocation::new(
            parse_u32(o).ok_or("bad line offset")?,
            parse_u32(d).ok_or("bad discriminator")?,
        ),
    };
    let rest = s[colon + 1..]
        .strip_prefix(' ')
        .ok_or("expected a space after `offset:`")?;
    if rest.as_bytes().first().is_some_and(|b| b.is_ascii_digit()) {
        let (count_s, mut tail) = match rest.find(' ') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let count = parse_u64(count_s).ok_or("bad sample count")?;
        let mut targets: Vec<(&str, u64)> = Vec::new();
        loop {
            tail = tail.trim_start_matches(' ');
            if tail.is_empty() {
                break;
            }
            // The target ends at the first `:` followed by an integer that
            // runs to the next space or the end of the line.
            let mut found = None;
            let mut search = 0;
            while let Some(i) = tail[search..].find(':') {
                let c = search + i;
                let after = &tail[c + 1..];
                let end = after.find(' ').unwrap_or(after.len());
                if let Some(n) = parse_u64(&after[..end]) {
                    found = Some((c, n, c + 1 + end));
                    break;
                }
                search = c + 1;
            }
            let (c, n, end) = found.ok_or("call target without `:count`")?;
            if c == 0 {
                return Err("empty call target name".into());
            }
            let name = &tail[..c];
            // Within one line a repeated target replaces the earlier one (as
            // LLVM's reader does).
            match targets.iter_mut().find(|(t, _)| *t == name) {
                Some(e) => e.1 = n,
                None => targets.push((name, n)),
            }
            tail = &tail[end..];
        }
        Ok(Parsed::Body {
            loc,
            count,
            targets,
        })
    } else {
        let (name, total) = rest.rsplit_once(':').ok_or("inlinee without `:total`")?;
        let total = parse_u64(total).ok_or("inlinee total samples is not a number")?;
        if name.is_empty() {
            return Err("empty inlinee name".into());
        }
        Ok(Parsed::Callsite { loc, name, total })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested() {
        let t = b"# comment\nf:10:2\n 1: 5 a b:c:3 d:2\n 2.3: g:5\n  1: 5\n\n";
        let p = parse_text(t, "t").unwrap();
        let f = &p.functions["f"];
        assert_eq!(f.total_samples, 10);
        assert_eq!(f.head_samples, 2);
        let r = &f.body[&LineLocation::new(1, 0)];
        assert_eq!(r.count, 5);
        assert_eq!(r.call_targets["a b:c"], 3);
        assert_eq!(r.call_targets["d"], 2);
        let g = f.inlinee(LineLocation::new(2, 3), "g").unwrap();
        assert_eq!(g.total_samples, 5);
        assert_eq!(g.body_count(LineLocation::new(1, 0)), Some(5));
    }

    #[test]
    fn errors_name_line() {
        let e = parse_text(b"f:1:1\n x: 3\n", "p.txt").unwrap_err();
        assert!(e.to_string().starts_with("p.txt:2: "), "{e}");
        let e = parse_text(b" 1: 3\n", "p.txt").unwrap_err();
        assert!(e.to_string().starts_with("p.txt:1: "), "{e}");
        let e = parse_text(b"f:1:1\n   1: 3\n", "p.txt").unwrap_err();
        assert!(e.to_string().contains("indented"), "{e}");
        let e = parse_text(b"f:1\n", "p.txt").unwrap_err();
        assert!(e.to_string().starts_with("p.txt:1: "), "{e}");
    }
}
