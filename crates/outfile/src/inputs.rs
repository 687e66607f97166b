//! No command writes over one of its own inputs: the rule every command applies,
//! before doing any work, to the files it will write and the files it reads.

use crate::atomic::OutputError;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One file a command will write, with the option that names it (`-o`, `--raw-out`,
/// ...), so that the error can say which option to change.
#[derive(Clone, Copy, Debug)]
pub struct Out<'a> {
    pub option: &'a str,
    pub path: &'a Path,
}

impl<'a> Out<'a> {
    pub fn new(option: &'a str, path: &'a Path) -> Out<'a> {
        Out { option, path }
    }
}

/// Refuses when an output is one of the inputs: the same path however spelled
/// (`./x`, `x`, a symbolic link) or the same file under another name (a hard link),
/// told apart by device and inode. Outputs that do not exist yet cannot be an input.
pub fn refuse_overwriting_inputs(outputs: &[Out], inputs: &[&Path]) -> Result<(), OutputError> {
    for out in outputs {
        for input in inputs {
            if same_file(out.path, input) {
                return Err(OutputError {
                    path: out.path.to_path_buf(),
                    message: format!(
                        "it is the input {} (the same file); writing it would destroy that \
                         input: choose another {}",
                        input.display(),
                        out.option
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Refuses an output that lies inside an input directory which the command reads
/// whole (every file under it): a later run over the directory would read the output
/// as one more input.
pub fn refuse_output_inside_input_dirs(
    outputs: &[Out],
    input_dirs: &[&Path],
) -> Result<(), OutputError> {
    for out in outputs {
        let Some(out_dir) = canonical_parent(out.path) else {
            continue;
        };
        for dir in input_dirs.iter().filter(|d| d.is_dir()) {
            if std::fs::canonicalize(dir).is_ok_and(|d| out_dir.starts_with(d)) {
                return Err(OutputError {
                    path: out.path.to_path_buf(),
                    message: format!(
                        "it lies inside the input directory {}, which is read whole: a later \
                         run over that directory would read it as one more input; choose \
                         another {} outside it",
                        dir.display(),
                        out.option
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Whether `a` and `b` name one existing file.
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    if ma.dev() == mb.dev() && ma.ino() == mb.ino() {
        return true;
    }
    matches!(
        (std::fs::canonicalize(a), std::fs::canonicalize(b)),
        (Ok(x), Ok(y)) if x == y
    )
}

/// The canonical directory an output goes to, when it exists.
fn canonical_parent(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(crate::atomic::parent_dir(path)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_file_under_any_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("p.data");
        std::fs::write(&input, b"recording").unwrap();
        let link = dir.path().join("hard.data");
        std::fs::hard_link(&input, &link).unwrap();
        let dotted = dir.path().join(".").join("p.data");
        for out in [&input, &link, &dotted] {
            let e = refuse_overwriting_inputs(&[Out::new("-o", out)], &[&input])
                .unwrap_err()
                .to_string();
            assert!(e.contains(&input.display().to_string()), "{e}");
            assert!(e.contains(&out.display().to_string()), "{e}");
            assert!(e.contains("choose another -o"), "{e}");
        }
    }

    #[test]
    fn another_file_or_a_new_one_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("p.data");
        let other = dir.path().join("q.data");
        std::fs::write(&input, b"recording").unwrap();
        std::fs::write(&other, b"recording").unwrap();
        let new = dir.path().join("new.prof");
        refuse_overwriting_inputs(&[Out::new("-o", &other), Out::new("-o", &new)], &[&input])
            .unwrap();
    }

    #[test]
    fn an_output_inside_an_input_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = dir.path().join("hosts");
        std::fs::create_dir_all(inputs.join("sub")).unwrap();
        let out = inputs.join("sub/merged.parquet");
        let e = refuse_output_inside_input_dirs(&[Out::new("-o", &out)], &[&inputs])
            .unwrap_err()
            .to_string();
        assert!(e.contains("inside the input directory"), "{e}");
        let beside = dir.path().join("merged.parquet");
        refuse_output_inside_input_dirs(&[Out::new("-o", &beside)], &[&inputs]).unwrap();
    }
}
