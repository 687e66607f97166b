//! The atomic writer: an output goes to a temporary sibling and is renamed into place
//! only when complete.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Why an output could not be written; names the path and what to do.
#[derive(Debug)]
pub struct OutputError {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot write output {}: {}",
            self.path.display(),
            self.message
        )
    }
}

impl std::error::Error for OutputError {}

/// The directory an output goes to (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A temporary file in `dir` for an output that will be renamed into place.
pub fn temp_in(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(".kfdo-tmp-")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
}

/// Why no temporary file could be made in `dir`, and what to do about it.
pub fn create_error(dir: &Path, e: &std::io::Error) -> String {
    if !dir.is_dir() {
        return format!(
            "the directory {} does not exist: create it, or write the output elsewhere",
            dir.display()
        );
    }
    format!(
        "cannot create a file in {}: {} (check that it is writable and the disk is not full)",
        dir.display(),
        std::io::Error::from(e.kind())
    )
}

/// An output file written to a temporary sibling and renamed into place on
/// [`AtomicOutput::commit`]; dropped without a commit, it leaves nothing behind.
pub struct AtomicOutput {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
}

impl AtomicOutput {
    pub fn create(path: &Path) -> Result<AtomicOutput, OutputError> {
        let dir = parent_dir(path);
        let tmp = temp_in(&dir).map_err(|e| OutputError {
            path: path.to_path_buf(),
            message: create_error(&dir, &e),
        })?;
        Ok(AtomicOutput {
            tmp,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn file(&mut self) -> &mut std::fs::File {
        self.tmp.as_file_mut()
    }

    /// An error about this output (a failed write into it, say).
    pub fn error(&self, e: impl std::fmt::Display) -> OutputError {
        OutputError {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    pub fn commit(self) -> Result<(), OutputError> {
        let path = self.path;
        self.tmp.persist(&path).map_err(|e| OutputError {
            message: e.error.to_string(),
            path,
        })?;
        Ok(())
    }
}

/// Writes `bytes` to `path` atomically.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut out = AtomicOutput::create(path)?;
    std::io::Write::write_all(out.file(), bytes).map_err(|e| out.error(e))?;
    out.commit()
}

/// Writes `bytes` to `path` atomically, readable by everyone (0644) whatever the
/// umask: for reports and heat maps, which are meant to be served and attached.
pub fn write_readable(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    write(path, bytes)?;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn committed_output_has_the_mode_of_a_plainly_created_file() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::File::create(&plain).unwrap();
        let path = dir.path().join("out");
        let mut out = AtomicOutput::create(&path).unwrap();
        out.file().write_all(b"profile").unwrap();
        out.commit().unwrap();
        assert_eq!(mode(&path), mode(&plain));
        assert_eq!(std::fs::read(&path).unwrap(), b"profile");
    }

    #[test]
    fn an_output_dropped_without_commit_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        {
            let mut out = AtomicOutput::create(&path).unwrap();
            out.file().write_all(b"half").unwrap();
        }
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_missing_directory_is_named_with_the_fix() {
        let e = write(Path::new("/nonexistent-kfdo-dir/x.json"), b"{}")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/nonexistent-kfdo-dir does not exist: create it"),
            "{e}"
        );
    }

    #[test]
    fn readable_outputs_are_0644() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.html");
        write_readable(&path, b"<html>").unwrap();
        assert_eq!(mode(&path), 0o644);
    }
}
