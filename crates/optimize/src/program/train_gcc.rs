//! GCC's instrumented-PGO training: the `-fprofile-generate` build runs the training
//! workload and writes one `.gcda` per object, at the object's absolute path. The
//! runtime's GCOV_PREFIX / GCOV_PREFIX_STRIP move them under `profiles/ifdo-gcda/`,
//! keeping their paths relative to the build directory, so that the ifdo build (in
//! another directory) finds each beside its object once they are copied in.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use super::compile::Built;
use super::ctx::Ctx;
use crate::steps::cache::Key;
use crate::steps::exec::Stdout;
use crate::steps::fresh_dir;
use crate::steps::ProfileFile;

impl Ctx {
    /// Runs GCC's instrumented build on the training workload (natively); the profile
    /// is the directory of `.gcda` files it wrote.
    pub fn train_instrumented_gcc(&self, instrumented: &Built) -> anyhow::Result<ProfileFile> {
        let r = self.recipe();
        let out = self.dir("profiles/ifdo-gcda");
        let dir = self.dir("record/ifdo-instrumented");
        let build_dir = self.dir(&format!("build/{}", instrumented.label));
        let argv = r.train_argv(&instrumented.binary)?;
        let key = Key::new("train ifdo gcc")
            .add("binary", &instrumented.hash)
            .add("workload", &r.train.command)
            .add("tools", &self.tool_ids)
            .finish();
        self.file_step("train ifdo", key, out.clone(), |log| {
            fresh_dir(&dir)?;
            fresh_dir(&out)?;
            let run = dir.join("cwd");
            std::fs::create_dir_all(&run)?;
            // GCC records the objects' directory as the compiler saw it: the physical one.
            let physical = std::fs::canonicalize(&build_dir)
                .with_context(|| format!("cannot resolve {}", build_dir.display()))?;
            let strip = physical.components().count() - 1;
            log.run(
                Command::new(&argv[0])
                    .args(&argv[1..])
                    .current_dir(&run)
                    .env("RECIPE", &r.dir)
                    .env("GCOV_PREFIX", &out)
                    .env("GCOV_PREFIX_STRIP", strip.to_string()),
                Stdout::Log,
            )?;
            let gcda = list_gcda(&out);
            if gcda.is_empty() {
                return Err(log.fail(format!(
                    "the instrumented training run wrote no .gcda under {} (did the build pass \
                     $CFLAGS and $LDFLAGS to the compiler and linker?)",
                    out.display()
                )));
            }
            for g in &gcda {
                log.note(&format!(
                    "counts: {}",
                    g.strip_prefix(&out).unwrap_or(g).display()
                ));
            }
            Ok(serde_json::json!({ "gcda_files": gcda.len() }))
        })
    }
}

/// Every `.gcda` under `dir`, sorted.
fn list_gcda(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "gcda") {
                found.push(p);
            }
        }
    }
    found.sort();
    found
}
