//! A kernel recipe: where the kernel source comes from, the configuration to start from,
//! the workload that trains and judges it, and the extra variants to build. A small TOML
//! file (format in `recipes/README.md`), checked here so that a mistake is reported with
//! the file, the key and the fix before anything runs.

use std::path::{Path, PathBuf};

use anyhow::bail;
use kfdo_toolchain::Llvm;

use crate::steps::recipe_file::{check_table_names, name_ok};
use crate::vocabulary::{support, BuildKind, Compiler, CompilerName, Variant};
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelRecipe {
    /// Short name: the benchmark prefix in reports and the default output directory.
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub kernel: Kernel,
    pub workload: Workload,
    /// The evaluation workloads, each judged separately (`[[bench]]`).
    #[serde(rename = "bench")]
    pub benches: Vec<KernelBench>,
    /// Variants of the recipe's own, beside the built-in ones (`[[variant]]`).
    #[serde(rename = "variant", default)]
    pub variants: Vec<VariantSpec>,
    /// Native time (`[uml]`): each variant's User-Mode Linux twin, built and booted on
    /// the host.
    #[serde(default)]
    pub uml: Option<UmlSpec>,
    /// The variants built when `--variants` is not given (default: autofdo and
    /// autofdo+thinlto with clang, autofdo and ifdo with GCC).
    #[serde(default)]
    default_variants: Option<Vec<String>>,
    /// The file the recipe was read from (absolute).
    #[serde(skip)]
    pub path: PathBuf,
    /// Its directory: relative paths in the recipe are relative to it.
    #[serde(skip)]
    pub dir: PathBuf,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kernel {
    /// The Debian binary package that holds the source tarball (`linux-source-7.2`), or
    /// a path to a `linux-*.tar.*` or an unpacked tree (relative to the recipe).
    pub source: String,
    /// The Debian suite to fetch it from (`unstable` has 7.x; `bookworm` 6.1).
    #[serde(default = "default_suite")]
    pub suite: String,
    #[serde(default = "default_arch")]
    pub arch: String,
    /// The configuration to start from: `tinyconfig`, `defconfig`, or a file (relative to
    /// the recipe, or absolute: `/boot/config-6.12.0-1-amd64`), kept as it is except for
    /// what a variant changes.
    #[serde(default = "default_config")]
    pub config: String,
    /// Kconfig fragments (`CONFIG_X=y` lines) merged on top, relative to the recipe.
    #[serde(default)]
    pub fragments: Vec<PathBuf>,
    /// The compiler of every variant that does not name another: `clang-19` or
    /// `clang-22` (LLVM=-N, the whole LLVM toolchain of that release) or `gcc-12`.
    #[serde(default = "default_compiler")]
    pub compiler: CompilerName,
    /// How the profile reaches the build: `kconfig` (CONFIG_AUTOFDO_CLANG and
    /// CLANG_AUTOFDO_PROFILE, Linux >= 6.13), or `kcflags` (the same compiler and linker
    /// flags through KCFLAGS / LDFLAGS, for older kernels).
    #[serde(default = "default_fdo")]
    pub fdo: String,
    /// Memory of the emulated machine.
    #[serde(default = "default_memory")]
    pub memory_mb: u32,
    /// A boot that has not powered off after this long is a failure.
    #[serde(default = "default_timeout")]
    pub boot_timeout_s: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// The directory holding `build-initramfs.sh` (relative to the recipe).
    pub dir: PathBuf,
    /// The training run: `kfdo.run=` of the guest's /init, `NAME:ARG[,NAME:ARG...]`.
    pub train: String,
    /// Modules (relative to the kernel build directory) that the initramfs carries and
    /// /init loads before the workload, e.g. `net/unix/unix.ko`.
    #[serde(default)]
    pub modules: Vec<PathBuf>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelBench {
    pub name: String,
    /// The evaluation run: `NAME:ARG[,...]`, sized unlike the training run.
    pub run: String,
    /// Boots per variant (interleaved); default 5.
    pub boots: Option<usize>,
}

/// `[uml]`: User-Mode Linux twins of the variants, judged in native time.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UmlSpec {
    /// Boots per twin and evaluation workload (interleaved); default 10.
    pub boots: Option<usize>,
}

/// A variant of the recipe's own: any build change, judged like the built-in ones.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    pub name: String,
    /// `clang-19`, `clang-22` or `gcc-12` (default: the recipe's compiler).
    pub compiler: Option<CompilerName>,
    /// Extra compiler flags for every kernel object (`KCFLAGS`), e.g. `-O3`, `-march=native`.
    #[serde(default)]
    pub kcflags: String,
    /// Kconfig changes on top of the recipe's configuration: `{ LTO_CLANG_THIN = "y" }`.
    #[serde(default)]
    pub kconfig: std::collections::BTreeMap<String, String>,
    /// Whether it is built with the AutoFDO profile (`autofdo`) or without (`none`).
    #[serde(default = "default_profile")]
    pub profile: String,
}

