//! BOLT post-link optimization of an x86-64 Linux kernel (`vmlinux.unstripped`, which
//! kbuild 7.x links with `--emit-relocs` and keeps the `.rela.*` sections of): the
//! workarounds BOLT needs, and the boot image rebuilt from the BOLTed vmlinux.
//!
//! * [`needs_ksymtab_gpl`]: Linux 7.x has no `__ksymtab_gpl` section (it has
//!   `__kflagstab`), and BOLT's Linux kernel support dereferences the missing section
//!   and segfaults right after `BOLT-INFO: Linux kernel version is ...`
//!   (llvm/llvm-project#206028). The workaround is an empty section, which leaves the
//!   code byte for byte as it was:
//!   `llvm-objcopy --add-section __ksymtab_gpl=/dev/null vmlinux.unstripped OUT`.
//! * [`skip_functions`] / [`skip_file_text`]: the functions BOLT must not rewrite,
//!   written for `--skip-funcs-file` (see [`SkipReason`] for the rules).
//! * [`boot_image_commands`] / [`rebuild_boot_image`]: `arch/x86/boot/bzImage` remade
//!   from the BOLTed vmlinux without relinking, by replaying kbuild's saved commands
//!   (`.T.cmd` files) in a shadow of the build tree.
//!
//! **KASLR**: BOLT rewrites the kernel in non-relocation mode and drops `.rela.*`, so the
//! boot-time relocation table (`arch/x86/boot/compressed/vmlinux.relocs`, which
//! [`rebuild_boot_image`] keeps from the original build, as it keeps `voffset.h`) is stale
//! for moved code: a BOLTed kernel must boot with `nokaslr` on its command line.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use kfdo_elf::{Binary, Code, InsnKind};

/// The section BOLT's Linux kernel support expects (see the module doc).
pub const KSYMTAB_GPL: &str = "__ksymtab_gpl";

/// Functions the BOLT guide for Linux (bolt/docs/OptimizingLinux.md) always skips:
/// `--skip-funcs=__entry_text_start,irq_entries_start`.
pub const GUIDE_DEFAULT_SKIPS: &[&str] = &["__entry_text_start", "irq_entries_start"];

/// True when `vmlinux` lacks `__ksymtab_gpl` (Linux >= 7.0): BOLT then needs the empty
/// section added (see the module doc) or it crashes.
pub fn needs_ksymtab_gpl(vmlinux: &Path) -> Result<bool> {
    let bin = open(vmlinux)?;
    Ok(bin.section_by_name(KSYMTAB_GPL).is_none())
}

/// Why BOLT must leave a function alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkipReason {
    /// The function holds an x86 runtime-const patch site: an entry of a
    /// `runtime_ptr_*` / `runtime_shift_*` section (a 32-bit offset, relative to the
    /// entry itself, of the bytes patched at boot; arch/x86/include/asm/runtime-const.h).
    /// BOLT does not know these tables, so moved code would leave them pointing at
    /// stale addresses and the boot-time patching would corrupt other code.
    RuntimeConst,
    /// The function `F` has a split part `F.cold` (clang's -split-machine-functions)
    /// and `F` or `F.cold` holds an indirect `jmp`: a jump table may then point into
    /// both parts, and BOLT reorders `F` without rewriting such a table (the kernel
    /// crashes at boot: `x64_sys_call`). Both `F` and `F.cold` are skipped. The rule is
    /// conservative: an indirect tail call also counts.
    JumpTableIntoCold,
    /// Skipped by the BOLT guide for Linux ([`GUIDE_DEFAULT_SKIPS`]).
    GuideDefault,
}

/// A function BOLT must not rewrite, by its symbol name (every local function of that
/// name: BOLT's `NAME/N` duplicates included, see [`skip_file_text`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Skipped {
    pub name: String,
    pub reason: SkipReason,
}

