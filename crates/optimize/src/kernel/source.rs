//! The kernel source: a Debian binary package that carries the source tarball
//! (`linux-source-7.2` from Debian's unstable suite; `linux-source-6.1` from bookworm),
//! fetched with an apt configuration of kfdo's own and checked against Debian's signed
//! index, or a tarball or tree the recipe names. Unpacked once into a shared cache
//! (`~/.cache/kfdo/kernel-src`); every variant builds from it out of tree (`O=`), so the
//! tree stays clean.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use super::ctx::KernelCtx;
use crate::steps::cache::Key;
use crate::steps::exec::Stdout;

/// An unpacked kernel tree and what identifies it.
#[derive(Debug, Clone)]
pub struct KernelSource {
    pub dir: PathBuf,
    /// `7.2.13` (from the top Makefile).
    pub release: String,
    /// Identifies the tree's content for downstream keys (the package's SHA256, or the
    /// tarball's).
    pub id: String,
    /// Whether its Kconfig has CONFIG_AUTOFDO_CLANG (Linux >= 6.13).
    pub has_autofdo_kconfig: bool,
    /// Whether its Kconfig has CONFIG_PROPELLER_CLANG.
    pub has_propeller_kconfig: bool,
}

/// `~/.cache/kfdo/kernel-src` (or `$KFDO_KERNEL_SRC_CACHE`).
fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("KFDO_KERNEL_SRC_CACHE") {
        return PathBuf::from(d);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
        });
    base.join("kfdo/kernel-src")
}

/// `VERSION.PATCHLEVEL.SUBLEVEL` of a tree, from its top Makefile.
pub fn release_of(tree: &Path) -> anyhow::Result<String> {
    let mk = tree.join("Makefile");
    let text = std::fs::read_to_string(&mk).with_context(|| {
        format!(
            "{} is not a kernel tree (no readable Makefile)",
            tree.display()
        )
    })?;
    let var = |name: &str| {
        text.lines().find_map(|l| {
            l.strip_prefix(name)?
                .trim_start()
                .strip_prefix('=')
                .map(|v| v.trim().to_string())
        })
    };
    match (var("VERSION"), var("PATCHLEVEL"), var("SUBLEVEL")) {
        (Some(v), Some(p), Some(s)) => Ok(format!("{v}.{p}.{s}")),
        _ => anyhow::bail!(
            "{}: no VERSION / PATCHLEVEL / SUBLEVEL: is it a Linux source tree?",
            mk.display()
        ),
    }
}

/// Whether `arch/Kconfig` defines `config NAME`.
fn has_kconfig(tree: &Path, name: &str) -> bool {
    std::fs::read_to_string(tree.join("arch/Kconfig"))
        .is_ok_and(|t| t.lines().any(|l| l.trim() == format!("config {name}")))
}

fn facts(dir: PathBuf, id: String) -> anyhow::Result<KernelSource> {
    Ok(KernelSource {
        release: release_of(&dir)?,
        has_autofdo_kconfig: has_kconfig(&dir, "AUTOFDO_CLANG"),
        has_propeller_kconfig: has_kconfig(&dir, "PROPELLER_CLANG"),
        dir,
        id,
    })
}

impl KernelCtx {
    /// The recipe's kernel tree, fetched and unpacked if need be.
    pub fn kernel_source(&self) -> anyhow::Result<KernelSource> {
        let r = &self.recipe;
        let named = r.resolve(Path::new(&r.kernel.source));
        if named.is_dir() {
            self.progress
                .say(format!("kernel source: {} (a tree)", named.display()));
            let id = format!("tree {}", named.display());
            return facts(named, id);
        }
        let key = Key::new("kernel source")
            .add("source", &r.kernel.source)
            .add("suite", &r.kernel.suite)
            .add(
                "fetcher",
                crate::steps::scripts::identity("fetch-debian-binary.sh"),
            )
            .finish();
        if let Some(done) = self.cache.lookup("kernel source", &key) {
            match done.fact("dir") {
                Some(d) if Path::new(d).join("Makefile").is_file() => {}
                _ => self.cache.forget("kernel source"),
            }
        }
        let done = self.step("kernel source", key, &[], |log| {
            let (tarball, id, label) = if named.is_file() {
                let id = crate::steps::cache::content_hash(&named)?;
                (named.clone(), id, named.display().to_string())
            } else {
                self.fetch_package(log)?
            };
            let dest = cache_root().join(crate::steps::cache::file_name(&label));
            let stamp = dest.join(".kfdo-complete");
            if std::fs::read_to_string(&stamp).ok().as_deref() != Some(id.as_str()) {
                let tmp = dest.with_extension("unpacking");
                if tmp.exists() {
                    std::fs::remove_dir_all(&tmp)?;
                }
                std::fs::create_dir_all(&tmp)?;
                log.note(&format!(
                    "unpacking {} into {}",
                    tarball.display(),
                    dest.display()
                ));
                log.run(
                    Command::new("tar")
                        .arg("-xf")
                        .arg(&tarball)
                        .arg("-C")
                        .arg(&tmp)
                        .arg("--strip-components=1"),
                    Stdout::Log,
                )?;
                if dest.exists() {
                    std::fs::remove_dir_all(&dest)?;
                }
                std::fs::rename(&tmp, &dest)?;
                std::fs::write(&stamp, &id)?;
            }
            Ok(serde_json::json!({ "dir": dest, "id": id }))
        })?;
        let dir = PathBuf::from(done.fact("dir").unwrap_or_default());
        let id = done.fact("id").unwrap_or_default().to_string();
        let src = facts(dir, id)?;
        self.progress.say(format!(
            "kernel source: Linux {} in {}",
            src.release,
            src.dir.display()
        ));
        Ok(src)
    }

    /// Downloads the recipe's package; returns the tarball inside it, its id and a label.
    fn fetch_package(
        &self,
        log: &crate::steps::exec::Log,
    ) -> anyhow::Result<(PathBuf, String, String)> {
        let r = &self.recipe;
        let script = crate::steps::scripts::write(&self.out, "fetch-debian-binary.sh")?;
        let out = log.run(
            Command::new("bash")
                .arg(&script)
                .arg(&r.kernel.source)
                .arg(&r.kernel.suite),
            Stdout::Capture,
        )?;
        let lines: Vec<&str> = out.lines().collect();
        let [deb, version, sha] = lines[lines.len().saturating_sub(3)..] else {
            return Err(log.fail(format!(
                "the fetcher printed {out:?}, not DEB, VERSION, SHA256"
            )));
        };
        // The package holds usr/src/linux-source-X.Y.tar.xz; take it out.
        let extract = self.out.join(".kfdo/kernel-deb");
        if extract.exists() {
            std::fs::remove_dir_all(&extract)?;
        }
        std::fs::create_dir_all(&extract)?;
        log.run(
            Command::new("dpkg-deb").arg("-x").arg(deb).arg(&extract),
            Stdout::Log,
        )?;
        let tarball = std::fs::read_dir(extract.join("usr/src"))
            .ok()
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("linux-source") && n.contains(".tar"))
            })
            .ok_or_else(|| {
                log.fail(format!(
                    "{deb} holds no usr/src/linux-source-*.tar.*: is {} a kernel source package?",
                    r.kernel.source
                ))
            })?;
        Ok((
            tarball,
            sha.to_string(),
            format!("{}_{version}", r.kernel.source),
        ))
    }
}