impl KernelRecipe {
    /// The recipe's compiler (`[kernel] compiler`).
    pub fn compiler(&self) -> anyhow::Result<Compiler> {
        kernel_compiler(self.kernel.compiler)
    }

    /// What the recipe builds, in `vocabulary::support`'s table.
    pub fn build_kind(&self) -> BuildKind {
        match self.kernel.arch.as_str() {
            "arm64" => BuildKind::CrossKernel,
            _ => BuildKind::Kernel,
        }
    }

    /// The variants built when `--variants` is not given: the recipe's
    /// `default_variants` (which may name its own), else the table's.
    pub fn default_variants(&self) -> Vec<String> {
        match (&self.default_variants, self.compiler()) {
            (Some(v), _) => v.clone(),
            (None, Ok(c)) => support::defaults(self.build_kind(), c)
                .iter()
                .map(|v| v.name().to_string())
                .collect(),
            (None, Err(_)) => Vec::new(),
        }
    }
}
fn default_suite() -> String {
    "unstable".into()
}
/// The kernel architectures kfdo builds and boots (kbuild's `ARCH=`).
const ARCHES: &[&str] = &["x86_64", "arm64"];

fn default_arch() -> String {
    "x86_64".into()
}
fn default_config() -> String {
    "tinyconfig".into()
}
fn default_compiler() -> CompilerName {
    CompilerName::Is(Compiler::CLANG)
}
fn default_fdo() -> String {
    "kconfig".into()
}
fn default_memory() -> u32 {
    256
}
fn default_timeout() -> u64 {
    600
}
fn default_profile() -> String {
    "none".into()
}

/// Default boots per variant of an evaluation workload.
pub const DEFAULT_BOOTS: usize = 5;

/// The GCC releases kfdo builds kernels with (Debian 12's).
const GCC_COMPILERS: &[&str] = &["gcc-12", "gcc-11"];

/// Every compiler a kernel recipe may name: clang of each LLVM release kfdo is tested
/// with, and [`GCC_COMPILERS`].
pub fn compilers() -> Vec<String> {
    Llvm::KNOWN
        .iter()
        .map(|l| l.clang())
        .chain(GCC_COMPILERS.iter().map(|g| g.to_string()))
        .collect()
}

/// A kernel recipe's compiler: one of [`compilers`] (a kernel is built with a release
/// kfdo's kernel tests cover, and never with "the gcc on PATH").
pub fn kernel_compiler(name: CompilerName) -> anyhow::Result<Compiler> {
    let all = compilers();
    match name.compiler() {
        Some(c) if all.contains(&c.command()) => Ok(c),
        _ => bail!(
            "compiler = \"{name}\": use one of {} (Debian 12's clang and gcc)",
            all.join(", ")
        ),
    }
}

