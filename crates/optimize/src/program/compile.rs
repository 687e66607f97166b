//! The steps that make programs: fetch the source, prepare it once, and
//! build one variant.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use super::compiler::{gcc_flags, gcc_instrumented_flags};
use super::ctx::Ctx;
use super::flags::{clang_build_flags, clang_instrumented_flags};
use crate::steps::cache::{content_hash, Key};
use crate::steps::exec::Stdout;
use crate::steps::fresh_dir;
use crate::vocabulary::{Compiler, Variant};

/// The source tree and what identifies its content, for downstream keys.
pub struct Sources {
    pub src: PathBuf,
    pub prep: PathBuf,
    /// Identifies source + prepared tree.
    pub id: String,
}

/// A finished build: the program and its content hash.
#[derive(Debug, Clone)]
pub struct Built {
    pub label: String,
    pub binary: PathBuf,
    pub hash: String,
    pub cflags: String,
    pub ldflags: String,
    /// What rewrote the linked program (BOLT's command line), empty for a plain build.
    pub postlink: String,
}

impl Built {
    /// The flags as the benchmark and the report show them.
    pub fn flags_line(&self) -> String {
        let mut s = format!("CFLAGS={} LDFLAGS={}", self.cflags, self.ldflags);
        if !self.postlink.is_empty() {
            s.push_str(&format!("; then {}", self.postlink));
        }
        s
    }
}

impl Ctx {
    pub fn fetch_source(&self) -> anyhow::Result<PathBuf> {
        let r = self.recipe();
        if let Some(p) = &r.source.path {
            let src = std::fs::canonicalize(r.dir.join(p))?;
            self.progress.say(format!(
                "source: {} (from the recipe's directory)",
                src.display()
            ));
            return Ok(src);
        }
        let pkg = r.source.debian.clone().unwrap_or_default();
        let key = Key::new("source")
            .add("debian", &pkg)
            .add(
                "fetcher",
                crate::steps::scripts::identity("fetch-debian-source.sh"),
            )
            .finish();
        // The unpacked tree lives in a shared cache outside the output
        // directory; if it went away, fetch again.
        if let Some(done) = self.cache.lookup("source", &key) {
            match done.fact("src") {
                Some(s) if Path::new(s).is_dir() => {}
                _ => self.cache.forget("source"),
            }
        }

        let done = self.step("source", key, &[], |log| {
            let script = crate::steps::scripts::write(&self.opts.out, "fetch-debian-source.sh")?;
            let out = log.run(Command::new("bash").arg(&script).arg(&pkg), Stdout::Capture)?;
            let src = out.lines().last().unwrap_or("").trim().to_string();
            if !Path::new(&src).is_dir() {
                return Err(log.fail(format!(
                    "the fetcher did not print an unpacked source directory (got {src:?})"
                )));
            }
            Ok(serde_json::json!({ "src": src }))
        })?;
        Ok(PathBuf::from(done.fact("src").unwrap_or_default()))
    }

    /// Runs the recipe's `prepare` command once (flag-independent work).
    pub fn prepare(&self, src: &Path) -> anyhow::Result<Sources> {
        let r = self.recipe();
        let prep = self.dir("prepare");
        let src_id = if r.source.path.is_some() {
            content_hash(src)?
        } else {
            format!("debian:{}", r.source.debian.as_deref().unwrap_or(""))
        };
        let Some(cmd) = r.source.prepare.clone() else {
            std::fs::create_dir_all(&prep)?;
            return Ok(Sources {
                src: src.to_path_buf(),
                prep,
                id: src_id,
            });
        };
        let key = Key::new("prepare")
            .add("source", &src_id)
            .add("command", &cmd)
            .add("tools", &self.tool_ids)
            .finish();
        let done = self.step("prepare", key, std::slice::from_ref(&prep), |log| {
            fresh_dir(&prep)?;
            log.run(
                Command::new("sh")
                    .arg("-c")
                    .arg(&cmd)
                    .current_dir(&prep)
                    .env("CC", &self.opts.cc)
                    .env("CXX", &self.opts.cxx)
                    .env("SRC", src)
                    .env("PREP", &prep)
                    .env("RECIPE", &r.dir),
                Stdout::Log,
            )?;
            Ok(serde_json::json!({}))
        })?;
        Ok(Sources {
            src: src.to_path_buf(),
            prep: prep.clone(),
            id: format!("{src_id}:{}", done.hash_of(&prep)),
        })
    }

