//! Which kernel is running: its release (`uname -r`) and its GNU build-id.
//!
//! Two kernel builds of one version share `uname -r` (a baseline and its AutoFDO
//! rebuild, say), so a tag is tied to the build-id the kernel carries in its notes
//! (`/sys/kernel/notes`, the ELF notes of the running image, readable by anyone).

use std::path::Path;

use crate::warning::Warning;

/// Where the running kernel exposes its ELF notes.
pub const NOTES_PATH: &str = "/sys/kernel/notes";

/// `NT_GNU_BUILD_ID`, the note type of a build-id.
const NT_GNU_BUILD_ID: u32 = 3;

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
            Ok(bytes) => match gnu_build_id(&bytes) {
                Some(id) => (Some(id), None),
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

/// The GNU build-id in a list of ELF notes, as lowercase hex. Each note is namesz,
/// descsz and type (u32 each, in the machine's byte order: the kernel wrote them),
/// then the name and the descriptor, each padded to 4 bytes. A truncated or
/// malformed list yields None rather than a wrong id.
pub fn gnu_build_id(notes: &[u8]) -> Option<String> {
    let pad4 = |n: usize| n.checked_add(3).map(|m| m & !3);
    let mut at = 0usize;
    while notes.len().saturating_sub(at) >= 12 {
        let word = |i: usize| -> usize {
            let b: [u8; 4] = notes[at + i..at + i + 4].try_into().unwrap();
            u32::from_ne_bytes(b) as usize
        };
        let (namesz, descsz, kind) = (word(0), word(4), word(8) as u32);
        let name_at = at + 12;
        let desc_at = name_at.checked_add(pad4(namesz)?)?;
        let desc_end = desc_at.checked_add(descsz)?;
        if desc_end > notes.len() {
            return None;
        }
        let name = &notes[name_at..name_at + namesz];
        if kind == NT_GNU_BUILD_ID && name == b"GNU\0" && descsz > 0 {
            let desc = &notes[desc_at..desc_end];
            return Some(desc.iter().map(|b| format!("{b:02x}")).collect());
        }
        at = desc_at.checked_add(pad4(descsz)?)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(name: &[u8], kind: u32, desc: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend((name.len() as u32).to_ne_bytes());
        v.extend((desc.len() as u32).to_ne_bytes());
        v.extend(kind.to_ne_bytes());
        v.extend(name);
        v.resize(v.len().next_multiple_of(4), 0);
        v.extend(desc);
        v.resize(v.len().next_multiple_of(4), 0);
        v
    }

    #[test]
    fn finds_the_gnu_build_id_after_other_notes() {
        // As a kernel lays them out: a "Linux" note (name padded from 6 to 8), a Xen
        // note with a 3-byte descriptor (padded to 4), then the build-id.
        let id: Vec<u8> = (0..20).map(|i| 0xa0 + i).collect();
        let mut notes = note(b"Linux\0", 0x100, &[1]);
        notes.extend(note(b"Xen\0", 18, &[7, 8, 9]));
        // A type-3 note of another owner is not a build-id.
        notes.extend(note(b"Xen\0", 3, &[0xee; 8]));
        notes.extend(note(b"GNU\0", 3, &id));
        notes.extend(note(b"GNU\0", 1, &[0, 0, 0, 0]));
        assert_eq!(
            gnu_build_id(&notes).as_deref(),
            Some("a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3")
        );
    }

    #[test]
    fn truncated_or_absent_notes_give_none() {
        let full = note(b"GNU\0", 3, &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(gnu_build_id(&full).as_deref(), Some("0102030405060708"));
        assert_eq!(gnu_build_id(&full[..full.len() - 1]), None);
        assert_eq!(gnu_build_id(&full[..11]), None);
        assert_eq!(gnu_build_id(&note(b"Linux\0", 3, &[1, 2])), None);
        assert_eq!(gnu_build_id(&[]), None);
        // A size that runs past the end must not panic or wrap.
        let mut huge = full.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert_eq!(gnu_build_id(&huge), None);
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
