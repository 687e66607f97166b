//! Packages of a kernel, as a distribution or a site installs it: `make bindeb-pkg` and
//! `make binrpm-pkg` from the variant's own build directory, with a version that names
//! the variant and the profile (`LOCALVERSION=-kfdo-autofdo-1a2b3c4d`, set when the
//! variant was built), so that the package says which build and which profile it holds.

use std::path::PathBuf;

use super::build::BuiltKernel;
use super::config::make;
use super::ctx::KernelCtx;
use super::source::KernelSource;
use crate::steps::cache::Key;
use crate::steps::exec::Stdout;

impl KernelCtx {
    /// The .deb and .rpm packages of `k`, in `OUT/packages`, named with its tag.
    pub fn package(&self, src: &KernelSource, k: &BuiltKernel) -> anyhow::Result<Vec<PathBuf>> {
        let r = &self.recipe;
        let out = self.dir("packages");
        let tag = &k.tag;
        let key = Key::new("packages")
            .add("kernel", &k.hash)
            .add("tag", tag)
            .finish();
        let done = self.step("packages", key, &[], |log| {
            crate::steps::fresh_dir(&out)?;
            for target in ["bindeb-pkg", "binrpm-pkg"] {
                // Both targets number their build with scripts/build-version (.version + 1)
                // and rebuild the kernel with it as KBUILD_BUILD_VERSION; from 0 that is 1,
                // the judged build's own, so the packaged kernel is byte for byte the judged
                // one and the tree stays as the build step left it (no rebuild next run).
                std::fs::write(k.dir.join(".version"), "0\n")?;
                let mut cmd = make(src, &k.dir, &r.kernel.arch, &k.make_vars);
                cmd.env("KBUILD_BUILD_TIMESTAMP", "kfdo")
                    .env("KBUILD_BUILD_USER", "kfdo")
                    .env("KBUILD_BUILD_HOST", "kfdo")
                    .env("KBUILD_BUILD_VERSION", "1")
                    .arg(format!("-j{}", self.opts.jobs.max(1)))
                    .arg(target);
                log.run(&mut cmd, Stdout::Log)?;
            }
            // kbuild leaves the .deb files beside the build directory and the .rpm files
            // under its rpmbuild/RPMS (measured with 7.2: linux-image-7.2.13-TAG_7.2.13-1_amd64.deb,
            // kernel-7.2.13_TAG-1.x86_64.rpm with the tag's '-' as '_').
            let mut found = Vec::new();
            let mut collect = |files: Vec<PathBuf>, ext: &str| -> anyhow::Result<()> {
                for e in files {
                    let name = e
                        .file_name()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .to_string();
                    // rpm versions cannot hold '-': binrpm-pkg writes the tag with '_'.
                    let named =
                        name.contains(tag.as_str()) || name.contains(&tag.replace('-', "_"));
                    if name.ends_with(ext) && named {
                        let to = out.join(&name);
                        std::fs::rename(&e, &to).or_else(|_| std::fs::copy(&e, &to).map(|_| ()))?;
                        found.push(to);
                    }
                }
                Ok(())
            };
            let beside: Vec<PathBuf> = std::fs::read_dir(k.dir.parent().unwrap())?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect();
            collect(beside, ".deb")?;
            collect(walk(&k.dir.join("rpmbuild"))?, ".rpm")?;
            if !found
                .iter()
                .any(|p| p.extension().is_some_and(|e| e == "deb"))
                || !found
                    .iter()
                    .any(|p| p.extension().is_some_and(|e| e == "rpm"))
            {
                return Err(log.fail(format!(
                    "packaging made {found:?}; expected a .deb and a .rpm named with {tag}"
                )));
            }
            Ok(serde_json::json!({ "packages": found }))
        })?;
        let list = done
            .facts
            .get("packages")
            .and_then(|v| serde_json::from_value::<Vec<PathBuf>>(v.clone()).ok())
            .unwrap_or_default();
        Ok(list)
    }
}

/// The files under `dir` (recursively), none when it does not exist.
fn walk(dir: &std::path::Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(out);
    };
    for e in rd {
        let p = e?.path();
        if p.is_dir() {
            out.extend(walk(&p)?);
        } else {
            out.push(p);
        }
    }
    Ok(out)
}
