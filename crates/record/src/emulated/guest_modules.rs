//! Kernel modules in system-mode recordings: where the guest loaded them, so that their
//! samples are attributed to the modules' `.ko` files as perf attributes a real machine's
//! module samples (an MMAP of pid -1 naming the module file), instead of being dropped.
//!
//! QEMU's plugin API cannot read guest memory or registers on the QEMU this runs with,
//! so the guest says where each module's code landed (KASLR moves modules too): the
//! workload's /init prints `kfdo-module: NAME 0xTEXT SIZE` on its console for every
//! module it loads, `TEXT` being `/sys/module/NAME/sections/.text`.

use crate::emulated::maps::Map;
use crate::error::Error;
use std::path::{Path, PathBuf};

/// The modules a guest loads: where its console went, and their `.ko` files on the host.
#[derive(Debug, Clone, Default)]
pub struct GuestModules {
    /// The file the guest's serial console is written to (`SystemConfig::stdio`'s stdout).
    pub console: PathBuf,
    /// The `.ko` files (with debug info) of the modules the guest loads.
    pub files: Vec<PathBuf>,
}

/// One module the guest reported, placed: its `.text` at runtime and in the file.
#[derive(Debug, Clone)]
pub struct PlacedModule {
    pub name: String,
    pub file: PathBuf,
    /// Runtime address of `.text`.
    pub text: u64,
    pub text_len: u64,
    /// `.text`'s offset in kfdo's layout of the relocatable file (kfdo_elf: its address
    /// there less the layout's base; 0 when `.text` comes first), the mapping's pgoff.
    pub text_offset: u64,
    pub build_id: Option<Vec<u8>>,
}

impl PlacedModule {
    pub fn contains(&self, addr: u64) -> bool {
        addr >= self.text && addr - self.text < self.text_len
    }

    /// The executable mapping perf would write for it (pid -1: the kernel's).
    pub(crate) fn map(&self, time: u64) -> Map {
        Map {
            time,
            pid: -1,
            tid: 0,
            start: self.text,
            len: self.text_len,
            pgoff: self.text_offset,
            prot: libc::PROT_READ as u32 | libc::PROT_EXEC as u32,
            flags: 0,
            maj: 0,
            min: 0,
            ino: 0,
            path: self.file.as_os_str().as_encoded_bytes().to_vec(),
        }
    }
}

/// The kernel's name for a module file: no directory, no `.ko`, `-` as `_`.
pub fn module_name(file: &Path) -> String {
    let base = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    base.strip_suffix(".ko").unwrap_or(base).replace('-', "_")
}

/// `(name, text address)` of each `kfdo-module:` line of a console.
pub fn parse_console(console: &str) -> Vec<(String, u64)> {
    console
        .lines()
        .filter_map(|l| {
            let rest = &l[l.find("kfdo-module: ")? + "kfdo-module: ".len()..];
            let mut words = rest.split_whitespace();
            let name = words.next()?;
            let addr = u64::from_str_radix(words.next()?.strip_prefix("0x")?, 16).ok()?;
            Some((name.to_string(), addr))
        })
        .collect()
}

/// Places the modules the guest reported; what cannot be placed is a warning (its
/// samples stay unattributed), a `.ko` that cannot be read an error.
pub fn place(g: &GuestModules, warnings: &mut Vec<String>) -> Result<Vec<PlacedModule>, Error> {
    let console = std::fs::read_to_string(&g.console).map_err(|e| {
        Error::io(
            format!("cannot read the guest console {}", g.console.display()),
            e,
        )
    })?;
    let reported = parse_console(&console);
    let mut placed = Vec::new();
    for file in &g.files {
        let name = module_name(file);
        let Some(&(_, text)) = reported.iter().find(|(n, _)| *n == name) else {
            warnings.push(format!(
                "module {name} ({}): the guest did not report loading it (no `kfdo-module: \
                 {name}` line on its console); its samples are not attributed",
                file.display()
            ));
            continue;
        };
        if text == 0 {
            warnings.push(format!(
                "module {name}: the guest could not read its .text address (a kernel without \
                 CONFIG_KALLSYMS has no /sys/module/{name}/sections); its samples are not attributed"
            ));
            continue;
        }
        let bad = |what: String| Error::Program {
            program: file.display().to_string(),
            what,
        };
        let bin = kfdo_elf::Binary::open(file).map_err(|e| bad(e.to_string()))?;
        if !bin.is_relocatable() {
            return Err(bad(
                "not a kernel module: a module is a relocatable ELF object (.ko)".into(),
            ));
        }
        let sec = bin
            .section_by_name(".text")
            .ok_or_else(|| bad("the module has no .text section".into()))?;
        placed.push(PlacedModule {
            name,
            file: file.clone(),
            text,
            text_len: sec.size,
            text_offset: sec.addr - kfdo_elf::RELOCATABLE_LAYOUT_BASE,
            build_id: bin.build_id().map(<[u8]>::to_vec),
        });
    }
    for (name, _) in &reported {
        if !placed.iter().any(|p| p.name == *name)
            && !g.files.iter().any(|f| module_name(f) == *name)
        {
            warnings.push(format!(
                "the guest loaded module {name}, whose .ko was not given: its samples are not attributed"
            ));
        }
    }
    Ok(placed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_lines_and_module_names() {
        let console = "[    1.2] tun: Universal TUN/TAP device driver\r\n\
                       kfdo-module: tun 0xffffffffc0200000 45056\n\
                       noise kfdo-module: bad zz 1\n\
                       kfdo-module: nosys 0x0 100\n";
        assert_eq!(
            parse_console(console),
            [
                ("tun".to_string(), 0xffff_ffff_c020_0000),
                ("nosys".to_string(), 0)
            ]
        );
        assert_eq!(module_name(Path::new("/b/drivers/net/tun.ko")), "tun");
        assert_eq!(module_name(Path::new("x86_pkg-temp.ko")), "x86_pkg_temp");
    }
}
