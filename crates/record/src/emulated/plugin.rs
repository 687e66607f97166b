//! The QEMU plugin shared object, built by `build.rs` and embedded in this library.
//!
//! At record time it is written to a private temporary directory and handed to QEMU with
//! `-plugin`; the file lives as long as the returned [`PluginFile`]. Embedding means the
//! `kfdo` binary has nothing to find at run time, wherever it is copied.

use crate::error::Error;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The plugin's bytes.
pub static PLUGIN_SO: &[u8] = include_bytes!(env!("KFDO_VLBR_PLUGIN_SO"));

/// The plugin written to disk.
pub struct PluginFile {
    path: PathBuf,
}

impl PluginFile {
    /// Writes the plugin into `dir` (a private temporary directory).
    pub fn write_into(dir: &Path) -> std::io::Result<PluginFile> {
        let path = dir.join("kfdo-vlbr-plugin.so");
        let mut f = std::fs::File::create(&path)?;
        f.write_all(PLUGIN_SO)?;
        f.sync_all().ok();
        Ok(PluginFile { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A private temporary directory with the plugin in it and the path of the capture
/// stream the plugin will write there; removed, with both, on drop.
pub(crate) struct CaptureDir {
    pub plugin: PluginFile,
    /// Where the plugin writes the capture (`out=`).
    pub stream: PathBuf,
    /// Dropped last, after the plugin file in it.
    _dir: tempfile::TempDir,
}

impl CaptureDir {
    /// A new directory in `parent` (default: the system temporary directory).
    pub(crate) fn new(parent: Option<&Path>) -> Result<CaptureDir, Error> {
        let builder = tempfile::Builder::new().prefix("kfdo-vlbr-").clone();
        let dir = match parent {
            Some(d) => builder.tempdir_in(d),
            None => builder.tempdir(),
        }
        .map_err(|e| Error::io("cannot create a temporary directory for the capture", e))?;
        let plugin = PluginFile::write_into(dir.path())
            .map_err(|e| Error::io("cannot write the QEMU plugin to a temporary file", e))?;
        Ok(CaptureDir {
            plugin,
            stream: dir.path().join("capture.vlbr"),
            _dir: dir,
        })
    }
}

/// Escapes a value for QEMU's option syntax (`,` is written `,,`).
pub fn qemu_opt_escape(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for &c in s {
        out.push(c);
        if c == b',' {
            out.push(b',');
        }
    }
    out
}
