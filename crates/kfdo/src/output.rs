//! Terminal output shared by all subcommands: quiet mode, progress bars that only
//! draw on a terminal, and atomic output files.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Options every subcommand sees.
pub struct Global {
    pub quiet: bool,
}

impl Global {
    /// Print an informational line to stderr unless `--quiet`.
    pub fn info(&self, msg: impl AsRef<str>) {
        if !self.quiet {
            eprintln!("{}", msg.as_ref());
        }
    }

    /// A spinner/progress bar drawn only when stderr is a terminal and not `--quiet`.
    pub fn progress(&self, len: Option<u64>, msg: &str) -> indicatif::ProgressBar {
        if self.quiet || !std::io::stderr().is_terminal() {
            return indicatif::ProgressBar::hidden();
        }
        let pb = match len {
            Some(n) => indicatif::ProgressBar::new(n).with_style(
                indicatif::ProgressStyle::with_template(
                    "{msg:>12} [{bar:40}] {bytes}/{total_bytes} ({eta})",
                )
                .unwrap()
                .progress_chars("=> "),
            ),
            None => indicatif::ProgressBar::new_spinner(),
        };
        pb.set_message(msg.to_string());
        pb
    }
}

/// An output file written to a temporary sibling and renamed into place on
/// `commit`, so a failure never leaves a partial file behind.
pub struct AtomicOutput {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
}

impl AtomicOutput {
    pub fn create(path: &Path) -> anyhow::Result<Self> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // tempfile's default is 0600; an output file gets the mode any other tool's
        // output would (0666 less the umask, which open(2) applies).
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::Builder::new()
            .prefix(".kfdo-tmp-")
            .permissions(std::fs::Permissions::from_mode(0o666))
            .tempfile_in(&dir)
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot write output {}: {e} (check that {} exists and is writable)",
                    path.display(),
                    dir.display()
                )
            })?;
        Ok(Self {
            tmp,
            path: path.to_path_buf(),
        })
    }

    pub fn file(&mut self) -> &mut std::fs::File {
        self.tmp.as_file_mut()
    }

    pub fn commit(self) -> anyhow::Result<()> {
        let path = self.path;
        self.tmp
            .persist(&path)
            .map_err(|e| anyhow::anyhow!("cannot write output {}: {}", path.display(), e.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn committed_output_has_the_mode_of_a_plainly_created_file() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::File::create(&plain).unwrap();
        let path = dir.path().join("out");
        let mut out = AtomicOutput::create(&path).unwrap();
        out.file().write_all(b"profile").unwrap();
        out.commit().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), mode(&plain));
        assert_eq!(std::fs::read(&path).unwrap(), b"profile");
    }
}