/// The functions of `vmlinux` (x86-64, with `.symtab`) that BOLT must skip, for every
/// rule of [`SkipReason`]: the guide's first, then the runtime-const ones, then the
/// jump-table ones, each sorted by name. A name appears once per reason.
pub fn skip_functions(vmlinux: &Path) -> Result<Vec<Skipped>> {
    let bin = open(vmlinux)?;
    let funcs = FuncIndex::new(&bin);
    if funcs.syms.is_empty() {
        bail!(
            "{} has no function symbols in its executable sections: BOLT needs the \
             unstripped kernel (pass vmlinux.unstripped from the kbuild O= tree, not a \
             stripped vmlinux)",
            vmlinux.display()
        );
    }
    let mut out: Vec<Skipped> = GUIDE_DEFAULT_SKIPS
        .iter()
        .map(|n| Skipped {
            name: n.to_string(),
            reason: SkipReason::GuideDefault,
        })
        .collect();
    let rt = runtime_const_functions(&bin, &funcs)
        .with_context(|| format!("reading the runtime-const tables of {}", vmlinux.display()))?;
    out.extend(rt.into_iter().map(|name| Skipped {
        name,
        reason: SkipReason::RuntimeConst,
    }));
    let code =
        Code::new(&bin).with_context(|| format!("decoding the code of {}", vmlinux.display()))?;
    let jt = jump_table_into_cold_functions(&funcs, &code);
    out.extend(jt.into_iter().map(|name| Skipped {
        name,
        reason: SkipReason::JumpTableIntoCold,
    }));
    Ok(out)
}

/// The `--skip-funcs-file` text for `skipped`: one regex a line (BOLT anchors it,
/// `^REGEX$`), the name with its regex metacharacters escaped and BOLT's optional
/// `/N` suffix for duplicate local names: `name(/[0-9]+)?`. Each name once, in the
/// order given.
pub fn skip_file_text(skipped: &[Skipped]) -> String {
    let mut seen = BTreeSet::new();
    let mut text = String::new();
    for s in skipped {
        if seen.insert(s.name.as_str()) {
            text.push_str(&regex_escape(&s.name));
            text.push_str("(/[0-9]+)?\n");
        }
    }
    text
}

/// `name` with the POSIX extended regex metacharacters (llvm::Regex) backslash-escaped.
fn regex_escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(
            c,
            '.' | '^' | '$' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|' | '\\'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn open(vmlinux: &Path) -> Result<Binary> {
    Binary::open(vmlinux).with_context(|| {
        format!(
            "cannot read the kernel ELF {} (pass the kbuild O= tree's vmlinux.unstripped)",
            vmlinux.display()
        )
    })
}

/// One function symbol in an executable section.
struct FuncSym {
    name: String,
    addr: u64,
    size: u64,
    is_func: bool,
}

/// The symbols of the executable sections, sorted by address.
struct FuncIndex {
    syms: Vec<FuncSym>,
}

impl FuncIndex {
    fn new(bin: &Binary) -> FuncIndex {
        let exec: BTreeSet<u32> = bin
            .sections()
            .iter()
            .filter(|s| s.is_executable())
            .map(|s| s.index as u32)
            .collect();
        let data = bin.data();
        let mut syms: Vec<FuncSym> = bin
            .symbols()
            .symtab()
            .iter()
            .filter(|s| s.section.is_some_and(|i| exec.contains(&i)))
            // STT_NOTYPE (asm labels such as __get_user_1) and STT_FUNC.
            .filter(|s| s.st_type == 0 || s.st_type == 2)
            .map(|s| FuncSym {
                name: String::from_utf8_lossy(s.name(data)).into_owned(),
                addr: s.addr,
                size: s.size,
                is_func: s.st_type == 2,
            })
            .filter(|s| !s.name.is_empty() && !s.name.starts_with(".L"))
            .collect();
        syms.sort_by_key(|s| s.addr);
        FuncIndex { syms }
    }

    /// The function holding `addr`: the last STT_FUNC symbol at or below it whose
    /// range contains it, else the last symbol at or below it (BOLT makes a
    /// function of it too).
    fn containing(&self, addr: u64) -> Option<&FuncSym> {
        let n = self.syms.partition_point(|s| s.addr <= addr);
        let below = &self.syms[..n];
        below
            .iter()
            .rev()
            .take(64)
            .find(|s| s.is_func && addr < s.addr.saturating_add(s.size.max(1)))
            .or(below.last())
    }
}

