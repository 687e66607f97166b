//! The initramfs the guest boots into: the recipe's workload, built once by its
//! `build-initramfs.sh` (static `/init` and workload programs), and per variant the
//! modules the workload loads, in an uncompressed cpio archive put before it (the kernel
//! unpacks concatenated archives in order), since a module belongs to the kernel it was
//! built with.

use std::path::PathBuf;
use std::process::Command;

use super::build::BuiltKernel;
use super::ctx::KernelCtx;
use crate::steps::cache::Key;
use crate::steps::exec::Stdout;

impl KernelCtx {
    /// The workload's initramfs (`OUT/initramfs/workload.cpio.gz`) and its content hash.
    pub fn workload_initramfs(&self) -> anyhow::Result<(PathBuf, String)> {
        let r = &self.recipe;
        let dir = r.resolve(&r.workload.dir);
        let out = self.dir("initramfs/workload.cpio.gz");
        let key = Key::new("initramfs")
            .add("workload", crate::steps::cache::content_hash(&dir)?)
            .add("compiler", r.kernel.compiler.to_string())
            .add("arch", &r.kernel.arch)
            .add("tools", &self.tool_ids)
            .finish();
        let done = self.step("build initramfs", key, std::slice::from_ref(&out), |log| {
            std::fs::create_dir_all(out.parent().unwrap())?;
            let mut cmd = Command::new("bash");
            cmd.arg(dir.join("build-initramfs.sh"))
                .arg(&out)
                .arg("--cc")
                .arg(r.kernel.compiler.to_string());
            // /init runs on the guest's architecture, not necessarily this machine's.
            if r.kernel.arch == "arm64" {
                cmd.arg("--target").arg("aarch64-linux-gnu");
            }
            log.run(&mut cmd, Stdout::Log)?;
            if !out.is_file() {
                return Err(log.fail(format!("build-initramfs.sh made no {}", out.display())));
            }
            Ok(serde_json::json!({}))
        })?;
        let hash = done.hash_of(&out).to_string();
        Ok((out, hash))
    }

    /// The initramfs a variant boots: the workload's, plus the variant's own builds of the
    /// modules the workload loads (none: the workload's as it is).
    pub fn variant_initramfs(
        &self,
        base: &(PathBuf, String),
        k: &BuiltKernel,
    ) -> anyhow::Result<(PathBuf, String)> {
        let r = &self.recipe;
        if r.workload.modules.is_empty() {
            return Ok(base.clone());
        }
        let out = self.dir(&format!("initramfs/{}.cpio", k.variant));
        let key = Key::new("initramfs modules")
            .add("base", &base.1)
            .add("kernel", &k.hash)
            .add("modules", format!("{:?}", r.workload.modules))
            .add("order", "modules archive, then the workload's")
            .finish();
        let step = format!("initramfs {}", k.variant);
        let done = self.step(&step, key, std::slice::from_ref(&out), |log| {
            let stage = self.dir(&format!("initramfs/.{}", k.variant));
            crate::steps::fresh_dir(&stage)?;
            std::fs::create_dir_all(stage.join("lib/modules"))?;
            for m in &r.workload.modules {
                let built = k.dir.join(m);
                if !built.is_file() {
                    return Err(log.fail(format!(
                        "[workload] modules: {} was not built (is its option `=m` in the \
                         configuration? see {})",
                        built.display(),
                        k.config.display()
                    )));
                }
                std::fs::copy(
                    &built,
                    stage.join("lib/modules").join(built.file_name().unwrap()),
                )?;
            }
            check_module_depends(&r.workload.modules, &k.dir).map_err(|e| log.fail(e))?;
            let modules_cpio = stage.with_extension("cpio");
            log.run(
                Command::new("sh")
                    .arg("-c")
                    .arg("find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 > \"$1\"")
                    .arg("sh")
                    .arg(&modules_cpio)
                    .current_dir(&stage),
                Stdout::Log,
            )?;
            // The uncompressed archive first (as early microcode is): the kernel's
            // unpacker finds a second archive after an uncompressed one, but after a
            // gzip'd one it stops with "invalid magic at start of compressed archive".
            let mut bytes = std::fs::read(&modules_cpio)?;
            bytes.extend(std::fs::read(&base.0)?);
            std::fs::write(&out, bytes)?;
            Ok(serde_json::json!({}))
        })?;
        let hash = done.hash_of(&out).to_string();
        Ok((out, hash))
    }

    /// The kernel command line that loads the workload's modules (`kfdo.insmod=`).
    pub fn insmod_args(&self) -> String {
        let mods: Vec<String> = self
            .recipe
            .workload
            .modules
            .iter()
            .filter_map(|m| m.file_name())
            .map(|n| format!("/lib/modules/{}", n.to_string_lossy()))
            .collect();
        if mods.is_empty() {
            String::new()
        } else {
            format!("kfdo.insmod={}", mods.join(","))
        }
    }
}

/// The name a module goes by in `depends=` (its file name without `.ko`; `-` and `_` are
/// the same to the kernel).
fn module_name(path: &std::path::Path) -> String {
    let file = path.file_name().unwrap_or_default().to_string_lossy();
    file.trim_end_matches(".ko").replace('-', "_")
}

/// `/init` loads only the listed modules, and a module whose `depends=` names another
/// module fails to load ("Unknown symbol", ENOENT). This happens when a library the
/// module selects becomes `=m` with it: say so before anything boots.
fn check_module_depends(modules: &[PathBuf], tree: &std::path::Path) -> Result<(), String> {
    let listed: Vec<String> = modules.iter().map(|m| module_name(m)).collect();
    for m in modules {
        let path = tree.join(m);
        let bin = kfdo_elf::Binary::open(&path).map_err(|e| e.to_string())?;
        let Some(info) = bin.section_by_name(".modinfo") else {
            continue;
        };
        let start = info.offset as usize;
        let bytes = bin
            .data()
            .get(start..start + info.size as usize)
            .unwrap_or_default();
        let missing = missing_depends(bytes, &listed);
        if !missing.is_empty() {
            return Err(format!(
                "[workload] modules: {} depends on the module(s) {}, which the initramfs does \
                 not load: build them in (their CONFIG_ options `=y` in a fragment: a library \
                 a module selects becomes a module with it) or list them in `modules` before it",
                path.display(),
                missing.join(", ")
            ));
        }
    }
    Ok(())
}

/// The `depends=` entries of a `.modinfo` section (NUL-separated `key=value` strings)
/// that are not among `listed`.
fn missing_depends(modinfo: &[u8], listed: &[String]) -> Vec<String> {
    modinfo
        .split(|&b| b == 0)
        .filter_map(|kv| kv.strip_prefix(b"depends="))
        .flat_map(|v| {
            String::from_utf8_lossy(v)
                .split(',')
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|d| !d.is_empty() && !listed.contains(&d.replace('-', "_")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_as_depends_lists_them() {
        assert_eq!(
            module_name(std::path::Path::new("drivers/net/tun.ko")),
            "tun"
        );
        assert_eq!(
            module_name(std::path::Path::new("lib/crc-ccitt.ko")),
            "crc_ccitt"
        );
    }

    #[test]
    fn depends_not_listed_are_reported() {
        let info = b"license=GPL\0depends=crc32,bitrev\0intree=Y\0";
        let listed = vec!["tun".to_string(), "crc32".to_string()];
        assert_eq!(missing_depends(info, &listed), ["bitrev"]);
        assert!(missing_depends(b"depends=\0", &listed).is_empty());
    }
}
