//! The recipe: where a program's source comes from, how to build, train and
//! benchmark it. A small TOML file; the format is documented in
//! `recipes/README.md` and checked here, so a mistake is reported with the
//! file, the key and the fix before anything runs.

use std::path::{Path, PathBuf};

use anyhow::bail;
use serde::Deserialize;

use crate::steps::recipe_file::{check_table_names, name_ok, parse_text, quote, read_text};
use crate::vocabulary::{Compiler, CompilerName};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// Short name: the benchmark prefix in reports and the default output directory.
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub source: Source,
    pub build: Build,
    pub train: Train,
    /// One or more benchmarks, each judged separately (`[[bench]]`).
    #[serde(rename = "bench")]
    pub benches: Vec<Bench>,
    /// The file the recipe was read from (absolute).
    #[serde(skip)]
    pub path: PathBuf,
    /// Its directory: `{recipe}` in commands, `$RECIPE` in the build's environment.
    #[serde(skip)]
    pub dir: PathBuf,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// A Debian (bookworm) source package, fetched and unpacked with apt's signature checks.
    pub debian: Option<String>,
    /// Or a directory, relative to the recipe.
    pub path: Option<PathBuf>,
    /// Run once in an empty directory ($PREP) with $SRC set, before any build:
    /// flag-independent work such as `configure` or generated sources.
    pub prepare: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Build {
    /// Run with `sh -c` in an empty directory per variant, with CC, CXX, CFLAGS,
    /// CXXFLAGS, LDFLAGS, SRC, PREP and RECIPE in the environment.
    pub command: String,
    /// The program the build makes, relative to the build directory.
    pub binary: String,
    /// Optimization flags every variant shares (kfdo adds debug-info and profile flags).
    #[serde(default = "default_opt")]
    pub opt: String,
    /// `clang` (default), `clang-N`, `gcc` or `gcc-N` (see [`CompilerName`]).
    #[serde(default = "default_compiler")]
    pub compiler: CompilerName,
    /// Another architecture to build for (`aarch64-linux-gnu`; see [`super::target`]).
    pub target: Option<String>,
}

fn default_compiler() -> CompilerName {
    CompilerName::Is(Compiler::CLANG)
}

