//! Building a kernel variant the way kbuild builds it: out of tree (`O=OUT/build/VARIANT`),
//! with the variant's toolchain and make variables (`CLANG_AUTOFDO_PROFILE=`, `KCFLAGS=`),
//! `bzImage` and, when the configuration has modules, `modules`. kbuild rebuilds only what
//! a changed command line or source needs, so a rebuild with a new profile keeps nothing
//! stale and a rerun with nothing changed is quick.

use std::path::{Path, PathBuf};

use super::config::{make, value_in};
use super::ctx::KernelCtx;
use super::gcc_warnings;
use super::source::KernelSource;
use super::variant::{fdo_of, KernelVariant};
use crate::steps::cache::Key;
use crate::steps::exec::Stdout;

/// A built kernel.
#[derive(Debug, Clone)]
pub struct BuiltKernel {
    pub variant: String,
    pub dir: PathBuf,
    /// What QEMU boots: arch/x86/boot/bzImage or arch/arm64/boot/Image.
    pub image: PathBuf,
    pub vmlinux: PathBuf,
    /// Content hash of the vmlinux (identifies the build for downstream keys).
    pub hash: String,
    /// The make variables it was built with (shown in the report).
    pub make_vars: Vec<(String, String)>,
    /// Its .config.
    pub config: PathBuf,
    /// Whether it has loadable modules.
    pub modules: bool,
    /// `kfdo-VARIANT-PROFILEHASH`: its LOCALVERSION, so `uname -r` and its packages say
    /// which build and which profile they hold.
    pub tag: String,
    /// What its compiler said of the profile (GCC's warnings, counted), for the summary.
    pub notes: Vec<String>,
    /// Kernel command-line words every boot of it needs (a BOLTed kernel: `nokaslr`).
    pub boot_args: String,
}

/// The LOCALVERSION tag of a variant built with a profile of content hash `profile`.
pub fn tag_of(variant: &str, profile: Option<&str>) -> String {
    let p = profile.map_or("noprofile", |h| &h[..h.len().min(8)]);
    format!("kfdo-{}-{p}", variant.replace('+', "-"))
}

