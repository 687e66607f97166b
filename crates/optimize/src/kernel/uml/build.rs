//! Building a twin: its configuration (the UML base plus the variant's Kconfig changes)
//! and `make ARCH=um linux` in `OUT/uml/VARIANT` (kbuild's `O=`), an executable.

use std::path::{Path, PathBuf};

use anyhow::bail;

use super::config::{UmlBase, ARCH};
use super::twin::{gold_plugin, is_thinlto, link_config, make_vars};
use crate::kernel::build::content_addressed;
use crate::kernel::config::make;
use crate::kernel::ctx::KernelCtx;
use crate::kernel::source::KernelSource;
use crate::kernel::variant::KernelVariant;
use crate::steps::cache::Key;
use crate::steps::exec::Stdout;

/// A built twin.
#[derive(Debug, Clone)]
pub struct UmlKernel {
    /// The variant it is the twin of (and is judged as).
    pub variant: String,
    /// Its kbuild directory.
    pub dir: PathBuf,
    /// The `linux` executable.
    pub exe: PathBuf,
    /// Content hash of the executable.
    pub hash: String,
    pub make_vars: Vec<(String, String)>,
}

impl KernelCtx {
    /// Configures and builds `twin`; `profile` (path, content hash) when it reads one.
    pub fn build_uml(
        &self,
        src: &KernelSource,
        base: &UmlBase,
        twin: &KernelVariant,
        profile: Option<(&Path, &str)>,
    ) -> anyhow::Result<UmlKernel> {
        let dir = self.dir(&format!("uml/{}", twin.name));
        let config = self.configure_on(
            src,
            &base.config,
            twin,
            &dir,
            ARCH,
            &format!("configure uml {}", twin.name),
        )?;
        // As for the real kernels, the profile's path names its content (kbuild
        // rebuilds on a changed command line, not on a changed file).
        let profile_path = match profile {
            Some((path, hash)) => Some(content_addressed(path, hash)?),
            None => None,
        };
        let link_cfg = if is_thinlto(twin) {
            let plugin = gold_plugin(twin);
            if !plugin.is_file() {
                bail!(
                    "the UML twin of '{}' (ThinLTO) links through GNU ld with LLVM's gold \
                     plugin, and {} is missing: install llvm{}-linker-tools (bash \
                     scripts/install-deps.sh does)",
                    twin.name,
                    plugin.display(),
                    twin.compiler.llvm_suffix().unwrap_or_default()
                );
            }
            let cfg = dir.join("kfdo-lto-link.cfg");
            std::fs::write(&cfg, link_config(&plugin))?;
            Some(cfg)
        } else {
            None
        };
        let vars = make_vars(twin, profile_path.as_deref(), link_cfg.as_deref(), &dir);
        let exe = dir.join("linux");
        let step = format!("build uml {}", twin.name);
        let key = Key::new("uml build")
            .add("source", &src.id)
            .add("config", &config.1)
            .add("tools", &self.tool_ids)
            .add("vars", format!("{vars:?}"))
            .add("profile", profile.map(|p| p.1).unwrap_or(""))
            .finish();
        let done = self.step(&step, key, std::slice::from_ref(&exe), |log| {
            let mut cmd = make(src, &dir, ARCH, &vars);
            cmd.env("KBUILD_BUILD_TIMESTAMP", "kfdo")
                .env("KBUILD_BUILD_USER", "kfdo")
                .env("KBUILD_BUILD_HOST", "kfdo")
                .env("KBUILD_BUILD_VERSION", "1");
            cmd.arg(format!("-j{}", self.opts.jobs.max(1))).arg("linux");
            log.run(&mut cmd, Stdout::Log)?;
            if !exe.is_file() {
                return Err(log.fail(format!("the build made no {}", exe.display())));
            }
            Ok(serde_json::json!({}))
        })?;
        Ok(UmlKernel {
            variant: twin.name.clone(),
            hash: done.hash_of(&exe).to_string(),
            dir,
            exe,
            make_vars: vars,
        })
    }
}
