//! The initramfs the guest boots into: the recipe's workload, built once by its
//! `build-initramfs.sh` (static `/init` and workload programs), and per variant the
//! modules the workload loads, in an uncompressed cpio archive put before it (the kernel
//! unpacks concatenated archives in order), since a module belongs to the kernel it was
//! built with.

use std::path::PathBuf;
use std::process::Command;

use super::build::BuiltKernel;
use super::KernelCtx;
use crate::cache::Key;
use crate::exec::Stdout;

impl KernelCtx {
    /// The workload's initramfs (`OUT/initramfs/workload.cpio.gz`) and its content hash.
    pub fn workload_initramfs(&self) -> anyhow::Result<(PathBuf, String)> {
        let r = &self.recipe;
        let dir = r.resolve(&r.workload.dir);
        let out = self.dir("initramfs/workload.cpio.gz");
        let key = Key::new("initramfs")
            .add("workload", crate::cache::content_hash(&dir)?)
            .add("compiler", &r.kernel.compiler)
            .add("tools", &self.tool_ids)
            .finish();
        let done = self.step("build initramfs", key, std::slice::from_ref(&out), |log| {
            std::fs::create_dir_all(out.parent().unwrap())?;
            log.run(
                Command::new("bash")
                    .arg(dir.join("build-initramfs.sh"))
                    .arg(&out)
                    .arg("--cc")
                    .arg(&r.kernel.compiler),
                Stdout::Log,
            )?;
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
            crate::ctx::fresh_dir(&stage)?;
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
