//! Step cache: each step is keyed by a SHA-256 of everything it reads
//! (commands, flags, tool versions, and the content hashes of input files),
//! and remembers the content hashes of what it wrote. A step is skipped when
//! its key is unchanged and its outputs are still there, unmodified.
//!
//! Downstream keys take the *content* hash of upstream outputs, not the
//! upstream key, so a deterministic rebuild (say, after the binary was
//! deleted) does not invalidate the training run or the benchmark.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Builds a step key from named parts.
pub struct Key(Sha256);

impl Key {
    pub fn new(step: &str) -> Key {
        let mut h = Sha256::new();
        h.update(b"kfdo-optimize-step-v1\0");
        h.update(step.as_bytes());
        Key(h)
    }

    /// Adds a named value; names and lengths are hashed too, so parts cannot run into each other.
    pub fn add(mut self, name: &str, value: impl AsRef<[u8]>) -> Key {
        let v = value.as_ref();
        self.0.update((name.len() as u64).to_le_bytes());
        self.0.update(name.as_bytes());
        self.0.update((v.len() as u64).to_le_bytes());
        self.0.update(v);
        self
    }

    pub fn finish(self) -> String {
        hex::encode(self.0.finalize())
    }
}

/// SHA-256 of a file's content, or of a directory tree (relative paths and contents).
pub fn content_hash(path: &Path) -> anyhow::Result<String> {
    let mut h = Sha256::new();
    if path.is_dir() {
        let mut files = Vec::new();
        walk(path, path, &mut files)?;
        files.sort();
        for rel in files {
            h.update(rel.to_string_lossy().as_bytes());
            h.update([0]);
            hash_file(&path.join(&rel), &mut h)?;
        }
    } else {
        hash_file(path, &mut h)?;
    }
    Ok(hex::encode(h.finalize()))
}

fn hash_file(path: &Path, h: &mut Sha256) -> anyhow::Result<()> {
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(())
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for e in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let e = e?;
        let p = e.path();
        let ft = e.file_type()?;
        if ft.is_dir() {
            walk(root, &p, out)?;
        } else if ft.is_file() {
            out.push(p.strip_prefix(root).unwrap_or(&p).to_path_buf());
        }
    }
    Ok(())
}

/// What a finished step left: its outputs' content hashes and facts (small JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Done {
    pub key: String,
    pub outputs: Vec<Output>,
    #[serde(default)]
    pub facts: serde_json::Value,
    /// Seconds the step took when it ran.
    pub seconds: f64,
    /// Whether this run skipped it (not stored).
    #[serde(skip)]
    pub cached: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Output {
    pub path: PathBuf,
    pub hash: String,
    pub size: u64,
    pub mtime_ns: i128,
}

impl Done {
    /// The content hash of the output at `path` (as recorded).
    pub fn hash_of(&self, path: &Path) -> &str {
        self.outputs
            .iter()
            .find(|o| o.path == path)
            .map(|o| o.hash.as_str())
            .unwrap_or("")
    }

    pub fn fact(&self, name: &str) -> Option<&str> {
        self.facts.get(name).and_then(|v| v.as_str())
    }
}

pub struct Cache {
    dir: PathBuf,
}

fn stamp(path: &Path) -> Option<(u64, i128)> {
    let m = std::fs::metadata(path).ok()?;
    let mtime = m.modified().ok()?;
    let ns = match mtime.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    };
    // A directory's own size and mtime say little; its tree is hashed instead.
    if m.is_dir() {
        return Some((0, 0));
    }
    Some((m.len(), ns))
}