fn default_opt() -> String {
    "-O2".to_string()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Train {
    /// The profiling workload: a program and its arguments (no shell syntax,
    /// because emulated recording must run the program itself, not a shell).
    pub command: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bench {
    pub name: String,
    /// Run with `sh -c`; `{bin}` is the variant's program.
    pub command: String,
    /// Timed runs of each variant (default: 10).
    pub runs: Option<usize>,
}

impl Recipe {
    pub fn load(path: &Path) -> anyhow::Result<Recipe> {
        Recipe::from_text(path, &read_text(path)?)
    }

    /// The recipe in `text`, read from `path` (which names it in errors and anchors its
    /// relative paths).
    pub fn from_text(path: &Path, text: &str) -> anyhow::Result<Recipe> {
        let (mut r, canonical, dir): (Recipe, _, _) = parse_text(path, text, "recipe")?;
        r.path = canonical;
        r.dir = dir;
        r.validate()
            .map_err(|e| anyhow::anyhow!("recipe {}: {e}", path.display()))?;
        Ok(r)
    }

    fn validate(&self) -> anyhow::Result<()> {
        if !name_ok(&self.name) {
            bail!(
                "name = {:?}: use letters, digits and . _ + - only (it names directories)",
                self.name
            );
        }
        match (&self.source.debian, &self.source.path) {
            (Some(_), Some(_)) => bail!("[source] has both `debian` and `path`; give one"),
            (None, None) => bail!(
                "[source] needs `debian = \"PACKAGE\"` (a Debian source package) or `path = \"DIR\"`"
            ),
            (Some(p), None) if !name_ok(p) => {
                bail!("[source] debian = {p:?} is not a Debian source package name")
            }
            (None, Some(p)) => {
                let dir = self.dir.join(p);
                if !dir.is_dir() {
                    bail!(
                        "[source] path = {:?}: {} is not a directory (paths are relative to the recipe)",
                        p.display(),
                        dir.display()
                    );
                }
            }
            _ => {}
        }
        if self.build.command.trim().is_empty() {
            bail!("[build] command is empty");
        }
        if let Some(t) = &self.build.target {
            super::target::Target::parse(t)?;
            if !self.build.compiler.is_clang() {
                bail!(
                    "[build] target = {t:?} with compiler = \"{}\": cross builds use clang \
                     (--target); leave `compiler` out or name a clang release",
                    self.build.compiler
                );
            }
        }
        let bin = Path::new(&self.build.binary);
        if self.build.binary.is_empty()
            || bin.is_absolute()
            || bin
                .components()
                .any(|c| c == std::path::Component::ParentDir)
        {
            bail!(
                "[build] binary = {:?}: give the program's path relative to the build directory",
                self.build.binary
            );
        }
        let argv = self.train_argv(Path::new("/bin/true"))?;
        if argv.is_empty() {
            bail!("[train] command is empty");
        }
        if self.benches.is_empty() {
            bail!("no [[bench]] table: give at least one benchmark command");
        }
        check_table_names("bench", self.benches.iter().map(|b| b.name.as_str()))?;
        for b in &self.benches {
            if !b.command.contains("{bin}") {
                bail!(
                    "[[bench]] {:?}: command does not mention {{bin}}, so it would not run the variant's program",
                    b.name
                );
            }
            if b.runs == Some(0) || b.runs == Some(1) {
                bail!(
                    "[[bench]] {:?}: runs = {}: need at least 2 runs for a statistic",
                    b.name,
                    b.runs.unwrap()
                );
            }
        }
        Ok(())
    }

    /// `{bin}` and `{recipe}` replaced by shell-quoted paths.
    pub fn expand(&self, command: &str, bin: &Path) -> String {
        command
            .replace("{bin}", &quote(bin))
            .replace("{recipe}", &quote(&self.dir))
    }

    /// `command` with `{recipe}` expanded and `{bin}` left for the benchmark to fill in
    /// (with the variant's program, or with a counting launcher).
    pub fn expand_recipe(&self, command: &str) -> String {
        command.replace("{recipe}", &quote(&self.dir))
    }

    /// The training workload as an argv (program first).
    pub fn train_argv(&self, bin: &Path) -> anyhow::Result<Vec<String>> {
        let cmd = self.expand(&self.train.command, bin);
        let argv = shell_words::split(&cmd)
            .map_err(|e| anyhow::anyhow!("[train] command {:?}: {e}", self.train.command))?;
        const SHELL: &[&str] = &["|", "&&", "||", ";", ">", "<", ">>", "2>", "&"];
        if let Some(op) = argv.iter().find(|a| SHELL.contains(&a.as_str())) {
            bail!(
                "[train] command {:?} uses the shell operator `{op}`: give a program and its arguments only \
                 (emulated recording runs the program itself; wrap shell work in a script the program does not need)",
                self.train.command
            );
        }
        Ok(argv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> anyhow::Result<Recipe> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("recipe.toml");
        std::fs::write(&p, text).unwrap();
        Recipe::load(&p)
    }

    const GOOD: &str = r#"
name = "demo"
[source]
debian = "sqlite3"
[build]
command = "$CC $CFLAGS -o demo x.c $LDFLAGS"
binary = "demo"
[train]
command = "{bin} --size 5"
[[bench]]
name = "demo-run"
command = "{bin} --size 50"
"#;

    #[test]
    fn a_good_recipe_loads_and_expands() {
        let r = load(GOOD).unwrap();
        assert_eq!(r.build.opt, "-O2");
        assert_eq!(
            r.train_argv(Path::new("/o/b in/demo")).unwrap(),
            ["/o/b in/demo", "--size", "5"]
        );
        assert_eq!(
            r.expand(&r.benches[0].command, Path::new("/o/b in/demo")),
            "'/o/b in/demo' --size 50"
        );
    }

    #[test]
    fn mistakes_name_the_key() {
        let cases = [
            (GOOD.replace("debian = \"sqlite3\"", ""), "[source] needs"),
            (
                GOOD.replace("binary = \"demo\"", "binary = \"/x\""),
                "[build] binary",
            ),
            (
                GOOD.replace("{bin} --size 5", "{bin} | cat"),
                "shell operator",
            ),
            (
                GOOD.replace("{bin} --size 50", "./x"),
                "does not mention {bin}",
            ),
            (GOOD.replace("[train]", "[trian]"), "trian"),
            (
                GOOD.replace("name = \"demo\"", "name = \"a b\""),
                "name = \"a b\"",
            ),
            (format!("{GOOD}runs = 1\n"), "at least 2 runs"),
            (
                GOOD.replace("binary = \"demo\"", "binary = \"demo\"\ncompiler = \"icc\""),
                "compiler = \"icc\": use \"clang\"",
            ),
            (
                GOOD.replace("binary = \"demo\"", "binary = \"demo\"\ntarget = \"mips\""),
                "[build] target = \"mips\"",
            ),
            (
                GOOD.replace(
                    "binary = \"demo\"",
                    "binary = \"demo\"\ntarget = \"aarch64-linux-gnu\"\ncompiler = \"gcc\"",
                ),
                "cross builds use clang (--target)",
            ),
        ];
        for (text, want) in cases {
            let e = format!("{:#}", load(&text).unwrap_err());
            assert!(e.contains(want), "{want:?} not in {e:?}");
            assert!(e.contains("recipe.toml"), "file not named in {e:?}");
        }
    }
}
