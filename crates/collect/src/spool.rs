//! The spool directory: `work/` holds what a window is still writing (emptied at start:
//! a killed collector's half-written files never reach `ready/`), `ready/` the host
//! files waiting for upload, each moved in whole by a rename, and `bad/` the files found
//! unreadable before upload. Its size is capped: a new file pushes out the oldest first.

use std::path::{Path, PathBuf};

use crate::error::CollectError;
use crate::naming::parse_spool_name;

pub struct Spool {
    pub dir: PathBuf,
}

/// A host file waiting in `ready/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub name: String,
    pub path: PathBuf,
    pub bytes: u64,
}

/// What adding a file did.
#[derive(Debug, Default)]
pub struct Added {
    /// False when the file alone is larger than the cap (it was dropped).
    pub kept: bool,
    /// Older files dropped to make room, oldest first.
    pub dropped: Vec<String>,
}

/// Refuses a folder that is not a spool and holds anything: opening a spool empties its
/// `work/` and drops old files from `ready/`, so a folder of the user's (say, their home,
/// with a `work/` of their own) is never taken for one. A spool is known by its lock or
/// its status file, which every collector writes first.
pub fn refuse_foreign(dir: &Path, programs: &[String]) -> Result<(), CollectError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    if !names.is_empty() && !names.iter().any(|n| n == "lock" || n == "status.json") {
        return Err(CollectError::Config(format!(
            "--spool {}: holds {} ({}{}) and is not a kfdo collect spool (no lock or \
             status.json): a collector empties its spool's work/ and drops old files, so it \
             takes a new or empty folder, or an earlier collector's spool; give --spool a \
             folder of its own",
            dir.display(),
            match names.len() {
                1 => "an entry".to_string(),
                n => format!("{n} entries"),
            },
            names.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
            if names.len() > 5 { ", ..." } else { "" }
        )));
    }
    // A sampled binary inside the spool would be in the way of the files the spool holds.
    let spool = std::fs::canonicalize(dir).ok();
    for p in programs.iter().filter(|p| p.contains('/')) {
        if let (Some(s), Ok(p_abs)) = (&spool, std::fs::canonicalize(p)) {
            if p_abs.starts_with(s) {
                return Err(CollectError::Config(format!(
                    "--program {p} lies inside --spool {}, whose files the collector \
                     replaces and removes: keep the spool apart from the programs",
                    dir.display()
                )));
            }
        }
    }
    Ok(())
}

impl Spool {
    pub fn open(dir: &Path) -> Result<Spool, CollectError> {
        for sub in ["ready", "work", "bad"] {
            let d = dir.join(sub);
            std::fs::create_dir_all(&d)
                .map_err(|e| CollectError::io(&d, "cannot create the spool folder", e))?;
        }
        let spool = Spool {
            dir: dir.to_path_buf(),
        };
        spool.clear_work()?;
        Ok(spool)
    }

    /// Where a window writes before its files are complete.
    pub fn work(&self) -> PathBuf {
        self.dir.join("work")
    }

    pub fn clear_work(&self) -> Result<(), CollectError> {
        let work = self.work();
        let entries =
            std::fs::read_dir(&work).map_err(|e| CollectError::io(&work, "cannot list", e))?;
        for e in entries.flatten() {
            let p = e.path();
            let r = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
            r.map_err(|e| CollectError::io(&p, "cannot remove a leftover of a stopped window", e))?;
        }
        Ok(())
    }