impl KernelCtx {
    /// Builds `v` from its configuration; `profile` (path, content hash) when it reads one,
    /// `propeller` (the Propeller profiles' prefix, their content hash) when it relinks.
    pub fn build_kernel(
        &self,
        src: &KernelSource,
        v: &KernelVariant,
        config: &(PathBuf, String),
        profile: Option<(&Path, &str)>,
        propeller: Option<(&Path, &str)>,
    ) -> anyhow::Result<BuiltKernel> {
        let r = &self.recipe;
        let dir = self.dir(&format!("build/{}", v.name));
        let (image_target, image_path) = boot_image(&r.kernel.arch);
        let image = dir.join(image_path);
        let vmlinux = dir.join("vmlinux");
        let tag = tag_of(&v.name, profile.map(|p| p.1));
        // The compiler reads the profile through a path named by its content: kbuild
        // rebuilds an object when its command line changes, not when a file it names does,
        // so a new profile at the old path would leave objects built with the old one.
        // (A directory of `.gcda` counts is named by its content already.)
        let profile_path = match profile {
            Some((path, _)) if path.is_dir() => Some(path.to_path_buf()),
            Some((path, hash)) => Some(content_addressed(path, hash)?),
            None => None,
        };
        let propeller_prefix = match propeller {
            Some((prefix, hash)) => Some(content_addressed_prefix(prefix, hash)?),
            None => None,
        };
        // GCC names an object's counts after its path as the compiler saw it: the
        // physical build directory (its configuration step made it).
        let physical = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
        let mut vars = v.make_vars(
            fdo_of(r),
            profile_path.as_deref(),
            propeller_prefix.as_deref(),
            &physical,
        );
        // Set at build time (not only for packaging), so that packaging does not
        // rebuild: the packaged kernel is the judged one.
        vars.push(("LOCALVERSION".into(), format!("-{tag}")));
        let config_text = std::fs::read_to_string(&config.0)?;
        let modules = value_in(&config_text, "MODULES") == "y";
        let step = format!("build {}", v.name);
        let mut key = Key::new("kernel build")
            .add("source", &src.id)
            .add("config", &config.1)
            .add("tools", &self.tool_ids)
            .add("vars", format!("{vars:?}"))
            .add("profile", profile.map(|p| p.1).unwrap_or(""));
        if let Some((_, hash)) = propeller {
            key = key.add("propeller", hash);
        }
        let key = key.finish();
        let outputs = [image.clone(), vmlinux.clone()];
        let log_path = self.log_path(&step);
        let done = self.step(&step, key, &outputs, |log| {
            let mut cmd = make(src, &dir, &r.kernel.arch, &vars);
            // A fixed version string: an unchanged rebuild then makes the same vmlinux, and
            // nothing downstream (recording, profile) runs again.
            cmd.env("KBUILD_BUILD_TIMESTAMP", "kfdo")
                .env("KBUILD_BUILD_USER", "kfdo")
                .env("KBUILD_BUILD_HOST", "kfdo")
                .env("KBUILD_BUILD_VERSION", "1");
            cmd.arg(format!("-j{}", self.opts.jobs.max(1)))
                .arg(image_target);
            if modules {
                cmd.arg("modules");
            }
            log.run(&mut cmd, Stdout::Log)?;
            for f in &outputs {
                if !f.is_file() {
                    return Err(log.fail(format!("the build made no {}", f.display())));
                }
            }
            let notes = match profile {
                Some(_) if !v.is_clang() => gcc_warnings::notes(&v.name, &log_path),
                _ => Vec::new(),
            };
            Ok(serde_json::json!({ "notes": notes }))
        })?;
        let notes = done.facts["notes"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|n| n.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        Ok(BuiltKernel {
            variant: v.name.clone(),
            hash: done.hash_of(&vmlinux).to_string(),
            dir,
            image,
            vmlinux,
            make_vars: vars,
            config: config.0.clone(),
            modules,
            tag,
            notes,
            boot_args: String::new(),
        })
    }
}

/// A copy of the profile at `DIR/by-hash/HASH16.afdo` beside it (made once), so that its
/// path changes whenever its content does.
pub(crate) fn content_addressed(profile: &Path, hash: &str) -> anyhow::Result<PathBuf> {
    let dir = profile
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join("by-hash");
    let ext = profile
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("afdo");
    let path = dir.join(format!("{}.{ext}", &hash[..hash.len().min(16)]));
    if !path.is_file() {
        std::fs::create_dir_all(&dir)?;
        let tmp = path.with_extension("tmp");
        std::fs::copy(profile, &tmp)?;
        std::fs::rename(&tmp, &path)?;
    }
    Ok(path)
}

/// The Propeller profiles `PREFIX_cc_profile.txt` and `PREFIX_ld_profile.txt` copied to
/// `DIR/by-hash/HASH16_*` (once): the prefix kbuild gets changes with their content.
fn content_addressed_prefix(prefix: &Path, hash: &str) -> anyhow::Result<PathBuf> {
    let (cc, ld) = kfdo_convert::propeller_paths(prefix);
    let dir = prefix
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join("by-hash");
    let new_prefix = dir.join(&hash[..hash.len().min(16)]);
    let (new_cc, new_ld) = kfdo_convert::propeller_paths(&new_prefix);
    std::fs::create_dir_all(&dir)?;
    for (from, to) in [(cc, new_cc), (ld, new_ld)] {
        if !to.is_file() {
            let tmp = to.with_extension("tmp");
            std::fs::copy(&from, &tmp)?;
            std::fs::rename(&tmp, &to)?;
        }
    }
    Ok(new_prefix)
}

/// The make target of the image QEMU boots, and where kbuild writes it: x86's bzImage;
/// arm64's uncompressed `Image` (QEMU's `-kernel` loads it as the arm64 boot protocol
/// describes, which is what a boot loader does).
fn boot_image(arch: &str) -> (&'static str, &'static str) {
    match arch {
        "arm64" => ("Image", "arch/arm64/boot/Image"),
        _ => ("bzImage", "arch/x86/boot/bzImage"),
    }
}