impl KernelRecipe {
    /// The recipe with `--llvm` applied: every clang build (the recipe's and its own
    /// variants') uses that release; a GCC recipe has none to change and is refused.
    pub fn with_llvm(mut self, llvm: Llvm) -> anyhow::Result<KernelRecipe> {
        self.kernel.compiler = self.kernel.compiler.with_llvm(Some(llvm))?;
        kernel_compiler(self.kernel.compiler)
            .map_err(|e| anyhow::anyhow!("--llvm {}: {e}", llvm.major))?;
        for c in self.variants.iter_mut().filter_map(|v| v.compiler.as_mut()) {
            if c.is_clang() {
                *c = c.with_llvm(Some(llvm))?;
            }
        }
        Ok(self)
    }
}

impl KernelRecipe {
    /// A `[uml]` table needs a kernel UML can be built from here: the host's architecture
    /// and a configuration target (an x86 .config does not configure UML).
    fn check_uml(&self) -> anyhow::Result<()> {
        if self.kernel.arch != "x86_64" || std::env::consts::ARCH != "x86_64" {
            bail!(
                "[uml]: User-Mode Linux twins are built for the host, x86_64, from an x86_64 \
                 kernel's recipe (this one: arch = {:?} on a {} host); remove [uml]",
                self.kernel.arch,
                std::env::consts::ARCH
            );
        }
        if !self.compiler().is_ok_and(Compiler::is_clang) {
            bail!(
                "[uml]: kfdo builds User-Mode Linux twins with clang, and this recipe builds \
                 with \"{}\"; remove [uml], or use a clang compiler (\"clang-19\")",
                self.kernel.compiler
            );
        }
        if self.config_file().is_some() {
            bail!(
                "[uml]: config = {:?} is an x86 .config, which does not configure UML; use \
                 config = \"tinyconfig\" (or defconfig) with fragments, or remove [uml]",
                self.kernel.config
            );
        }
        if self.uml.as_ref().and_then(|u| u.boots) == Some(0) {
            bail!("[uml] boots = 0: give at least 1 (default 10)");
        }
        Ok(())
    }

    /// Whether a recipe file is a kernel recipe (it has a `[kernel]` table).
    pub fn is_kernel_recipe(text: &str) -> bool {
        toml::from_str::<toml::Table>(text).is_ok_and(|t| t.contains_key("kernel"))
    }

    pub fn load(path: &Path) -> anyhow::Result<KernelRecipe> {
        KernelRecipe::from_text(path, &crate::steps::recipe_file::read_text(path)?)
    }

    /// The kernel recipe in `text`, read from `path`.
    pub fn from_text(path: &Path, text: &str) -> anyhow::Result<KernelRecipe> {
        let (mut r, canonical, dir): (KernelRecipe, _, _) =
            crate::steps::recipe_file::parse_text(path, text, "kernel recipe")?;
        r.path = canonical;
        r.dir = dir;
        r.validate()
            .map_err(|e| anyhow::anyhow!("kernel recipe {}: {e}", path.display()))?;
        Ok(r)
    }