    /// Files waiting for upload, oldest window first.
    pub fn waiting(&self) -> Result<Vec<Waiting>, CollectError> {
        let ready = self.dir.join("ready");
        let entries =
            std::fs::read_dir(&ready).map_err(|e| CollectError::io(&ready, "cannot list", e))?;
        let mut v = Vec::new();
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if parse_spool_name(&name).is_none() {
                continue;
            }
            let bytes = e.metadata().map(|m| m.len()).unwrap_or(0);
            v.push(Waiting {
                path: e.path(),
                name,
                bytes,
            });
        }
        v.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(v)
    }

    /// Moves a complete file from `work/` into `ready/` under `name`, dropping the oldest
    /// waiting files while the spool would pass `cap` bytes.
    pub fn add(&self, file: &Path, name: &str, cap: u64) -> Result<Added, CollectError> {
        let bytes = std::fs::metadata(file)
            .map_err(|e| CollectError::io(file, "cannot read a new host file", e))?
            .len();
        let mut added = Added::default();
        if bytes > cap {
            std::fs::remove_file(file).map_err(|e| CollectError::io(file, "cannot remove", e))?;
            added.dropped.push(name.to_string());
            return Ok(added);
        }
        let waiting = self.waiting()?;
        let mut total: u64 = waiting.iter().map(|w| w.bytes).sum();
        for old in &waiting {
            if total + bytes <= cap {
                break;
            }
            self.remove(old)?;
            total -= old.bytes;
            added.dropped.push(old.name.clone());
        }
        let dest = self.dir.join("ready").join(name);
        std::fs::rename(file, &dest)
            .map_err(|e| CollectError::io(&dest, "cannot move a host file into the spool", e))?;
        added.kept = true;
        Ok(added)
    }

    pub fn remove(&self, w: &Waiting) -> Result<(), CollectError> {
        std::fs::remove_file(&w.path).map_err(|e| CollectError::io(&w.path, "cannot remove", e))
    }

    /// Moves an unreadable file out of the way (kept for a person to look at).
    pub fn quarantine(&self, w: &Waiting) -> Result<PathBuf, CollectError> {
        let dest = self.dir.join("bad").join(&w.name);
        std::fs::rename(&w.path, &dest)
            .map_err(|e| CollectError::io(&w.path, "cannot move an unreadable file to bad/", e))?;
        Ok(dest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_of_the_users_is_not_taken_for_a_spool() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("work")).unwrap();
        std::fs::write(d.path().join("work/thesis.tex"), "mine").unwrap();
        let e = refuse_foreign(d.path(), &[]).unwrap_err().to_string();
        assert!(
            e.contains("is not a kfdo collect spool") && e.contains("(work)"),
            "{e}"
        );
        assert!(d.path().join("work/thesis.tex").exists());
        // An empty folder, a new one and an earlier spool are taken.
        refuse_foreign(&d.path().join("new"), &[]).unwrap();
        let spool = tempfile::tempdir().unwrap();
        refuse_foreign(spool.path(), &[]).unwrap();
        Spool::open(spool.path()).unwrap();
        std::fs::write(spool.path().join("status.json"), "{}").unwrap();
        refuse_foreign(spool.path(), &[]).unwrap();
    }

    #[test]
    fn a_program_inside_the_spool_is_refused() {
        let spool = tempfile::tempdir().unwrap();
        std::fs::write(spool.path().join("lock"), "").unwrap();
        let prog = spool.path().join("prog");
        std::fs::write(&prog, "").unwrap();
        let e = refuse_foreign(spool.path(), &[prog.display().to_string()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("lies inside --spool"), "{e}");
    }

    fn file(spool: &Spool, n: usize) -> PathBuf {
        let p = spool.work().join(format!("f{n}"));
        std::fs::write(&p, vec![0u8; n]).unwrap();
        p
    }

    fn name(seq: u64) -> String {
        format!("{seq:08}-20261129T000000Z.ab.parquet")
    }

    #[test]
    fn the_oldest_files_go_first_when_the_spool_is_full() {
        let d = tempfile::tempdir().unwrap();
        let s = Spool::open(d.path()).unwrap();
        for seq in 1..=3 {
            let a = s.add(&file(&s, 400), &name(seq), 1000).unwrap();
            assert!(a.kept);
            if seq == 3 {
                assert_eq!(a.dropped, vec![name(1)]);
            } else {
                assert!(a.dropped.is_empty());
            }
        }
        let names: Vec<String> = s.waiting().unwrap().into_iter().map(|w| w.name).collect();
        assert_eq!(names, vec![name(2), name(3)]);
    }

    #[test]
    fn a_file_larger_than_the_cap_is_dropped_alone() {
        let d = tempfile::tempdir().unwrap();
        let s = Spool::open(d.path()).unwrap();
        s.add(&file(&s, 10), &name(1), 100).unwrap();
        let a = s.add(&file(&s, 200), &name(2), 100).unwrap();
        assert!(!a.kept);
        assert_eq!(a.dropped, vec![name(2)]);
        assert_eq!(s.waiting().unwrap().len(), 1);
    }

    #[test]
    fn a_stopped_windows_leftovers_are_cleared_and_foreign_files_ignored() {
        let d = tempfile::tempdir().unwrap();
        let s = Spool::open(d.path()).unwrap();
        std::fs::write(s.work().join("half.parquet"), b"PAR1").unwrap();
        std::fs::write(d.path().join("ready/notes.txt"), b"x").unwrap();
        let s = Spool::open(d.path()).unwrap();
        assert_eq!(std::fs::read_dir(s.work()).unwrap().count(), 0);
        assert!(s.waiting().unwrap().is_empty());
    }
}
