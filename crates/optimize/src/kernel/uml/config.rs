//! The twins' configuration: the recipe's starting point (`tinyconfig`) for `ARCH=um`
//! with the recipe's fragments merged in, as for the real kernel, except what a UML
//! twin cannot take: it has no loadable modules (the initramfs carries the x86 kernel's
//! `.ko` files), so module options are built in, and the x86-only settings (the serial
//! console, the CPU vendors, KASLR) do not exist for UML and are left out, each named in
//! the summary.

use std::path::PathBuf;
use std::process::Command;

use crate::kernel::config::{assignments, last_wins, make, not_kept, toolchain};
use crate::kernel::ctx::KernelCtx;
use crate::kernel::source::KernelSource;
use crate::steps::cache::Key;
use crate::steps::exec::Stdout;

/// UML's `ARCH=`.
pub const ARCH: &str = "um";

/// The fragments' settings for a twin: modules built in, module support off.
pub fn uml_settings(fragments: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = last_wins(fragments)
        .into_iter()
        .filter(|(k, _)| !k.starts_with("MODULE"))
        .map(|(k, v)| if v == "m" { (k, "y".into()) } else { (k, v) })
        .collect();
    out.push(("MODULES".into(), "n".into()));
    out
}

/// A fragment file's text for `settings`.
fn fragment_text(settings: &[(String, String)]) -> String {
    settings
        .iter()
        .map(|(k, v)| match v.as_str() {
            "n" => format!("# CONFIG_{k} is not set\n"),
            "y" | "m" => format!("CONFIG_{k}={v}\n"),
            _ if v.parse::<i64>().is_ok() || v.starts_with("0x") => format!("CONFIG_{k}={v}\n"),
            _ => format!("CONFIG_{k}=\"{v}\"\n"),
        })
        .collect()
}

/// The twins' base configuration.
pub struct UmlBase {
    /// `OUT/uml/config/.config` and its content hash.
    pub config: (PathBuf, String),
    /// The recipe's settings UML did not keep (`CONFIG_X=y`): x86-only options.
    pub left_out: Vec<String>,
}

impl KernelCtx {
    /// The recipe's configuration for UML: `OUT/uml/config/.config`.
    pub fn uml_base_config(&self, src: &KernelSource) -> anyhow::Result<UmlBase> {
        let r = &self.recipe;
        let compiler = r.compiler()?;
        let dir = self.dir("uml/config");
        let config = dir.join(".config");
        let mut wanted = Vec::new();
        for f in &r.kernel.fragments {
            wanted.extend(assignments(&std::fs::read_to_string(r.resolve(f))?));
        }
        let settings = uml_settings(&wanted);
        let fragment = fragment_text(&settings);
        let key = Key::new("config uml base")
            .add("source", &src.id)
            .add("start", &r.kernel.config)
            .add("compiler", r.kernel.compiler.to_string())
            .add("tools", &self.tool_ids)
            .add("fragment", &fragment)
            .finish();
        let done = self.step(
            "configure uml base",
            key,
            std::slice::from_ref(&config),
            |log| {
                crate::steps::fresh_dir(&dir)?;
                let tc = toolchain(compiler);
                log.run(
                    make(src, &dir, ARCH, &tc).arg(&r.kernel.config),
                    Stdout::Log,
                )?;
                let frag = dir.join("kfdo-uml.config");
                std::fs::write(&frag, &fragment)?;
                log.run(
                    Command::new(src.dir.join("scripts/kconfig/merge_config.sh"))
                        .arg("-m")
                        .arg("-O")
                        .arg(&dir)
                        .arg(&config)
                        .arg(&frag)
                        .current_dir(&src.dir),
                    Stdout::Log,
                )?;
                log.run(make(src, &dir, ARCH, &tc).arg("olddefconfig"), Stdout::Log)?;
                let text = std::fs::read_to_string(&config)?;
                let left_out: Vec<String> = not_kept(&text, &settings)
                    .into_iter()
                    .map(|(k, want, _)| format!("CONFIG_{k}={want}"))
                    .collect();
                Ok(serde_json::json!({ "left_out": left_out }))
            },
        )?;
        let left_out = done.facts["left_out"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        Ok(UmlBase {
            config: (config.clone(), done.hash_of(&config).to_string()),
            left_out,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_are_built_in_and_module_support_is_off() {
        let s = |k: &str, v: &str| (k.to_string(), v.to_string());
        let got = uml_settings(&[
            s("NET", "y"),
            s("MODULES", "y"),
            s("MODULE_UNLOAD", "y"),
            s("TUN", "m"),
            s("NR_CPUS", "4"),
            s("NET", "y"),
        ]);
        assert_eq!(
            got,
            vec![
                s("NET", "y"),
                s("TUN", "y"),
                s("NR_CPUS", "4"),
                s("MODULES", "n")
            ]
        );
        assert_eq!(
            fragment_text(&got),
            "CONFIG_NET=y\nCONFIG_TUN=y\nCONFIG_NR_CPUS=4\n# CONFIG_MODULES is not set\n"
        );
    }
}
