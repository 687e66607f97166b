//! Kernel configurations: the recipe's starting point (tinyconfig, defconfig, or the
//! user's own .config) with the workload's fragments merged in, once; then each variant's
//! changes on top (AUTOFDO_CLANG, LTO_CLANG_THIN, the recipe's own), checked to have
//! stuck, and shown as a config diff in the report.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::ctx::KernelCtx;
use super::source::KernelSource;
use super::variant::KernelVariant;
use crate::steps::cache::Key;
use crate::steps::exec::{Log, Stdout};
use crate::vocabulary::Compiler;

/// `make -C SRC O=DIR ARCH=x86_64` and the toolchain of `compiler`.
pub fn make(src: &KernelSource, dir: &Path, arch: &str, vars: &[(String, String)]) -> Command {
    let mut cmd = Command::new("make");
    cmd.arg("-C")
        .arg(&src.dir)
        .arg(format!("O={}", dir.display()));
    cmd.arg(format!("ARCH={arch}"));
    for (k, v) in vars {
        cmd.arg(format!("{k}={v}"));
    }
    cmd
}

/// The toolchain variables of a compiler (no profile): `LLVM=-19` or `CC=gcc-12`.
pub fn toolchain(compiler: Compiler) -> Vec<(String, String)> {
    match compiler.llvm_suffix() {
        Some(suffix) => vec![("LLVM".into(), suffix)],
        None => vec![("CC".into(), compiler.command())],
    }
}

/// `CONFIG_X=value` lines of a fragment or .config (comments and blanks skipped;
/// `# CONFIG_X is not set` read as `n`).
pub fn assignments(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            if let Some(rest) = l.strip_prefix("# CONFIG_") {
                let sym = rest.strip_suffix(" is not set")?;
                return Some((sym.to_string(), "n".to_string()));
            }
            let (k, v) = l.strip_prefix("CONFIG_")?.split_once('=')?;
            Some((k.to_string(), v.trim_matches('"').to_string()))
        })
        .collect()
}

/// `assignments` of several fragments in merge order, each symbol's last value only (a
/// later fragment overrides an earlier one, as merge_config.sh merges them).
pub(crate) fn last_wins(all: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (k, v) in all {
        match out.iter_mut().find(|(o, _)| o == k) {
            Some(slot) => slot.1 = v.clone(),
            None => out.push((k.clone(), v.clone())),
        }
    }
    out
}

/// The value of `sym` in a .config (`n` when absent or not set).
pub fn value_in(config: &str, sym: &str) -> String {
    assignments(config)
        .into_iter()
        .rev()
        .find(|(k, _)| k == sym)
        .map(|(_, v)| v)
        .unwrap_or_else(|| "n".into())
}

/// Requested settings that the configuration did not keep (a dependency missing, a symbol
/// this kernel does not have): `(symbol, wanted, got)`.
pub fn not_kept(config: &str, wanted: &[(String, String)]) -> Vec<(String, String, String)> {
    wanted
        .iter()
        .filter_map(|(k, v)| {
            let got = value_in(config, k);
            (got != *v).then(|| (k.clone(), v.clone(), got))
        })
        .collect()
}

pub(crate) fn check_kept(
    log: &Log,
    config: &Path,
    wanted: &[(String, String)],
    what: &str,
) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(config)?;
    let missing = not_kept(&text, wanted);
    if missing.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = missing
        .iter()
        .map(|(k, want, got)| format!("CONFIG_{k}={want} (the configuration has {got})"))
        .collect();
    Err(log.fail(format!(
        "{what}: {} did not stick: a dependency is not enabled, or this kernel has no such \
         option; look it up with `make menuconfig` (search /{}) and enable what it depends on",
        list.join(", "),
        missing[0].0
    )))
}

