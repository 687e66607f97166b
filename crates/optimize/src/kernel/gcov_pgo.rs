//! gcov kernel PGO, GCC's instrumented FDO of the kernel: the `ifdo` variant's
//! configuration with `GCOV_KERNEL` and `GCOV_PROFILE_ALL` is built, booted with the
//! training workload (its /init zeroes the counts before the workloads and prints every
//! `.gcda` under `/sys/kernel/debug/gcov` on the console after them, `kfdo.gcov=1`), and
//! the counts are laid out for the `ifdo` build's `-fprofile-dir`:
//! `profiles/gcda/HASH16/kernel#fork.gcda`, the object's path relative to the build
//! directory with `/` as `#`, as GCC 11+ names them under `-fprofile-prefix-path`,
//! each with the object summary GCC needs and the kernel leaves out (`gcda`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use base64::Engine;

use super::boot::Boot;
use super::build::BuiltKernel;
use super::ctx::KernelCtx;
use super::source::KernelSource;
use super::variant::KernelVariant;
use crate::steps::cache::Key;
use crate::steps::ProfileFile;

const PREFIX: &str = "kfdo-gcov: ";

/// One `.gcda` of the guest: its path under `/sys/kernel/debug/gcov` (the object's
/// absolute path in the instrumented build, `.gcda` for `.o`) and its bytes.
#[derive(Debug, PartialEq)]
pub struct GcdaFile {
    pub path: String,
    pub data: Vec<u8>,
}

/// The `.gcda` files a console carries (format in the workload's `src/gcov.c`). A line
/// that the kernel's messages broke fails the file's size or CRC check: an error, since
/// a file with wrong counts would mislead the compiler.
pub fn parse_dump(console: &str) -> Result<Vec<GcdaFile>, String> {
    let mut files: Vec<GcdaFile> = Vec::new();
    // The file being read: its entry, announced size and CRC, and its base64 text.
    let mut current: Option<(GcdaFile, usize, u32, String)> = None;
    let mut began = false;
    let finish = |cur: Option<(GcdaFile, usize, u32, String)>,
                  files: &mut Vec<GcdaFile>|
     -> Result<(), String> {
        let Some((mut f, size, crc, text)) = cur else {
            return Ok(());
        };
        f.data = base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map_err(|e| format!("{}: its data lines are not base64 ({e})", f.path))?;
        if f.data.len() != size || crc32fast::hash(&f.data) != crc {
            return Err(format!(
                "{}: {} bytes with CRC {:08x} arrived, the guest sent {size} with {crc:08x} \
                 (a console line was broken, by kernel messages?)",
                f.path,
                f.data.len(),
                crc32fast::hash(&f.data)
            ));
        }
        files.push(f);
        Ok(())
    };
    for line in console.lines().map(|l| l.trim_end_matches('\r')) {
        let Some(at) = line.find(PREFIX) else {
            continue;
        };
        let rest = &line[at + PREFIX.len()..];
        let (word, arg) = rest.split_once(' ').unwrap_or((rest, ""));
        match word {
            "begin" => began = true,
            "file" if began => {
                finish(current.take(), &mut files)?;
                let mut parts = arg.splitn(3, ' ');
                let (Some(size), Some(crc), Some(path)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    return Err(format!("a broken file line: '{rest}'"));
                };
                let size = size
                    .parse()
                    .map_err(|_| format!("a broken file line: '{rest}'"))?;
                let crc = u32::from_str_radix(crc, 16)
                    .map_err(|_| format!("a broken file line: '{rest}'"))?;
                let f = GcdaFile {
                    path: path.to_string(),
                    data: Vec::new(),
                };
                current = Some((f, size, crc, String::new()));
            }
            "data" if began => match current.as_mut() {
                Some(c) => c.3.push_str(arg.trim()),
                None => return Err("data before any file line".into()),
            },
            "end" if began => {
                finish(current.take(), &mut files)?;
                let n: usize = arg
                    .trim()
                    .parse()
                    .map_err(|_| format!("a broken end line: '{rest}'"))?;
                if n != files.len() {
                    return Err(format!(
                        "the guest sent {n} files, {} arrived whole",
                        files.len()
                    ));
                }
                return Ok(files);
            }
            _ => return Err(format!("an unexpected line: '{rest}'")),
        }
    }
    Err(if began {
        "the dump stopped before its end line (the guest died, or the boot timed out)".into()
    } else {
        "no dump: the guest printed no 'kfdo-gcov: begin' (was the workload built before \
         kfdo.gcov= existed?)"
            .into()
    })
}

