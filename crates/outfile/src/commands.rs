//! No command writes over a file that a command it runs names: the program a benchmarked
//! or recorded command starts, and every word of it that names an existing file (`wc -l
//! notes.c`, `./prog --input=data.txt`, `cat < notes.c`). The same rule as
//! [`crate::refuse_overwriting_inputs`], for inputs that kfdo never opens itself.

use crate::atomic::OutputError;
use crate::inputs::{same_file, Out};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// A command kfdo will start, as the user gave it.
#[derive(Clone, Copy, Debug)]
pub enum CommandLine<'a> {
    /// One line for a shell (`sh -c LINE`), or split on white space (`--shell none`).
    Shell(&'a str),
    /// The program and its arguments, word by word.
    Argv(&'a [std::ffi::OsString]),
}

/// One file a command names, and how it names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedFile {
    pub path: PathBuf,
    /// The command starts it (its program), or names it as an argument.
    pub is_program: bool,
}

/// The existing files `command` names, resolved against `cwd` (the directory it runs
/// in; this process's when `None`): its program as the shell finds it (a word with a
/// `/` is a path, else the first match on PATH), then each word that names an existing
/// file, also after a redirection (`<notes.c`) or an option's `=` (`--in=notes.c`).
pub fn files_named_by(command: CommandLine, cwd: Option<&Path>) -> Vec<NamedFile> {
    let words: Vec<String> = match command {
        CommandLine::Shell(line) => shell_words::split(line)
            .unwrap_or_else(|_| line.split_whitespace().map(String::from).collect()),
        CommandLine::Argv(argv) => argv
            .iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect(),
    };
    let at = |p: &Path| match cwd {
        Some(d) if p.is_relative() => d.join(p),
        _ => p.to_path_buf(),
    };
    let mut named = Vec::new();
    // Leading `NAME=VALUE` words set the environment of the program after them.
    let program = words.iter().position(|w| !is_assignment(w));
    if let Some(p) = program.and_then(|i| program_path(OsStr::new(&words[i]), cwd)) {
        named.push(NamedFile {
            path: p,
            is_program: true,
        });
    }
    for word in &words {
        for candidate in candidates(word) {
            let path = at(Path::new(candidate));
            if path.is_file() && !named.iter().any(|n| n.path == path) {
                named.push(NamedFile {
                    path,
                    is_program: false,
                });
            }
        }
    }
    named
}

/// The file a command word runs: itself when it names a path (relative to `cwd`), else
/// the first match on PATH, as the shell finds it.
pub fn program_path(word: &OsStr, cwd: Option<&Path>) -> Option<PathBuf> {
    if word.as_encoded_bytes().contains(&b'/') {
        let p = PathBuf::from(word);
        return Some(match cwd {
            Some(d) if p.is_relative() => d.join(p),
            _ => p,
        });
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(word))
        .find(|p| p.is_file())
}

/// Refuses when an output is a file one of `commands` names. `commands` pairs each
/// command with the name the error calls it by (`--name` or the command itself).
pub fn refuse_overwriting_command_files(
    outputs: &[Out],
    commands: &[(CommandLine, Option<&Path>)],
) -> Result<(), OutputError> {
    for (command, cwd) in commands {
        let named = files_named_by(*command, *cwd);
        for out in outputs {
            if let Some(f) = named.iter().find(|f| same_file(out.path, &f.path)) {
                return Err(OutputError {
                    path: out.path.to_path_buf(),
                    message: format!(
                        "it is {}, {} the command `{}`{}; writing it would destroy that \
                         file: choose another {}",
                        f.path.display(),
                        if f.is_program {
                            "the program that"
                        } else {
                            "a file that"
                        },
                        display(*command),
                        if f.is_program { " runs" } else { " names" },
                        out.option
                    ),
                });
            }
        }
    }
    Ok(())
}

fn display(command: CommandLine) -> String {
    match command {
        CommandLine::Shell(line) => line.to_string(),
        CommandLine::Argv(argv) => shell_words::join(argv.iter().map(|w| w.to_string_lossy())),
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// The spellings of a file a word may hold: the word, the word after a shell
/// redirection (`<f`, `>>f`, `2>f`), and the value of an option (`--in=f`).
fn candidates(word: &str) -> impl Iterator<Item = &str> {
    let redirected = word
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start_matches(['<', '>', '&', '|']);
    let value = word.split_once('=').map(|(_, v)| v);
    [Some(word), Some(redirected), value]
        .into_iter()
        .flatten()
        .filter(|w| !w.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &Path) -> (PathBuf, PathBuf) {
        let prog = dir.join("prog");
        let notes = dir.join("notes.c");
        std::fs::write(&prog, b"#!/bin/sh\n").unwrap();
        std::fs::write(&notes, b"int x;\n").unwrap();
        (prog, notes)
    }

    #[test]
    fn the_program_and_every_file_word_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let (prog, notes) = files(dir.path());
        let line = "FOO=1 ./prog 1000 --in=notes.c < notes.c missing.txt";
        let named = files_named_by(CommandLine::Shell(line), Some(dir.path()));
        assert_eq!(
            named,
            vec![
                NamedFile {
                    path: dir.path().join("./prog"),
                    is_program: true
                },
                NamedFile {
                    path: dir.path().join("notes.c"),
                    is_program: false
                },
            ]
        );
        assert!(same_file(&named[0].path, &prog));
        assert!(same_file(&named[1].path, &notes));
    }

    #[test]
    fn a_program_on_path_is_found_as_the_shell_finds_it() {
        let named = files_named_by(CommandLine::Shell("sh -c true"), None);
        assert!(named[0].is_program, "{named:?}");
        assert!(named[0].path.ends_with("sh"), "{named:?}");
    }

    #[test]
    fn an_output_over_the_program_or_an_argument_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (prog, notes) = files(dir.path());
        let line = format!("{} 1000", prog.display());
        let e = refuse_overwriting_command_files(
            &[Out::new("--json-out", &prog)],
            &[(CommandLine::Shell(&line), None)],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("the program that the command"), "{e}");
        assert!(e.contains("choose another --json-out"), "{e}");
        let argv = [std::ffi::OsString::from("wc"), notes.clone().into()];
        let e = refuse_overwriting_command_files(
            &[Out::new("-o", &notes)],
            &[(CommandLine::Argv(&argv), None)],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("a file that the command"), "{e}");
        assert!(e.contains(&notes.display().to_string()), "{e}");
    }

    #[test]
    fn other_outputs_pass() {
        let dir = tempfile::tempdir().unwrap();
        let (prog, _) = files(dir.path());
        let line = format!("{} notes.c", prog.display());
        let out = dir.path().join("verdict.json");
        let other = dir.path().join("notes.c");
        // `notes.c` is relative to the command's directory, not to this one.
        let elsewhere = tempfile::tempdir().unwrap();
        refuse_overwriting_command_files(
            &[Out::new("--json-out", &out), Out::new("-o", &other)],
            &[(CommandLine::Shell(&line), Some(elsewhere.path()))],
        )
        .unwrap();
    }
}
