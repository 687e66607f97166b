//! Which LLVM releases this machine has, and which of the tools kfdo runs each holds.

use std::path::Path;
use std::process::Command;

use serde::Serialize;

use crate::llvm::Llvm;

/// The tools kfdo runs, by their names in a release's own directory.
pub const TOOLS: [&str; 9] = [
    "clang",
    "clang++",
    "ld.lld",
    "llvm-profgen",
    "llvm-profdata",
    "llvm-objcopy",
    "llvm-readobj",
    "llvm-bolt",
    "perf2bolt",
];

/// One release found on this machine.
#[derive(Debug, Clone, Serialize)]
pub struct Installed {
    pub major: u32,
    /// `llvm-config --version` (e.g. `22.1.8`), when it runs.
    pub version: Option<String>,
    /// Whether kfdo's tests cover this release.
    pub known: bool,
    /// Those of [`TOOLS`] the release's directory holds.
    pub tools: Vec<String>,
    /// Those of [`TOOLS`] it lacks, with the Debian packages that bring them.
    pub missing: Vec<String>,
}

impl Installed {
    /// Whether every tool kfdo runs is there.
    pub fn complete(&self) -> bool {
        self.missing.is_empty()
    }
}

/// Every release under `/usr/lib/llvm-N`, oldest first.
pub fn installed() -> Vec<Installed> {
    installed_under(Path::new("/usr/lib"))
}

fn installed_under(lib: &Path) -> Vec<Installed> {
    let Ok(entries) = std::fs::read_dir(lib) else {
        return Vec::new();
    };
    let mut majors: Vec<u32> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix("llvm-")?.parse::<u32>().ok()
        })
        .collect();
    majors.sort_unstable();
    majors
        .into_iter()
        .map(|major| {
            let bin = lib.join(format!("llvm-{major}/bin"));
            let (tools, missing): (Vec<&str>, Vec<&str>) =
                TOOLS.iter().partition(|t| bin.join(t).exists());
            let version = Command::new(bin.join("llvm-config"))
                .arg("--version")
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
            Installed {
                major,
                version,
                known: Llvm::new(major).is_known(),
                tools: tools.into_iter().map(String::from).collect(),
                missing: missing.into_iter().map(String::from).collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_releases_by_directory_and_lists_what_each_lacks() {
        let dir = std::env::temp_dir().join(format!("kfdo-toolchain-{}", std::process::id()));
        let bin = dir.join("llvm-22/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(dir.join("llvm-9/bin")).unwrap();
        std::fs::create_dir_all(dir.join("llvm-x/bin")).unwrap();
        for t in &TOOLS[..3] {
            std::fs::write(bin.join(t), "").unwrap();
        }
        let found = installed_under(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found.iter().map(|i| i.major).collect::<Vec<_>>(), [9, 22]);
        assert_eq!(found[1].tools, ["clang", "clang++", "ld.lld"]);
        assert_eq!(found[1].missing.len(), TOOLS.len() - 3);
        assert!(found[1].known && !found[0].known && !found[1].complete());
        assert_eq!(found[1].version, None);
    }
}