impl Cache {
    pub fn open(dir: &Path) -> anyhow::Result<Cache> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Cache {
            dir: dir.to_path_buf(),
        })
    }

    fn record_path(&self, step: &str) -> PathBuf {
        self.dir.join(format!("{}.json", file_name(step)))
    }

    /// The step's earlier result, if its key matches and every output is
    /// still there as it was written (size and mtime; directories by content).
    pub fn lookup(&self, step: &str, key: &str) -> Option<Done> {
        let text = std::fs::read_to_string(self.record_path(step)).ok()?;
        let mut done: Done = serde_json::from_str(&text).ok()?;
        if done.key != key {
            return None;
        }
        for o in &done.outputs {
            let (size, mtime) = stamp(&o.path)?;
            if o.path.is_dir() {
                if content_hash(&o.path).ok()? != o.hash {
                    return None;
                }
            } else if size != o.size || mtime != o.mtime_ns {
                return None;
            }
        }
        done.cached = true;
        Some(done)
    }

    /// Forgets a step (before it runs again, so a half-done run never looks done).
    pub fn forget(&self, step: &str) {
        let _ = std::fs::remove_file(self.record_path(step));
    }

    pub fn save(
        &self,
        step: &str,
        key: &str,
        outputs: &[PathBuf],
        facts: serde_json::Value,
        seconds: f64,
    ) -> anyhow::Result<Done> {
        let mut recs = Vec::new();
        for p in outputs {
            let (size, mtime_ns) = stamp(p).with_context(|| {
                format!("step '{step}' finished but did not produce {}", p.display())
            })?;
            recs.push(Output {
                path: p.clone(),
                hash: content_hash(p)?,
                size,
                mtime_ns,
            });
        }
        let done = Done {
            key: key.to_string(),
            outputs: recs,
            facts,
            seconds,
            cached: false,
        };
        let path = self.record_path(step);
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_vec_pretty(&done)?)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(done)
    }
}

/// A step name as a file name: "build autofdo+thinlto" -> "build-autofdo+thinlto".
pub fn file_name(step: &str) -> String {
    step.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "+-._".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_separate_parts() {
        let a = Key::new("s").add("x", "ab").add("y", "c").finish();
        let b = Key::new("s").add("x", "a").add("y", "bc").finish();
        assert_ne!(a, b);
        assert_eq!(a, Key::new("s").add("x", "ab").add("y", "c").finish());
    }

    /// Every cached step's key is this hash: a change here would rebuild everything
    /// every user has cached (the values are those of kfdo 0.1's keys).
    #[test]
    fn keys_are_stable_across_versions() {
        assert_eq!(
            Key::new("build").finish(),
            "5ae682ea65a57952b58cc17c463f5ba2a6d5ce5185c02c5b932a74520ae96d21"
        );
        assert_eq!(
            Key::new("kernel record")
                .add("kernel", "k1")
                .add("initrd", "i1")
                .add("run", "tcp_rr:1000")
                .add("period", "10000")
                .finish(),
            "e7bdef22457e36f8efd8980c98fd1ba253a90be881da18ec3edc038196e6e63a"
        );
    }

    #[test]
    fn a_step_is_fresh_until_its_key_or_output_changes() {
        let d = tempfile::tempdir().unwrap();
        let cache = Cache::open(&d.path().join("state")).unwrap();
        let out = d.path().join("bin");
        std::fs::write(&out, b"one").unwrap();
        let done = cache
            .save(
                "build x",
                "k1",
                std::slice::from_ref(&out),
                serde_json::json!({}),
                1.0,
            )
            .unwrap();
        assert_eq!(done.hash_of(&out), content_hash(&out).unwrap());
        assert!(cache.lookup("build x", "k1").unwrap().cached);
        assert!(cache.lookup("build x", "k2").is_none());
        std::fs::remove_file(&out).unwrap();
        assert!(cache.lookup("build x", "k1").is_none());
        std::fs::write(&out, b"longer").unwrap();
        assert!(cache.lookup("build x", "k1").is_none());
    }

    #[test]
    fn directories_hash_by_content() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("t/sub")).unwrap();
        std::fs::write(d.path().join("t/sub/f"), b"1").unwrap();
        let h1 = content_hash(&d.path().join("t")).unwrap();
        std::fs::write(d.path().join("t/sub/f"), b"2").unwrap();
        assert_ne!(h1, content_hash(&d.path().join("t")).unwrap());
    }
}
