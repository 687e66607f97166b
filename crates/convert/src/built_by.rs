//! Which compiler built a binary (the DWARF producer of most of its compile units):
//! it decides the sample profile format `kfdo profile` writes by default, since GCC
//! and clang each read only their own, and the compiler the next step names.

use std::path::Path;

use kfdo_elf::Compiler;

/// The compiler release that built most of `binary`'s compile units; None when that
/// cannot be told (no such file, no DWARF, another compiler). Errors are not
/// reported here: the conversion itself opens the binary and reports them.
pub fn built_by(binary: &Path) -> Option<Compiler> {
    let bin = kfdo_elf::Binary::open(binary).ok()?;
    if !bin.has_debug_info() {
        return None;
    }
    kfdo_elf::compiler_of_producers(&kfdo_elf::producers(&bin).ok()?)
}
