//! Which mappings in a recording are the binary being profiled.
//!
//! The build-id decides when the recording has one for the mapped file (the
//! header's build-id table, or MMAP2 records that carry it); otherwise the file
//! name decides (the binary's own name, or `--binary-name`). A file of the
//! binary's name whose build-id differs is a different build: it is never
//! used, and if nothing else matches the error names both build-ids.

use kfdo_elf::Binary;
use std::path::Path;

/// What is needed to recognise the binary and place its mappings.
pub struct TargetBinary {
    pub path: String,
    pub build_id: Option<Vec<u8>>,
    /// The file name mappings must have (no directory), when matching by name.
    pub name: String,
    /// `name` came from `--binary-name`: compare whole paths too.
    pub name_is_override: bool,
    /// For a kernel: link-time addresses of the symbols perf anchors its
    /// kernel mapping at (`_text`, `_stext`).
    pub kernel_symbols: Option<KernelSymbols>,
    /// PT_LOAD segments: (file offset, file size, vaddr).
    segments: Vec<(u64, u64, u64)>,
}

#[derive(Clone, Copy, Debug)]
pub struct KernelSymbols {
    pub text: Option<u64>,
    pub stext: Option<u64>,
    /// First executable segment: llvm-profgen's fallback anchor.
    pub first_exec: u64,
}

impl TargetBinary {
    /// A binary known by name only, for tests of inputs without mappings.
    #[cfg(test)]
    pub(crate) fn named(name: &str) -> Self {
        TargetBinary {
            path: name.to_string(),
            build_id: None,
            name: name.to_string(),
            name_is_override: false,
            kernel_symbols: None,
            segments: Vec::new(),
        }
    }

    pub fn new(bin: &Binary, binary_name: Option<&str>, kernel: bool) -> Self {
        let path = bin.path().display().to_string();
        let (name, name_is_override) = match binary_name {
            Some(n) => (n.to_string(), true),
            None => (file_name(&path).to_string(), false),
        };
        let kernel_symbols = kernel.then(|| KernelSymbols {
            text: bin.symbol_address("_text"),
            stext: bin.symbol_address("_stext"),
            first_exec: bin.preferred_base(),
        });
        // Executable segments first, page-aligned: perf records a mapping's
        // file offset rounded down to a page, and lld (unlike ld.bfd) does not
        // page-align segments in the file, so a text mapping's offset can fall
        // in the read-only segment before it. llvm-profgen anchors on the
        // page-aligned executable segments; so do we. The rest stay as a
        // fallback for data mappings.
        let mask = kfdo_elf::PROFGEN_PAGE_SIZE - 1;
        let all = bin.load_segments();
        // A relocatable object (a kernel module) has no segments: a mapping's pgoff is an
        // offset into kfdo's section layout (kfdo_elf), whose code starts as the module
        // loader places it. perf maps a module at its base with pgoff 0 (where `.text`,
        // its first code section, lands); kfdo's recorder maps `.text` at its offset.
        let relocatable =
            bin.is_relocatable()
                .then_some((0, u64::MAX >> 1, kfdo_elf::RELOCATABLE_LAYOUT_BASE));
        let segments = relocatable
            .into_iter()
            .chain(all.iter().filter(|s| s.executable).map(|s| {
                let head = s.offset & mask;
                (
                    s.offset - head,
                    s.filesz.max(s.memsz) + head,
                    s.vaddr - head,
                )
            }))
            .chain(
                all.iter()
                    .filter(|s| !s.executable)
                    .map(|s| (s.offset, s.filesz.max(s.memsz), s.vaddr)),
            )
            .collect();
        Self {
            path,
            build_id: bin.build_id().map(|b| b.to_vec()),
            name,
            name_is_override,
            kernel_symbols,
            segments,
        }
    }

    /// Does a mapping of `filename` (with `build_id` if the recording has one) hold this binary?
    pub fn matches(&self, filename: &str, build_id: Option<&[u8]>) -> Match {
        let by_name = if self.kernel_symbols.is_some() {
            filename.starts_with("[kernel.kallsyms]") || file_name(filename) == "vmlinux"
        } else {
            file_name(filename) == self.name || (self.name_is_override && filename == self.name)
        };
        match (build_id, &self.build_id) {
            (Some(theirs), Some(ours)) if trim_id(theirs) == trim_id(ours) => Match::Yes,
            (Some(theirs), Some(_)) if by_name => Match::BuildIdDiffers(theirs.to_vec()),
            _ if by_name => Match::Yes,
            _ => Match::No,
        }
    }

    /// Link-time address of the byte at file offset `pgoff`.
    pub fn file_offset_to_vaddr(&self, pgoff: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|&&(off, size, _)| pgoff >= off && pgoff < off + size)
            .map(|&(off, _, va)| pgoff - off + va)
    }

    /// `delta` such that link-time = runtime + delta, for a mapping starting at
    /// runtime `start` with file offset (for the kernel: anchor address) `pgoff`.
    pub fn mapping_delta(&self, filename: &str, start: u64, pgoff: u64) -> Option<u64> {
        match &self.kernel_symbols {
            Some(k) => {
                // perf names the anchor symbol after the bracket and stores its
                // runtime address in pgoff; the difference is the KASLR slide.
                let anchor = match filename.strip_prefix("[kernel.kallsyms]") {
                    Some("_stext") => k.stext,
                    Some("_text") => k.text,
                    _ => None,
                };
                match anchor {
                    Some(link) if pgoff >> 63 == 1 => Some(link.wrapping_sub(pgoff)),
                    _ => Some(k.first_exec.wrapping_sub(start)),
                }
            }
            None => Some(self.file_offset_to_vaddr(pgoff)?.wrapping_sub(start)),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Match {
    Yes,
    No,
    /// Same name, different build: the bytes recorded came from another binary.
    BuildIdDiffers(Vec<u8>),
}

pub fn file_name(path: &str) -> &str {
    Path::new(path)
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or(path)
}

/// perf pads build-ids to 20 bytes with zeros in some places.
fn trim_id(id: &[u8]) -> &[u8] {
    let mut end = id.len();
    while end > 0 && id[end - 1] == 0 {
        end -= 1;
    }
    &id[..end]
}

pub fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}