/// The name `-fprofile-dir` gives the counts of `path` (the guest's, under the
/// instrumented build directory `build`): relative to it, `/` as `#`.
pub fn mangled_name(path: &str, build: &Path) -> Option<String> {
    let rel = Path::new(path).strip_prefix(build).ok()?;
    let rel = rel.to_str()?;
    (!rel.is_empty() && !rel.split('/').any(|c| c == "..")).then(|| rel.replace('/', "#"))
}

impl KernelCtx {
    /// The gcov-instrumented twin of `v` (configured from `base`), built and trained; the
    /// directory of its counts, named by their content.
    pub fn train_gcov(
        &self,
        src: &KernelSource,
        base: &(PathBuf, String),
        v: &KernelVariant,
        workload: &(PathBuf, String),
    ) -> anyhow::Result<ProfileFile> {
        let iv = v.instrumented();
        let config = self.variant_config(src, base, &iv)?;
        let k = self.build_kernel(src, &iv, &config, None, None)?;
        let initrd = self.variant_initramfs(workload, &k)?;
        let run = &self.recipe.workload.train;
        let record = self.dir("record/ifdo-instrumented-training-run");
        let profiles = self.dir("profiles/gcda");
        let listing = profiles.join("latest.txt");
        let key = Key::new("kernel gcov training")
            .add("kernel", &k.hash)
            .add("initrd", &initrd.1)
            .add("run", run)
            // What kfdo makes of the guest's files (see `gcda`).
            .add("format", "gcda with an object summary")
            .finish();
        let done = self.step(
            "train ifdo-instrumented",
            key,
            std::slice::from_ref(&listing),
            |log| {
                crate::steps::fresh_dir(&record)?;
                let booted = self
                    .boot(&Boot {
                        kernel: &k,
                        initrd: &initrd.0,
                        run,
                        console: record.join("console.txt"),
                        perf_data: None,
                        period: 0,
                        counters: None,
                        gcov: true,
                    })
                    .map_err(|e| log.failed(format!("{e:#}")))?;
                let files = parse_dump(&booted.console).map_err(|e| {
                    log.fail(format!(
                        "the gcov counts of the {} kernel (console: {}): {e}",
                        k.variant,
                        record.join("console.txt").display()
                    ))
                })?;
                let dir = write_counts(&profiles, &k, &files).map_err(|e| log.failed(e))?;
                log.say(&format!(
                    "{} .gcda files ({} bytes) from the guest -> {}",
                    files.len(),
                    files.iter().map(|f| f.data.len()).sum::<usize>(),
                    dir.display()
                ));
                std::fs::write(&listing, format!("{}\n", dir.display()))?;
                Ok(serde_json::json!({ "dir": dir, "files": files.len() }))
            },
        )?;
        let dir = PathBuf::from(done.facts["dir"].as_str().unwrap_or_default());
        if !dir.is_dir() {
            anyhow::bail!(
                "the gcov counts {} are gone; remove {} and rerun",
                dir.display(),
                listing.display()
            );
        }
        Ok(ProfileFile {
            hash: dir
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default(),
            path: dir,
        })
    }
}

