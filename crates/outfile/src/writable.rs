//! Whether an output can be written at all, checked before a long run rather than
//! found out after it.

use crate::atomic::{create_error, parent_dir, temp_in, OutputError};
use std::path::Path;

/// Checks that a file can be written at `path`: it is not a directory, and a file
/// can be created (and is removed again) in its directory.
pub fn check_writable(option: &str, path: &Path) -> Result<(), OutputError> {
    if path.is_dir() {
        return Err(OutputError {
            path: path.to_path_buf(),
            message: format!(
                "it is a directory; {option} takes a file name (e.g. {option} {})",
                path.join("out").display()
            ),
        });
    }
    let dir = parent_dir(path);
    // Dropping the temporary file removes it.
    temp_in(&dir).map(drop).map_err(|e| OutputError {
        path: path.to_path_buf(),
        message: create_error(&dir, &e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_refused_and_nothing_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let e = check_writable("-o", dir.path()).unwrap_err().to_string();
        assert!(e.contains("it is a directory"), "{e}");
        check_writable("-o", &dir.path().join("perf.data")).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_missing_directory_is_refused() {
        let e = check_writable("--json-out", Path::new("/nonexistent-kfdo-dir/v.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
    }
}