/// The names of the functions holding a runtime-const patch site, sorted.
fn runtime_const_functions(bin: &Binary, funcs: &FuncIndex) -> Result<BTreeSet<String>> {
    let data = bin.data();
    let mut names = BTreeSet::new();
    for sec in bin.sections() {
        if !(sec.name.starts_with("runtime_ptr_") || sec.name.starts_with("runtime_shift_")) {
            continue;
        }
        let start = sec.offset as usize;
        let bytes = data
            .get(start..start + sec.size as usize)
            .with_context(|| format!("section {} runs past the end of the file", sec.name))?;
        for (i, entry) in bytes.chunks_exact(4).enumerate() {
            let rel = i32::from_le_bytes(entry.try_into().unwrap()) as i64;
            let site = (sec.addr + 4 * i as u64).wrapping_add(rel as u64);
            let f = funcs.containing(site).with_context(|| {
                format!(
                    "{} entry {i} points at {site:#x}, below every function symbol",
                    sec.name
                )
            })?;
            names.insert(f.name.clone());
        }
    }
    Ok(names)
}

/// The names `F` and `F.cold` of every function with a split part whose parts hold an
/// indirect jump, sorted.
fn jump_table_into_cold_functions(funcs: &FuncIndex, code: &Code) -> BTreeSet<String> {
    let mut by_name: HashMap<&str, Vec<&FuncSym>> = HashMap::new();
    for s in &funcs.syms {
        by_name.entry(s.name.as_str()).or_default().push(s);
    }
    let has_indirect_jump = |s: &FuncSym| {
        let end = s.addr.saturating_add(s.size);
        let Some(mut i) = code.insn_at_or_after(s.addr) else {
            return false;
        };
        while i < code.len() && code.addr(i) < end {
            if code.kind(i) == InsnKind::IndirectJump {
                return true;
            }
            i += 1;
        }
        false
    };
    let mut out = BTreeSet::new();
    for (name, colds) in &by_name {
        let Some(parent) = name.strip_suffix(".cold") else {
            continue;
        };
        let parents = by_name.get(parent).map(Vec::as_slice).unwrap_or(&[]);
        if parents
            .iter()
            .chain(colds.iter())
            .any(|s| has_indirect_jump(s))
        {
            out.insert(parent.to_string());
            out.insert(name.to_string());
        }
    }
    out
}

/// The boot image targets, in build order, relative to the kbuild O= tree; the
/// compressed payload (`compressed/vmlinux.bin.gz`, `.zst`, ...) is spliced in after
/// `compressed/vmlinux.bin` as `piggy.S`'s command names it.
const BOOT_TARGETS: &[&str] = &[
    "vmlinux",
    "arch/x86/boot/compressed/vmlinux.bin",
    // the compressed payload goes here
    "arch/x86/boot/compressed/piggy.S",
    "arch/x86/boot/compressed/piggy.o",
    "arch/x86/boot/compressed/vmlinux",
    "arch/x86/boot/zoffset.h",
    "arch/x86/boot/header.o",
    "arch/x86/boot/setup.elf",
    "arch/x86/boot/setup.bin",
    "arch/x86/boot/vmlinux.bin",
    "arch/x86/boot/bzImage",
];

/// The saved kbuild command of `target` in the O= tree `build_dir`: the
/// `savedcmd_TARGET := COMMAND` line of `DIR/.NAME.cmd`, decoded as make reads it.
fn saved_command(build_dir: &Path, target: &str) -> Result<String> {
    let (dir, name) = match target.rsplit_once('/') {
        Some((d, n)) => (build_dir.join(d), n),
        None => (build_dir.to_path_buf(), target),
    };
    let file = dir.join(format!(".{name}.cmd"));
    let text = fs::read_to_string(&file).with_context(|| {
        format!(
            "cannot read kbuild's saved command {} for {target}: the kernel build in {} \
             is missing or incomplete (rebuild the kernel there, e.g. `make O=... bzImage`)",
            file.display(),
            build_dir.display()
        )
    })?;
    parse_cmd_file(&text, target).with_context(|| format!("in {}", file.display()))
}

