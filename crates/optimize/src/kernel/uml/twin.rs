//! Which variants have a User-Mode Linux twin, and how a twin is built.
//!
//! A twin is the variant's kernel built as `ARCH=um` from the same source, fragments and
//! profile. UML has no CONFIG_AUTOFDO_CLANG (it is x86-only Kconfig), so the profile
//! reaches the compiler through KCFLAGS, as for kernels older than 6.13
//! ([`Fdo::Kcflags`]), with `-gmlt` added (the sample profile is matched through line
//! tables, and the workload's fragment builds without debug information). ThinLTO is
//! UML's own `LTO_CLANG_THIN`; its final link runs through the clang driver into GNU
//! ld, which needs LLVM's gold plugin for the one bitcode object kbuild compiles after
//! the LTO step (`.vmlinux.export.o`), so a ThinLTO twin's compiler reads a clang
//! configuration file naming the plugin (`link_config`): options of a configuration
//! file are not reported as unused by the compile steps, which a plain `-Wl,` in `CC`
//! would be.

use std::path::{Path, PathBuf};

use crate::kernel::variant::{Fdo, KernelVariant, PropellerRole, PROPELLER_KCFLAGS};
use crate::vocabulary::CompileProfile;

/// Kconfig symbols of the x86 variant that mean nothing to UML: the profile goes through
/// KCFLAGS instead, and UML builds no basic-block address map.
const X86_ONLY: &[&str] = &["AUTOFDO_CLANG", "PROPELLER_CLANG"];

/// The twin of `v` (judged under the same name), or why it has none.
pub fn twin_of(v: &KernelVariant) -> Result<KernelVariant, String> {
    if !v.is_clang() {
        return Err(format!(
            "built with {}: kfdo builds UML twins with clang only",
            v.compiler.command()
        ));
    }
    if v.profile == CompileProfile::Instrumented {
        return Err("gcov kernel PGO: its counts belong to the x86 kernel's objects".into());
    }
    if v.propeller == PropellerRole::Optimized {
        return Err(
            "Propeller: UML has no CONFIG_PROPELLER_CLANG, and the Propeller profile names \
             the x86 kernel's basic blocks"
                .into(),
        );
    }
    if v.bolt {
        return Err(
            "BOLT: llvm-bolt rewrites the x86 kernel's vmlinux; a UML twin is another binary"
                .into(),
        );
    }
    let mut twin = v.clone();
    twin.propeller = PropellerRole::None;
    for sym in X86_ONLY {
        twin.kconfig.remove(*sym);
    }
    if v.propeller == PropellerRole::Mapped {
        // The mapped kernel's own flag only changes its debug information.
        twin.kcflags = twin
            .kcflags
            .replace(PROPELLER_KCFLAGS, "")
            .trim()
            .to_string();
    }
    Ok(twin)
}

/// Whether a twin is built with ThinLTO.
pub fn is_thinlto(twin: &KernelVariant) -> bool {
    twin.kconfig.get("LTO_CLANG_THIN").is_some_and(|v| v == "y")
}

/// LLVM's gold plugin of the twin's toolchain (`llvm-N-linker-tools`).
pub fn gold_plugin(twin: &KernelVariant) -> PathBuf {
    twin.compiler.llvm().unwrap_or_default().gold_plugin()
}

/// The text of the clang configuration file of a ThinLTO twin's compiler.
pub fn link_config(plugin: &Path) -> String {
    format!("-Wl,-plugin,{}\n", plugin.display())
}