    /// Builds one variant in `build/LABEL` with these flags. `profile_hash`
    /// is the content hash of the profile the flags name (so a new profile
    /// rebuilds, and an unchanged one does not).
    pub fn build(
        &self,
        sources: &Sources,
        label: &str,
        cflags: String,
        ldflags: String,
        profile_hash: &str,
    ) -> anyhow::Result<Built> {
        self.build_seeded(sources, label, cflags, ldflags, profile_hash, None)
    }

    /// CFLAGS and LDFLAGS of variant `v` with the compiler of the recipe; `profile` is
    /// the profile the variant reads (for GCC's ifdo: the directory of `.gcda` files).
    pub fn variant_flags(&self, v: Variant, profile: Option<&Path>) -> (String, String) {
        let opt = &self.recipe().build.opt;
        let flags = match self.opts.compiler {
            Compiler::Clang { .. } => clang_build_flags(v, opt, profile, &self.opts.variants),
            Compiler::Gcc { .. } => gcc_flags(v, opt, profile),
        };
        self.for_target(flags)
    }

    /// `flags` with the cross target's `--target=` first in both (a recipe may compile
    /// and link in separate commands), or unchanged for a build for this machine.
    fn for_target(&self, (c, l): (String, String)) -> (String, String) {
        match &self.opts.target {
            Some(t) => {
                let f = t.clang_flag();
                (
                    format!("{f} {c}"),
                    format!("{f} {l}").trim_end().to_string(),
                )
            }
            None => (c, l),
        }
    }

    /// Flags of the instrumented build that trains ifdo.
    pub fn instrumented_flags(&self) -> (String, String) {
        let opt = &self.recipe().build.opt;
        self.for_target(match self.opts.compiler {
            Compiler::Clang { .. } => clang_instrumented_flags(opt),
            Compiler::Gcc { .. } => gcc_instrumented_flags(opt),
        })
    }

    /// [`Ctx::build`], with the files of the directory `seed` copied into the fresh build
    /// directory first (same relative paths): GCC's `-fprofile-use` reads each object's
    /// `.gcda` from beside the object.
    pub fn build_seeded(
        &self,
        sources: &Sources,
        label: &str,
        cflags: String,
        ldflags: String,
        profile_hash: &str,
        seed: Option<&Path>,
    ) -> anyhow::Result<Built> {
        let r = self.recipe();
        let dir = self.dir(&format!("build/{label}"));
        let binary = dir.join(&r.build.binary);
        let step = format!("build {label}");
        let key = Key::new("build")
            .add("sources", &sources.id)
            .add("command", &r.build.command)
            .add("binary", &r.build.binary)
            .add("tools", &self.tool_ids)
            .add("cflags", &cflags)
            .add("ldflags", &ldflags)
            .add("profile", profile_hash)
            .finish();
        let done = self.step(&step, key, std::slice::from_ref(&binary), |log| {
            fresh_dir(&dir)?;
            if let Some(seed) = seed {
                copy_tree(seed, &dir)?;
            }
            log.run(
                Command::new("sh")
                    .arg("-c")
                    .arg(&r.build.command)
                    .current_dir(&dir)
                    .env("CC", &self.opts.cc)
                    .env("CXX", &self.opts.cxx)
                    .env("CFLAGS", &cflags)
                    .env("CXXFLAGS", &cflags)
                    .env("LDFLAGS", &ldflags)
                    .env("SRC", &sources.src)
                    .env("PREP", &sources.prep)
                    .env("RECIPE", &r.dir)
                    .env("KFDO_VARIANT", label),
                Stdout::Log,
            )?;
            if !binary.is_file() {
                return Err(log.fail(format!(
                    "the build command succeeded but did not make {} ([build] binary = {:?} in {})",
                    binary.display(),
                    r.build.binary,
                    r.path.display()
                )));
            }
            if let Some(t) = &self.opts.target {
                t.check_binary(&binary, &r.path)
                    .map_err(|e| log.fail(format!("{e:#}")))?;
            }
            Ok(serde_json::json!({}))
        })?;
        Ok(Built {
            label: label.to_string(),
            hash: done.hash_of(&binary).to_string(),
            binary,
            cflags,
            ldflags,
            postlink: String::new(),
        })
    }
}

/// Copies every file under `from` to the same relative path under `to`.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<usize> {
    let mut n = 0;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?
    {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type()?.is_dir() {
            std::fs::create_dir_all(&dst)?;
            n += copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)
                .with_context(|| format!("cannot copy {} to {}", src.display(), dst.display()))?;
            n += 1;
        }
    }
    Ok(n)
}