/// The command of `target` in the text of a kbuild `.cmd` file.
fn parse_cmd_file(text: &str, target: &str) -> Result<String> {
    let prefix = format!("savedcmd_{target} := ");
    for line in text.lines() {
        if let Some(cmd) = line.strip_prefix(&prefix) {
            return Ok(make_unescape(cmd));
        }
    }
    bail!(
        "no `savedcmd_{target} := ...` line (not a kbuild .cmd file for this target: \
         rebuild the kernel with the same kbuild)"
    )
}

/// Undoes kbuild's `make-cmd` escaping: `$$` is `$`, `$(pound)` is `#`.
fn make_unescape(cmd: &str) -> String {
    let mut out = String::with_capacity(cmd.len());
    let mut rest = cmd;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(t) = tail.strip_prefix("$$") {
            out.push('$');
            rest = t;
        } else if let Some(t) = tail.strip_prefix("$(pound)") {
            out.push('#');
            rest = t;
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The compressed payload target that `piggy.S`'s command reads
/// (`arch/x86/boot/compressed/vmlinux.bin.gz`, `.zst`, ...).
fn payload_target(piggy_cmd: &str) -> Result<String> {
    piggy_cmd
        .split_whitespace()
        .find(|w| w.starts_with("arch/x86/boot/compressed/vmlinux.bin."))
        .map(str::to_string)
        .with_context(|| {
            format!(
                "piggy.S's command names no arch/x86/boot/compressed/vmlinux.bin.* payload: \
                 `{piggy_cmd}` (not an x86 bzImage build)"
            )
        })
}

/// kbuild's commands that make `arch/x86/boot/bzImage` from `vmlinux.unstripped` in the
/// O= tree `build_dir`, in order, as (target, shell command), both relative to
/// `build_dir` (run them from there): `vmlinux`, the decompressor's payload and its
/// compression, `piggy`, the decompressor, the setup code and `bzImage`.
/// `compressed/vmlinux.relocs` and `voffset.h` are not remade (see the module doc).
pub fn boot_image_commands(build_dir: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for &t in BOOT_TARGETS {
        if t == "arch/x86/boot/compressed/piggy.S" {
            let piggy = saved_command(build_dir, t)?;
            let payload = payload_target(&piggy)?;
            let cmd = saved_command(build_dir, &payload)?;
            out.push((payload, cmd));
            out.push((t.to_string(), piggy));
        } else {
            out.push((t.to_string(), saved_command(build_dir, t)?));
        }
    }
    Ok(out)
}

/// Makes `arch/x86/boot/bzImage` from `bolted_unstripped` (a BOLTed
/// `vmlinux.unstripped`) with the commands of [`boot_image_commands`], in a shadow of
/// the O= tree `build_dir` under `work` (which must be empty or absent): `work` gets a
/// copy of `arch/x86/boot` (what the commands write), the input as
/// `vmlinux.unstripped` and symbolic links to everything else in `build_dir`, which is
/// left untouched. `vmlinux` is made by kbuild's own command, less BOLT's helper section
/// `__ksymtab_gpl`. Returns `work/arch/x86/boot/bzImage`; boot it with `nokaslr`.
pub fn rebuild_boot_image(
    build_dir: &Path,
    bolted_unstripped: &Path,
    work: &Path,
) -> Result<PathBuf> {
    let commands = boot_image_commands(build_dir)?;
    let input = fs::canonicalize(bolted_unstripped).with_context(|| {
        format!(
            "the BOLTed kernel {} does not exist (run llvm-bolt first)",
            bolted_unstripped.display()
        )
    })?;
    let build_dir = fs::canonicalize(build_dir)
        .with_context(|| format!("the kernel build {} does not exist", build_dir.display()))?;
    if work.exists() && fs::read_dir(work)?.next().is_some() {
        bail!(
            "the work directory {} is not empty (remove it, or pass a new or empty one)",
            work.display()
        );
    }
    fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
    shadow_tree(&build_dir, work, &["arch", "x86", "boot"])?;
    symlink(&input, &work.join("vmlinux.unstripped"))?;

    for (i, (target, cmd)) in commands.iter().enumerate() {
        run_sh(work, target, cmd)?;
        if i == 0 {
            strip_ksymtab_gpl(work, cmd)?;
        }
    }
    let image = work.join("arch/x86/boot/bzImage");
    if !image.is_file() {
        bail!(
            "kbuild's bzImage command ran but left no {} (check {}/arch/x86/boot/.bzImage.cmd)",
            image.display(),
            build_dir.display()
        );
    }
    Ok(image)
}

/// Mirrors `src` into `dst`: along `path` real directories, the last component copied
/// (`cp -a`), every other entry a symbolic link to `src`'s; at the top level
/// `vmlinux` and `vmlinux.unstripped` are left out (the caller makes them).
fn shadow_tree(src: &Path, dst: &Path, path: &[&str]) -> Result<()> {
    let (first, rest) = path.split_first().expect("a non-empty path");
    let top = path.len() == 3;
    for entry in fs::read_dir(src).with_context(|| format!("cannot list {}", src.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        let (from, to) = (entry.path(), dst.join(&name));
        if name == *first {
            if rest.is_empty() {
                let st = Command::new("cp")
                    .arg("-a")
                    .arg(&from)
                    .arg(&to)
                    .status()
                    .context("cannot run cp")?;
                if !st.success() {
                    bail!(
                        "cp -a {} {} failed ({st}): is there room in {}?",
                        from.display(),
                        to.display(),
                        dst.display()
                    );
                }
            } else {
                fs::create_dir(&to).with_context(|| format!("cannot create {}", to.display()))?;
                shadow_tree(&from, &to, rest)?;
            }
        } else if top && (name == "vmlinux" || name == "vmlinux.unstripped") {
            continue;
        } else {
            symlink(&from, &to)?;
        }
    }
    if !dst.join(first).exists() {
        bail!(
            "{} has no {first}: not an x86 kernel build tree (pass kbuild's O= directory)",
            src.display()
        );
    }
    Ok(())
}

fn symlink(from: &Path, to: &Path) -> Result<()> {
    std::os::unix::fs::symlink(from, to)
        .with_context(|| format!("cannot link {} to {}", to.display(), from.display()))
}

/// Runs one kbuild command with `sh -c` (kbuild's CONFIG_SHELL) in `dir`.
fn run_sh(dir: &Path, target: &str, cmd: &str) -> Result<()> {
    let out = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .output()
        .context("cannot run sh")?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!(
            "kbuild's command for {target} failed ({}) in {}:\n  {cmd}\n{}\n(the tools the \
             kernel was built with must be on PATH, and the build tree complete)",
            out.status,
            dir.display(),
            tail.join("\n")
        );
    }
    Ok(())
}

/// Removes `__ksymtab_gpl` from `work/vmlinux` when the BOLTed input kept it, with the
/// objcopy that `vmlinux`'s own command (`vmlinux_cmd`) runs.
fn strip_ksymtab_gpl(work: &Path, vmlinux_cmd: &str) -> Result<()> {
    let vmlinux = work.join("vmlinux");
    let bin = Binary::open(&vmlinux)
        .with_context(|| format!("kbuild's vmlinux command made no ELF {}", vmlinux.display()))?;
    if bin.section_by_name(KSYMTAB_GPL).is_none() {
        return Ok(());
    }
    drop(bin);
    let objcopy = vmlinux_cmd
        .split_whitespace()
        .next()
        .filter(|w| w.contains("objcopy"))
        .with_context(|| format!("vmlinux's kbuild command runs no objcopy: `{vmlinux_cmd}`"))?;
    run_sh(
        work,
        "vmlinux",
        &format!("{objcopy} --remove-section={KSYMTAB_GPL} vmlinux"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_lines_escape_metacharacters_and_allow_bolt_suffix() {
        let s = |name: &str, reason| Skipped {
            name: name.to_string(),
            reason,
        };
        let text = skip_file_text(&[
            s("__entry_text_start", SkipReason::GuideDefault),
            s("x64_sys_call", SkipReason::JumpTableIntoCold),
            s("x64_sys_call.cold", SkipReason::JumpTableIntoCold),
            s("x64_sys_call", SkipReason::RuntimeConst),
            s("a$b+c(d)", SkipReason::RuntimeConst),
        ]);
        assert_eq!(
            text,
            "__entry_text_start(/[0-9]+)?\n\
             x64_sys_call(/[0-9]+)?\n\
             x64_sys_call\\.cold(/[0-9]+)?\n\
             a\\$b\\+c\\(d\\)(/[0-9]+)?\n"
        );
    }

    #[test]
    fn cmd_files_are_parsed_and_unescaped_like_make() {
        let text = "savedcmd_arch/x86/boot/zoffset.h := llvm-nm-19 arch/x86/boot/compressed/vmlinux | sed -n -e 's/^\\(x\\)$$/$(pound)define ZO_\\1/p' > arch/x86/boot/zoffset.h\n\
                    \n\
                    source_arch/x86/boot/zoffset.h := foo\n";
        assert_eq!(
            parse_cmd_file(text, "arch/x86/boot/zoffset.h").unwrap(),
            "llvm-nm-19 arch/x86/boot/compressed/vmlinux | sed -n -e 's/^\\(x\\)$/#define ZO_\\1/p' > arch/x86/boot/zoffset.h"
        );
        assert!(parse_cmd_file(text, "arch/x86/boot/bzImage").is_err());
        // `$$(pound)` is a literal `$(pound)`, not `$#`.
        assert_eq!(
            make_unescape("a $$(pound) $(pound) $$$$ $x"),
            "a $(pound) # $$ $x"
        );
    }

    #[test]
    fn the_payload_is_what_piggy_reads() {
        let cmd = "arch/x86/boot/compressed/mkpiggy arch/x86/boot/compressed/vmlinux.bin.zst > arch/x86/boot/compressed/piggy.S";
        assert_eq!(
            payload_target(cmd).unwrap(),
            "arch/x86/boot/compressed/vmlinux.bin.zst"
        );
        assert!(payload_target("true").is_err());
    }

    #[test]
    fn boot_image_commands_follow_the_cmd_files() {
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path();
        let boot = b.join("arch/x86/boot");
        fs::create_dir_all(boot.join("compressed")).unwrap();
        for t in BOOT_TARGETS
            .iter()
            .copied()
            .chain(["arch/x86/boot/compressed/vmlinux.bin.xz"])
        {
            let (d, n) = t.rsplit_once('/').unwrap_or(("", t));
            let cmd = if t.ends_with("piggy.S") {
                "arch/x86/boot/compressed/mkpiggy arch/x86/boot/compressed/vmlinux.bin.xz > x"
                    .to_string()
            } else {
                format!("make {t}")
            };
            fs::write(
                b.join(d).join(format!(".{n}.cmd")),
                format!("savedcmd_{t} := {cmd}\n"),
            )
            .unwrap();
        }
        let cmds = boot_image_commands(b).unwrap();
        let targets: Vec<&str> = cmds.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(targets.len(), BOOT_TARGETS.len() + 1);
        assert_eq!(targets[0], "vmlinux");
        assert_eq!(targets[2], "arch/x86/boot/compressed/vmlinux.bin.xz");
        assert_eq!(targets[3], "arch/x86/boot/compressed/piggy.S");
        assert_eq!(cmds[11].1, "make arch/x86/boot/bzImage");

        fs::remove_file(boot.join(".setup.elf.cmd")).unwrap();
        let err = format!("{:#}", boot_image_commands(b).unwrap_err());
        assert!(
            err.contains(".setup.elf.cmd") && err.contains("rebuild"),
            "{err}"
        );
    }
}