/// Writes `files` under `profiles/HASH16/` (their content's hash over names and bytes),
/// through a temporary directory renamed into place, and returns that directory.
fn write_counts(profiles: &Path, k: &BuiltKernel, files: &[GcdaFile]) -> anyhow::Result<PathBuf> {
    use sha2::{Digest, Sha256};
    let physical = std::fs::canonicalize(&k.dir)
        .with_context(|| format!("cannot resolve {}", k.dir.display()))?;
    let mut named = Vec::new();
    let mut largest = 0;
    for f in files {
        let name = mangled_name(&f.path, &physical)
            .or_else(|| mangled_name(&f.path, &k.dir))
            .with_context(|| {
                format!(
                    "the guest's {} is not under the instrumented build {}",
                    f.path,
                    physical.display()
                )
            })?;
        let (data, max) = super::gcda::with_object_summary(&f.data)
            .map_err(|e| anyhow::anyhow!("the guest's {}: {e}", f.path))?;
        largest = largest.max(max);
        named.push((name, data));
    }
    if largest == 0 {
        anyhow::bail!(
            "the {} kernel counted nothing: every arc count of its {} .gcda files is zero \
             (did the workload run between the reset and the dump?)",
            k.variant,
            files.len()
        );
    }
    named.sort();
    let mut h = Sha256::new();
    for (name, data) in &named {
        h.update(name.as_bytes());
        h.update([0]);
        h.update((data.len() as u64).to_le_bytes());
        h.update(data);
    }
    let hash = hex::encode(h.finalize());
    let dir = profiles.join(&hash[..16]);
    if dir.is_dir() {
        return Ok(dir);
    }
    let tmp = profiles.join(format!(".{}.tmp", &hash[..16]));
    crate::steps::fresh_dir(&tmp)?;
    for (name, data) in &named {
        std::fs::write(tmp.join(name), data)?;
    }
    std::fs::rename(&tmp, &dir)
        .with_context(|| format!("cannot move {} to {}", tmp.display(), dir.display()))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dump(files: &[(&str, &[u8])]) -> String {
        let mut s = String::from("[    1.0] booting\nkfdo-gcov: begin\n");
        for (path, data) in files {
            s += &format!(
                "kfdo-gcov: file {} {:08x} {path}\n",
                data.len(),
                crc32fast::hash(data)
            );
            for chunk in data.chunks(57) {
                s += &format!(
                    "kfdo-gcov: data {}\n",
                    base64::engine::general_purpose::STANDARD.encode(chunk)
                );
            }
        }
        s += &format!("kfdo-gcov: end {}\nkfdo-workload: done\n", files.len());
        s
    }

    #[test]
    fn a_dump_is_read_back_and_checked() {
        let big: Vec<u8> = (0..500u32).map(|i| (i * 7) as u8).collect();
        let text = dump(&[("/b/kernel/fork.gcda", b"adcg"), ("/b/mm/slub.gcda", &big)]);
        let files = parse_dump(&text).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[1].path, "/b/mm/slub.gcda");
        assert_eq!(files[1].data, big);
        // A data line broken by a kernel message: the CRC says so.
        let broken = text.replacen("kfdo-gcov: data ", "kfdo-gcov: data [ 2.0] x", 2);
        let e = parse_dump(&broken).unwrap_err();
        assert!(e.contains("mm/slub.gcda") || e.contains("base64"), "{e}");
        let cut = text.split("kfdo-gcov: end").next().unwrap();
        assert!(parse_dump(cut)
            .unwrap_err()
            .contains("stopped before its end"));
        assert!(parse_dump("kfdo-workload: done\n")
            .unwrap_err()
            .contains("no dump"));
    }

    #[test]
    fn counts_are_named_as_gcc_looks_them_up() {
        let b = Path::new("/o/build/ifdo-instrumented");
        assert_eq!(
            mangled_name("/o/build/ifdo-instrumented/kernel/sched/core.gcda", b).as_deref(),
            Some("kernel#sched#core.gcda")
        );
        assert_eq!(mangled_name("/elsewhere/fork.gcda", b), None);
    }
}
