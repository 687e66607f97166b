//! Typed errors. Every variant names the file and says what to do about it,
//! because these messages end up in front of a user running `kfdo` on a
//! binary they did not necessarily build themselves.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    #[error("{path}: cannot read: {source}", path = .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: is a directory, not an ELF file: name the program or library itself (e.g. {path}/prog)", path = .path.display())]
    Directory { path: PathBuf },

    #[error("{path}: not an ELF file (no \\x7fELF magic at offset 0): pass the program binary, not a script, archive or perf.data", path = .path.display())]
    NotElf { path: PathBuf },

    #[error("{path}: malformed or truncated ELF: {what}; re-copy or rebuild the binary", path = .path.display())]
    Malformed { path: PathBuf, what: String },

    #[error("{path}: unsupported binary: {what}", path = .path.display())]
    Unsupported { path: PathBuf, what: String },

    #[error("{path}: binary has no DWARF debug info (.debug_info): rebuild with -g (for profiling: -g -fdebug-info-for-profiling)", path = .path.display())]
    NoDebugInfo { path: PathBuf },

    #[error("{path}: debug info was moved to a separate file (.gnu_debuglink -> {link:?}); separate debug files are not supported yet: open the unstripped binary or rebuild with -g and without stripping", path = .path.display())]
    SeparateDebugInfo { path: PathBuf, link: String },

    #[error("{path}: split DWARF (skeleton unit at .debug_info offset {offset:#x}, dwo {dwo:?}) is not supported: rebuild without -gsplit-dwarf", path = .path.display())]
    SplitDwarf {
        path: PathBuf,
        offset: u64,
        dwo: String,
    },

    #[error("{path}: cannot decompress section {section}: {what}; rebuild without --compress-debug-sections or use a newer kfdo", path = .path.display())]
    Decompress {
        path: PathBuf,
        section: String,
        what: String,
    },

    #[error("{path}: cannot relocate section {section} of this relocatable object: {what}; kfdo reads the debug info of x86-64 kernel modules (.ko) and objects", path = .path.display())]
    Relocate {
        path: PathBuf,
        section: String,
        what: String,
    },

    #[error("{path}: bad DWARF in {section} at offset {offset:#x}: {what}; the debug info is corrupt or uses an unsupported extension", path = .path.display())]
    Dwarf {
        path: PathBuf,
        section: &'static str,
        offset: u64,
        what: String,
    },

    #[error("{path}: the executable sections span more than 4 GiB ({span:#x} bytes), which the instruction table cannot index", path = .path.display())]
    TextTooLarge { path: PathBuf, span: u64 },

    #[error("{path}: no basic-block address map (.llvm_bb_addr_map): rebuild with clang -fbasic-block-address-map (clang >= 19; -fbasic-block-sections=labels before) and link without stripping it; for the kernel, CONFIG_PROPELLER_CLANG=y", path = .path.display())]
    NoBbAddrMap { path: PathBuf },

    #[error("{path}: bad basic-block address map in {section} at byte {offset:#x}: {what}", path = .path.display())]
    BbAddrMap {
        path: PathBuf,
        section: String,
        offset: u64,
        what: String,
    },
}
