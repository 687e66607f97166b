//! One collector per spool: an exclusive `flock` on `SPOOL/lock`, held for the
//! collector's life and released by the kernel when it exits, however it exits (so a
//! killed collector leaves no stale lock behind). The file holds the holder's pid for the
//! refusal message.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use crate::error::CollectError;

pub struct SpoolLock {
    _held: Flock<File>,
}

impl SpoolLock {
    pub fn take(spool: &Path) -> Result<SpoolLock, CollectError> {
        let path = spool.join("lock");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| CollectError::io(&path, "cannot open the spool's lock file", e))?;
        let mut held = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(h) => h,
            Err((mut file, Errno::EWOULDBLOCK)) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                let who = if pid.is_empty() {
                    "another kfdo collect".to_string()
                } else {
                    format!("another kfdo collect (pid {pid})")
                };
                return Err(CollectError::SpoolBusy {
                    spool: spool.to_path_buf(),
                    what: format!(
                        "{who} is using this spool; stop it first, or give this one its own --spool"
                    ),
                });
            }
            Err((_, errno)) => {
                return Err(CollectError::io(
                    &path,
                    "cannot lock the spool",
                    std::io::Error::from(errno),
                ))
            }
        };
        let write_pid = |f: &mut File| -> std::io::Result<()> {
            f.set_len(0)?;
            f.rewind()?;
            writeln!(f, "{}", std::process::id())
        };
        write_pid(&mut held)
            .map_err(|e| CollectError::io(&path, "cannot write the lock file", e))?;
        Ok(SpoolLock { _held: held })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_spool_is_refused_and_names_the_holder() {
        let d = tempfile::tempdir().unwrap();
        let first = SpoolLock::take(d.path()).unwrap();
        let e = SpoolLock::take(d.path()).err().unwrap().to_string();
        assert!(e.contains("another kfdo collect (pid"), "{e}");
        assert!(e.contains(&std::process::id().to_string()), "{e}");
        drop(first);
        SpoolLock::take(d.path()).unwrap();
    }
}
