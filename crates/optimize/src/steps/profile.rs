//! A step that writes one file, and that file with its content hash: the shape of
//! every profile step (and of what the next step's key reads).

use std::path::PathBuf;

use super::engine::Steps;
use super::exec::Log;

/// A profile file and its content hash.
#[derive(Debug, Clone)]
pub struct ProfileFile {
    pub path: PathBuf,
    pub hash: String,
}

impl Steps {
    /// [`Steps::step`] with one output file: the file and its content hash as the step
    /// left it (or as the cache remembers it).
    pub fn file_step(
        &self,
        step: &str,
        key: String,
        out: PathBuf,
        body: impl FnOnce(&Log) -> anyhow::Result<serde_json::Value>,
    ) -> anyhow::Result<ProfileFile> {
        let done = self.step(step, key, std::slice::from_ref(&out), body)?;
        Ok(ProfileFile {
            hash: done.hash_of(&out).to_string(),
            path: out,
        })
    }
}