/// The `make` variables of a twin's build: the KCFLAGS route with line tables, the
/// profile when it reads one, and for ThinLTO the compiler with `link_config` at
/// `config_file`.
pub fn make_vars(
    twin: &KernelVariant,
    profile: Option<&Path>,
    config_file: Option<&Path>,
    build_dir: &Path,
) -> Vec<(String, String)> {
    let mut vars = twin.make_vars(Fdo::Kcflags, profile, None, build_dir);
    match vars.iter_mut().find(|(k, _)| k == "KCFLAGS") {
        Some((_, flags)) => flags.push_str(" -gmlt"),
        None => vars.push(("KCFLAGS".into(), "-gmlt".into())),
    }
    if let Some(cfg) = config_file.filter(|_| is_thinlto(twin)) {
        vars.push((
            "CC".into(),
            format!("{} --config={}", twin.compiler.command(), cfg.display()),
        ));
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::recipe::KernelRecipe;

    fn recipe() -> KernelRecipe {
        toml::from_str(
            r#"
            name = "t"
            [kernel]
            source = "linux-source-7.2"
            [workload]
            dir = "w"
            train = "tcp_rr:1"
            [[bench]]
            name = "b"
            run = "tcp_rr:2"
            [[variant]]
            name = "gcc-12"
            compiler = "gcc-12"
            "#,
        )
        .unwrap()
    }

    fn twin(list: &str, name: &str) -> Result<KernelVariant, String> {
        let all = KernelVariant::parse_list(list, &recipe()).unwrap();
        twin_of(all.iter().find(|v| v.name == name).unwrap())
    }

    fn var<'a>(vars: &'a [(String, String)], k: &str) -> Option<&'a str> {
        vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }

    #[test]
    fn twins_take_the_kcflags_route_with_line_tables() {
        let b = twin("", "baseline").unwrap();
        assert!(!b.kconfig.contains_key("AUTOFDO_CLANG"));
        let vars = make_vars(&b, None, None, Path::new("/o"));
        assert_eq!(var(&vars, "LLVM"), Some("-19"));
        assert_eq!(
            var(&vars, "KCFLAGS"),
            Some(
                "-fdebug-info-for-profiling -mllvm -enable-fs-discriminator=true -mllvm \
                 -improved-fs-discriminator=true -gmlt"
            )
        );
        assert_eq!(var(&vars, "CC"), None);
        let a = twin("autofdo", "autofdo").unwrap();
        let vars = make_vars(&a, Some(Path::new("/p.afdo")), None, Path::new("/o"));
        assert!(var(&vars, "KCFLAGS")
            .unwrap()
            .contains("-fprofile-sample-use=/p.afdo"));
        assert!(!is_thinlto(&a));
    }

    #[test]
    fn a_thinlto_twin_reads_the_profile_at_the_lto_link_and_links_with_the_gold_plugin() {
        let t = twin("autofdo+thinlto", "autofdo+thinlto").unwrap();
        assert!(is_thinlto(&t));
        let cfg = Path::new("/o/kfdo-lto-link.cfg");
        let vars = make_vars(&t, Some(Path::new("/p.afdo")), Some(cfg), Path::new("/o"));
        assert_eq!(
            var(&vars, "CC"),
            Some("clang-19 --config=/o/kfdo-lto-link.cfg")
        );
        assert!(var(&vars, "LD")
            .unwrap()
            .starts_with("ld.lld-19 --lto-sample-profile=/p.afdo"));
        assert_eq!(
            gold_plugin(&t),
            Path::new("/usr/lib/llvm-19/lib/LLVMgold.so")
        );
        assert_eq!(
            link_config(&gold_plugin(&t)),
            "-Wl,-plugin,/usr/lib/llvm-19/lib/LLVMgold.so\n"
        );
    }

    #[test]
    fn the_mapped_kernel_is_twinned_without_propeller_and_the_relink_has_no_twin() {
        let list = "autofdo+thinlto+propeller";
        let mapped = twin(list, "autofdo+thinlto").unwrap();
        assert_eq!(mapped, twin("autofdo+thinlto", "autofdo+thinlto").unwrap());
        assert!(twin(list, "autofdo+thinlto+propeller")
            .unwrap_err()
            .contains("Propeller"));
        assert!(twin("gcc-12", "gcc-12").unwrap_err().contains("gcc-12"));
    }
}
