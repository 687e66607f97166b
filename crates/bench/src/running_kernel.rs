//! Which kernel is running: its release (`uname -r`) and its GNU build-id.
//!
//! Two kernel builds of one version share `uname -r` (a baseline and its AutoFDO
//! rebuild, say), so a tag is tied to the build-id the kernel carries in its notes
//! (`/sys/kernel/notes`, the ELF notes of the running image, readable by anyone).

use std::path::Path;

use crate::warning::Warning;

/// Where the running kernel exposes its ELF notes.
pub const NOTES_PATH: &str = "/sys/kernel/notes";

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunningKernel {
    /// `uname -r`.
    pub release: String,
    /// The GNU build-id in lowercase hex; None where the notes could not be read.
    pub build_id: Option<String>,
}

impl RunningKernel {
    /// The kernel running now. A build-id that cannot be read is None with a warning
    /// saying why; it never fails, since the release alone still names the kernel.
    pub fn read() -> (RunningKernel, Option<Warning>) {
        Self::read_from(Path::new(NOTES_PATH))
    }

    /// As [`RunningKernel::read`], with the notes read from `notes`.
    pub fn read_from(notes: &Path) -> (RunningKernel, Option<Warning>) {
        let (build_id, warning) = match std::fs::read(notes) {
            Ok(bytes) => match kfdo_elf::gnu_build_id_in_notes(&bytes) {
                Some(id) => (Some(id.iter().map(|b| format!("{b:02x}")).collect()), None),
                None => (
                    None,
                    Some(format!("{} holds no GNU build-id note", notes.display())),
                ),
            },
            Err(e) => (None, Some(format!("cannot read {}: {e}", notes.display()))),
        };
        let kernel = RunningKernel {
            release: release(),
            build_id,
        };
        (
            kernel,
            warning.map(|reason| Warning::KernelBuildIdUnknown { reason }),
        )
    }

    /// Whether two records name the same kernel: by build-id where both have one, else
    /// by release (all that is known then).
    pub fn same_as(&self, other: &RunningKernel) -> bool {
        match (&self.build_id, &other.build_id) {
            (Some(a), Some(b)) => a == b,
            _ => self.release == other.release,
        }
    }
}

impl std::fmt::Display for RunningKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}, build-id {}",
            self.release,
            self.build_id.as_deref().unwrap_or("unknown")
        )
    }
}

/// `uname -r`: from uname(2), which needs no /proc.
fn release() -> String {
    // SAFETY: utsname is plain bytes, so all-zero is a valid value; uname fills it and
    // NUL-terminates every field.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
    }
    let bytes: Vec<u8> = u
        .release
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_build_id_from_a_notes_file_as_hex() {
        // One GNU build-id note in this machine's byte order, as the kernel writes it.
        let mut notes = Vec::new();
        for word in [4u32, 4, 3] {
            notes.extend(word.to_ne_bytes());
        }
        notes.extend(b"GNU\0");
        notes.extend([0x0a, 0xb1, 0x2c, 0xff]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes");
        std::fs::write(&path, &notes).unwrap();
        let (k, w) = RunningKernel::read_from(&path);
        assert_eq!(k.build_id.as_deref(), Some("0ab12cff"));
        assert!(w.is_none(), "{w:?}");
        std::fs::write(&path, &notes[..notes.len() - 1]).unwrap();
        let (k, w) = RunningKernel::read_from(&path);
        assert_eq!(k.build_id, None);
        let w = w.expect("a warning").to_string();
        assert!(w.contains("holds no GNU build-id note"), "{w}");
    }

    #[test]
    fn unreadable_notes_warn_and_keep_the_release() {
        let (k, w) = RunningKernel::read_from(Path::new("/nonexistent/notes"));
        assert_eq!(k.build_id, None);
        assert!(!k.release.is_empty());
        let w = w.expect("a warning").to_string();
        assert!(w.contains("cannot read /nonexistent/notes"), "{w}");
    }

    #[test]
    fn same_kernel_by_build_id_else_by_release() {
        let k = |r: &str, id: Option<&str>| RunningKernel {
            release: r.into(),
            build_id: id.map(String::from),
        };
        assert!(k("6.1", Some("ab")).same_as(&k("6.2", Some("ab"))));
        assert!(!k("6.1", Some("ab")).same_as(&k("6.1", Some("cd"))));
        assert!(k("6.1", None).same_as(&k("6.1", Some("cd"))));
        assert!(!k("6.1", None).same_as(&k("6.2", None)));
    }
}