impl KernelCtx {
    /// The recipe's configuration with the fragments merged in: `OUT/config/base/.config`.
    pub fn base_config(&self, src: &KernelSource) -> anyhow::Result<(PathBuf, String)> {
        let r = &self.recipe;
        let compiler = r.compiler()?;
        let dir = self.dir("config/base");
        let config = dir.join(".config");
        let mut key = Key::new("config base")
            .add("source", &src.id)
            .add("start", &r.kernel.config)
            .add("compiler", r.kernel.compiler.to_string())
            .add("tools", &self.tool_ids);
        if let Some(f) = r.config_file() {
            key = key.add("config file", crate::steps::cache::content_hash(&f)?);
        }
        let mut wanted = Vec::new();
        for f in &r.kernel.fragments {
            let p = r.resolve(f);
            let text = std::fs::read_to_string(&p)?;
            wanted.extend(assignments(&text));
            key = key.add("fragment", text);
        }
        let done = self.step(
            "configure base",
            key.finish(),
            std::slice::from_ref(&config),
            |log| {
                crate::steps::fresh_dir(&dir)?;
                let tc = toolchain(compiler);
                match r.config_file() {
                    Some(f) => {
                        std::fs::copy(&f, &config)?;
                    }
                    None => {
                        log.run(
                            make(src, &dir, &r.kernel.arch, &tc).arg(&r.kernel.config),
                            Stdout::Log,
                        )?;
                    }
                }
                if !r.kernel.fragments.is_empty() {
                    let frags: Vec<PathBuf> =
                        r.kernel.fragments.iter().map(|f| r.resolve(f)).collect();
                    log.run(
                        Command::new(src.dir.join("scripts/kconfig/merge_config.sh"))
                            .arg("-m")
                            .arg("-O")
                            .arg(&dir)
                            .arg(&config)
                            .args(&frags)
                            .current_dir(&src.dir),
                        Stdout::Log,
                    )?;
                }
                log.run(
                    make(src, &dir, &r.kernel.arch, &tc).arg("olddefconfig"),
                    Stdout::Log,
                )?;
                check_kept(log, &config, &last_wins(&wanted), "the recipe's fragments")?;
                Ok(serde_json::json!({}))
            },
        )?;
        Ok((config.clone(), done.hash_of(&config).to_string()))
    }

    /// A variant's configuration in its build directory: the base plus its changes,
    /// refreshed for its compiler. Returns the .config and its content hash.
    pub fn variant_config(
        &self,
        src: &KernelSource,
        base: &(PathBuf, String),
        v: &KernelVariant,
    ) -> anyhow::Result<(PathBuf, String)> {
        let dir = self.dir(&format!("build/{}", v.name));
        let step = format!("configure {}", v.name);
        self.configure_on(src, base, v, &dir, &self.recipe.kernel.arch, &step)
    }

    /// `v`'s changes on the configuration `base`, for `arch`, in `dir`, as the step `step`.
    pub(crate) fn configure_on(
        &self,
        src: &KernelSource,
        base: &(PathBuf, String),
        v: &KernelVariant,
        dir: &Path,
        arch: &str,
        step: &str,
    ) -> anyhow::Result<(PathBuf, String)> {
        let config = dir.join(".config");
        let changes: Vec<(String, String)> = v
            .kconfig
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut key = Key::new("config variant")
            .add("base", &base.1)
            .add("compiler", v.compiler.command())
            .add("tools", &self.tool_ids)
            .add("changes", format!("{changes:?}"));
        // The recipe's own architecture keeps the key it always had.
        if arch != self.recipe.kernel.arch {
            key = key.add("arch", arch);
        }
        let done = self.step(step, key.finish(), std::slice::from_ref(&config), |log| {
            std::fs::create_dir_all(dir)?;
            std::fs::copy(&base.0, &config)?;
            if !changes.is_empty() {
                let mut cmd = Command::new(src.dir.join("scripts/config"));
                cmd.arg("--file").arg(&config);
                for (k, val) in &changes {
                    match val.as_str() {
                        "y" => cmd.arg("--enable").arg(k),
                        "n" => cmd.arg("--disable").arg(k),
                        "m" => cmd.arg("--module").arg(k),
                        _ => cmd.arg("--set-val").arg(k).arg(val),
                    };
                }
                log.run(&mut cmd, Stdout::Log)?;
            }
            log.run(
                make(src, dir, arch, &toolchain(v.compiler)).arg("olddefconfig"),
                Stdout::Log,
            )?;
            check_kept(log, &config, &changes, &format!("variant '{}'", v.name))?;
            Ok(serde_json::json!({}))
        })?;
        Ok((config.clone(), done.hash_of(&config).to_string()))
    }

    /// `scripts/diffconfig` of the base and a variant: what the variant changed.
    pub fn config_diff(&self, src: &KernelSource, base: &Path, variant: &Path) -> String {
        Command::new(src.dir.join("scripts/diffconfig"))
            .arg(base)
            .arg(variant)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_else(|| "(scripts/diffconfig did not run)".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_are_read_and_unkept_settings_named() {
        let merged = last_wins(&[
            ("A".into(), "y".into()),
            ("B".into(), "y".into()),
            ("A".into(), "n".into()),
        ]);
        assert_eq!(
            merged,
            [("A".to_string(), "n".to_string()), ("B".into(), "y".into())]
        );
        let cfg = "# comment\nCONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x y\"\nCONFIG_D=m\n";
        assert_eq!(value_in(cfg, "A"), "y");
        assert_eq!(value_in(cfg, "B"), "n");
        assert_eq!(value_in(cfg, "C"), "x y");
        assert_eq!(value_in(cfg, "E"), "n");
        let want = vec![
            ("A".to_string(), "y".to_string()),
            ("D".to_string(), "y".to_string()),
            ("B".to_string(), "n".to_string()),
        ];
        assert_eq!(
            not_kept(cfg, &want),
            vec![("D".to_string(), "y".to_string(), "m".to_string())]
        );
    }
}
