//! Output files are written to a temporary sibling and renamed into place, so that they are
//! complete or absent.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// A temporary file in `dir` for an output that will be renamed into place. tempfile's
/// default mode is 0600; an output gets the mode any other tool's would (0666 less the
/// umask, which open(2) applies).
pub(crate) fn temp_output_in(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(".kfdo-tmp-")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
}

/// Why no temporary file could be made in `dir`, and what to do about it.
pub(crate) fn create_error(dir: &Path, e: &std::io::Error) -> String {
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
