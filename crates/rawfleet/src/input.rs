//! [`RawInput`]: a raw file to read, and the name every message gives it.

use std::path::{Path, PathBuf};

/// A raw file to read (`path`) and what errors and reports call it (`name`): the path
/// itself for a local file; for a copy, where it came from (the `s3://` URL of an
/// object that `kfdo merge-raw` downloaded to a temporary `path`), so that a bad file
/// is named where its owner can find it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawInput {
    pub path: PathBuf,
    /// A path or a URL: only ever displayed.
    pub name: PathBuf,
}

impl RawInput {
    /// A local file, named by its path.
    pub fn local(path: impl Into<PathBuf>) -> RawInput {
        let path = path.into();
        RawInput {
            name: path.clone(),
            path,
        }
    }

    /// The file at `path`, named `name` in every message.
    pub fn named(path: impl Into<PathBuf>, name: impl Into<PathBuf>) -> RawInput {
        RawInput {
            path: path.into(),
            name: name.into(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn name(&self) -> &Path {
        &self.name
    }
}