    /// A path the recipe names, relative to its directory.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.dir.join(p)
        }
    }

    /// The configuration file to start from, when `config` names one.
    pub fn config_file(&self) -> Option<PathBuf> {
        match self.kernel.config.as_str() {
            "tinyconfig" | "defconfig" | "allnoconfig" => None,
            c => Some(self.resolve(Path::new(c))),
        }
    }

    fn validate(&self) -> anyhow::Result<()> {
        if !name_ok(&self.name) {
            bail!(
                "name = {:?}: use letters, digits and . _ + - only (it names directories)",
                self.name
            );
        }
        let k = &self.kernel;
        if !ARCHES.contains(&k.arch.as_str()) {
            bail!(
                "[kernel] arch = {:?}: kfdo builds and boots x86_64 and arm64 kernels (kbuild's \
                 ARCH names)",
                k.arch
            );
        }
        if k.arch == "arm64" && !k.compiler.is_clang() {
            bail!(
                "[kernel] arch = \"arm64\" with compiler = \"{}\": arm64 kernels are \
                 cross-compiled with clang (LLVM=-N targets arm64 by itself); GCC kernels \
                 are x86_64 only for now. Use compiler = \"clang-19\" (recipes/linux-arm64)",
                k.compiler
            );
        }
        for c in std::iter::once(k.compiler).chain(self.variants.iter().filter_map(|v| v.compiler))
        {
            kernel_compiler(c)?;
        }
        if !["kconfig", "kcflags"].contains(&k.fdo.as_str()) {
            bail!(
                "[kernel] fdo = {:?}: `kconfig` (Linux >= 6.13: CONFIG_AUTOFDO_CLANG) or \
                 `kcflags` (older kernels: the flags through KCFLAGS)",
                k.fdo
            );
        }
        if let Some(f) = self.config_file() {
            if !f.is_file() {
                bail!(
                    "[kernel] config = {:?}: {} is not a file; give tinyconfig, defconfig, or a \
                     .config (e.g. /boot/config-$(uname -r))",
                    k.config,
                    f.display()
                );
            }
        }
        for f in &k.fragments {
            if !self.resolve(f).is_file() {
                bail!(
                    "[kernel] fragments: {} is not a file (paths are relative to the recipe)",
                    self.resolve(f).display()
                );
            }
        }
        let script = self.resolve(&self.workload.dir).join("build-initramfs.sh");
        if !script.is_file() {
            bail!(
                "[workload] dir = {:?}: {} is missing",
                self.workload.dir.display(),
                script.display()
            );
        }
        if self.uml.is_some() {
            self.check_uml()?;
        }
        check_run("[workload] train", &self.workload.train)?;
        if self.benches.is_empty() {
            bail!("no [[bench]] table: give at least one evaluation workload");
        }
        check_table_names("bench", self.benches.iter().map(|b| b.name.as_str()))?;
        for b in &self.benches {
            check_run(&format!("[[bench]] {:?} run", b.name), &b.run)?;
            if b.run == self.workload.train {
                bail!(
                    "[[bench]] {:?}: run is the training run; judge with other sizes, so the \
                     verdict is not measured on the data the profile came from",
                    b.name
                );
            }
            if matches!(b.boots, Some(0 | 1)) {
                bail!(
                    "[[bench]] {:?}: boots = {}: need at least 2 boots for a statistic",
                    b.name,
                    b.boots.unwrap()
                );
            }
        }
        check_table_names("variant", self.variants.iter().map(|v| v.name.as_str()))?;
        for v in &self.variants {
            if Variant::from_name(&v.name)
                .is_some_and(|b| support::built_in(self.build_kind()).contains(&b))
            {
                bail!(
                    "[[variant]] {:?}: that name is a built-in variant; choose another",
                    v.name
                );
            }
            if !["none", "autofdo"].contains(&v.profile.as_str()) {
                bail!(
                    "[[variant]] {:?}: profile = {:?}: `none` or `autofdo`",
                    v.name,
                    v.profile
                );
            }
            for (sym, val) in &v.kconfig {
                if sym.starts_with("CONFIG_") || sym.is_empty() {
                    bail!(
                        "[[variant]] {:?}: kconfig key {sym:?}: write the symbol without CONFIG_",
                        v.name
                    );
                }
                if !["y", "n", "m"].contains(&val.as_str()) && val.is_empty() {
                    bail!(
                        "[[variant]] {:?}: kconfig {sym} = {val:?}: give y, n, m or a value",
                        v.name
                    );
                }
            }
        }
        Ok(())
    }
}

/// A workload list `NAME:ARG[,NAME:ARG...]`, as the guest's /init reads it.
fn check_run(what: &str, run: &str) -> anyhow::Result<()> {
    if run.trim().is_empty() {
        bail!("{what} is empty: give NAME:ARG[,NAME:ARG...], e.g. tcp_rr:20000");
    }
    for item in run.split(',') {
        let ok = item.split_once(':').is_some_and(|(n, a)| {
            !n.is_empty()
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !a.is_empty()
                && a.chars().all(|c| c.is_ascii_digit())
        });
        if !ok {
            bail!("{what} = {run:?}: {item:?} is not NAME:COUNT (e.g. tcp_rr:20000)");
        }
    }
    Ok(())
}
