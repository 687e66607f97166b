//! `--json` and `--json-out FILE`, the one convention of every command: `--json` is a
//! switch that puts the command's summary on stdout as JSON; `--json-out FILE` writes
//! the same document to a file. `--json FILE.json` (the spelling of compare, heatmap
//! and report before) still means `--json-out FILE.json`, with a deprecation note.

use crate::output::Global;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The commands whose `--json` took a FILE before.
const OLD_JSON_FILE_COMMANDS: [&str; 3] = ["compare", "heatmap", "report"];

/// Rewrites the old `--json FILE` of compare, heatmap and report to `--json-out FILE`;
/// true when it did (the caller prints the deprecation note). `--json` followed by a word is the old spelling only when
/// the word names a JSON file (`*.json`) or is joined by `=`: any other word after the
/// switch is the command's own argument (a command to compare, a perf.data), never a
/// file to write over.
pub fn rewrite_old_json_spelling(args: Vec<OsString>) -> (Vec<OsString>, bool) {
    let is_global = |a: &OsString| a == "-q" || a == "--quiet";
    let Some(sub) = args
        .iter()
        .skip(1)
        .position(|a| !is_global(a))
        .map(|i| i + 1)
    else {
        return (args, false);
    };
    if !OLD_JSON_FILE_COMMANDS.iter().any(|c| args[sub] == *c) {
        return (args, false);
    }
    let mut rewritten = false;
    let mut out: Vec<OsString> = args[..=sub].to_vec();
    let mut rest = args[sub + 1..].iter().peekable();
    while let Some(a) = rest.next() {
        if a == "--" {
            out.push(a.clone());
            out.extend(rest.cloned());
            break;
        }
        if let Some(file) = a.to_str().and_then(|s| s.strip_prefix("--json=")) {
            rewritten = true;
            out.push(format!("--json-out={file}").into());
            continue;
        }
        let names_json_file = |w: &&OsString| {
            w.to_str()
                .is_some_and(|s| !s.starts_with('-') && s.to_ascii_lowercase().ends_with(".json"))
        };
        if a == "--json" && rest.peek().is_some_and(names_json_file) {
            rewritten = true;
            out.push("--json-out".into());
            out.extend(rest.next().cloned());
            continue;
        }
        out.push(a.clone());
    }
    (out, rewritten)
}

#[derive(clap::Args, Debug, Clone)]
pub struct JsonArgs {
    /// Print the summary as JSON on stdout (the text summary goes to stderr).
    /// (`--json FILE.json`, the old spelling of `--json-out`, still works.)
    #[arg(long)]
    json: bool,
    /// Also write the summary as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json_out: Option<PathBuf>,
}

/// Where a command's JSON summary goes.
pub struct JsonSink {
    /// `--json`: printed on stdout.
    pub stdout: bool,
    /// `--json-out FILE` (or the old `--json FILE`).
    pub file: Option<PathBuf>,
    /// For stdout alone: the file the library writes, printed and then removed. The
    /// library writes one document whichever way it is shown.
    scratch: Option<tempfile::TempDir>,
}

impl JsonArgs {
    pub fn sink(&self) -> anyhow::Result<JsonSink> {
        let scratch = if self.json && self.json_out.is_none() {
            Some(tempfile::Builder::new().prefix("kfdo-json-").tempdir()?)
        } else {
            None
        };
        Ok(JsonSink {
            stdout: self.json,
            file: self.json_out.clone(),
            scratch,
        })
    }
}
impl JsonSink {
    /// The file the library is asked to write, if any.
    pub fn path(&self) -> Option<PathBuf> {
        match (&self.file, &self.scratch) {
            (Some(f), _) => Some(f.clone()),
            (None, Some(d)) => Some(d.path().join("summary.json")),
            (None, None) => None,
        }
    }

    /// The file named by the user (`--json-out`), for messages and checks.
    pub fn user_file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Prints the text summary: on stdout, or on stderr when stdout carries the JSON.
    pub fn text_summary(&self, text: &str, g: &Global) {
        if self.stdout {
            g.info(text.trim_end());
        } else {
            print!("{text}");
        }
    }

    /// With `--json`: prints the document the library wrote.
    pub fn print(&self) -> anyhow::Result<()> {
        if let (true, Some(path)) = (self.stdout, self.path()) {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| anyhow::anyhow!("reading back {}: {e}", path.display()))?;
            println!("{}", text.trim_end());
        }
        Ok(())
    }
}

/// Prints a command's `--json` summary on stdout, keys in alphabetical order at every
/// level (through `serde_json::Value`, whose maps are sorted): the order every such
/// summary has always printed, whatever the order of the outcome type's fields.
pub fn print_summary(summary: &impl serde::Serialize) -> anyhow::Result<()> {
    let value = serde_json::to_value(summary)?;
    println!("{}", serde_json::to_string_pretty(&value)?);
    Ok(())
}

/// A library's outcome with the next step the command adds to it, as one document.
#[derive(serde::Serialize)]
pub struct WithNext<'a, T: serde::Serialize> {
    #[serde(flatten)]
    pub outcome: &'a T,
    pub next: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(words: &[&str]) -> Vec<String> {
        let args = std::iter::once("kfdo")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect();
        rewrite_old_json_spelling(args)
            .0
            .into_iter()
            .skip(1)
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn only_a_json_file_after_the_switch_is_the_old_spelling() {
        assert_eq!(
            rewrite(&["-q", "compare", "./a", "--json", "v.json", "./b"]),
            ["-q", "compare", "./a", "--json-out", "v.json", "./b"]
        );
        assert_eq!(
            rewrite(&["heatmap", "--json=out", "p.data"]),
            ["heatmap", "--json-out=out", "p.data"]
        );
        // A command or a recording after the switch stays what it is.
        assert_eq!(
            rewrite(&["compare", "--json", "./b", "./a"]),
            ["compare", "--json", "./b", "./a"]
        );
        assert_eq!(
            rewrite(&["heatmap", "--binary", "b", "--json", "perf.data"]),
            ["heatmap", "--binary", "b", "--json", "perf.data"]
        );
        // Other commands, and the words after `--`, are left alone.
        assert_eq!(
            rewrite(&["profile", "--json", "x.json"]),
            ["profile", "--json", "x.json"]
        );
        assert_eq!(
            rewrite(&["compare", "--tag", "A", "--", "w", "--json", "x.json"]),
            ["compare", "--tag", "A", "--", "w", "--json", "x.json"]
        );
    }
}
