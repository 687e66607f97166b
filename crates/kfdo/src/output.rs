//! Terminal output shared by all subcommands: quiet mode and progress bars that only
//! draw on a terminal. (Output files are written whole or not at all by the libraries,
//! through kfdo-outfile.)

use std::io::IsTerminal;

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

    /// An old spelling that still works for one release: says what replaces it
    /// (unless `--quiet`).
    pub fn deprecated(&self, old: &str, new: &str) {
        if !self.quiet {
            eprintln!("kfdo: note: `{old}` is deprecated; use `{new}`");
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
