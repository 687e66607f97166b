//! `Binary`: one ELF file, memory-mapped, with the cheap facts (segments,
//! build-id, section list) read at open, and the file-level tables that are
//! costly to read (symbols, decompressed debug sections) computed on first
//! use and cached. What is built from a `Binary` (disassembly: `Code::new`,
//! DWARF: `Symbolizer::new`) lives in the layers above, which this module
//! does not know about.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use object::read::elf::{ElfFile64, FileHeader, ProgramHeader};
use object::{elf, Object, ObjectSection};

use crate::arch::Arch;
use crate::debug_sections::{DebugSections, SectionError};
use crate::error::ElfError;
use crate::segments::{self, LoadSegment};
use crate::symbols::Symbols;

/// The bytes of the file. A memory map in normal use; owned bytes let tests
/// and callers that already hold the file in memory skip the filesystem.
enum Bytes {
    Map(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Map(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// What kfdo needs to know about a section, copied out of the section header
/// table at open so later stages need not re-parse it.
#[derive(Clone, Debug)]
pub struct SectionInfo {
    /// Index in the section header table.
    pub index: usize,
    pub name: String,
    pub addr: u64,
    pub size: u64,
    /// File offset of the (possibly compressed) contents.
    pub offset: u64,
    pub flags: u64,
    pub sh_type: u32,
}

impl SectionInfo {
    /// llvm's `SectionRef::isText` for ELF: SHF_EXECINSTR.
    pub fn is_executable(&self) -> bool {
        self.flags & u64::from(elf::SHF_EXECINSTR) != 0
    }
}

pub struct Binary {
    path: PathBuf,
    data: Bytes,
    arch: Arch,
    e_type: u16,
    has_interp: bool,
    segments: Vec<LoadSegment>,
    preferred_text: Vec<u64>,
    build_id: Option<std::ops::Range<usize>>,
    sections: Vec<SectionInfo>,
    /// ET_REL only: the address kfdo gives each section (see `relocatable`).
    section_bases: Option<Vec<u64>>,
    debuglink: Option<String>,
    symbols: OnceLock<Symbols>,
    /// Owned here, not by a `Symbolizer`, because a `Symbolizer<'a>` lends
    /// out `&'a` slices of these bytes (which it could not if it owned them)
    /// and so that several symbolizers of one binary decompress once.
    /// The error becomes `ElfError::Decompress` or `ElfError::Relocate`.
    debug: OnceLock<Result<DebugSections, SectionError>>,
}

impl std::fmt::Debug for Binary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Binary")
            .field("path", &self.path)
            .field("arch", &self.arch)
            .field("e_type", &self.e_type)
            .field("segments", &self.segments)
            .finish_non_exhaustive()
    }
}

impl Binary {
    /// Maps `path` and reads its headers. Fails with a typed error (never a
    /// panic) on anything that is not a well-formed 64-bit ELF file.
    pub fn open(path: &Path) -> Result<Binary, ElfError> {
        let io = |source| ElfError::Io {
            path: path.to_owned(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        // A directory opens, and mapping it fails with ENODEV ("No such device"), which
        // says nothing of the mistake.
        if file.metadata().map_err(io)?.is_dir() {
            return Err(ElfError::Directory {
                path: path.to_owned(),
            });
        }
        // SAFETY: the map is read-only; like every mmap-based reader
        // (addr2line, perf, llvm) we assume the file is not truncated while we
        // hold it. kfdo never writes binaries it reads.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        Self::from_data(path.to_owned(), Bytes::Map(map))
    }

    /// Like [`Binary::open`] for bytes already in memory; `path` is only used
    /// in messages.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Result<Binary, ElfError> {
        Self::from_data(path.to_owned(), Bytes::Owned(bytes))
    }

    fn from_data(path: PathBuf, data: Bytes) -> Result<Binary, ElfError> {
        if data.len() < 4 || &data[..4] != b"\x7fELF" {
            return Err(ElfError::NotElf { path });
        }
        let malformed = |what: String| ElfError::Malformed {
            path: path.clone(),
            what,
        };
        match data.get(4) {
            Some(&elf::ELFCLASS64) => {}
            Some(&elf::ELFCLASS32) => {
                return Err(ElfError::Unsupported {
                    path,
                    what: "32-bit ELF (only ELF64 is supported)".into(),
                })
            }
            _ => return Err(malformed("bad EI_CLASS in the ELF identification".into())),
        }
        let bytes: &[u8] = &data;
        let file =
            ElfFile64::<object::Endianness>::parse(bytes).map_err(|e| malformed(format!("{e}")))?;
        let endian = file.endian();
        let hdr = file.elf_header();
        let e_type = hdr.e_type(endian);
        let arch = Arch::from_e_machine(hdr.e_machine(endian));

        let mut segments = Vec::new();
        let mut has_interp = false;
        for ph in file.elf_program_headers() {
            match ph.p_type(endian) {
                elf::PT_INTERP => has_interp = true,
                elf::PT_LOAD => {
                    let flags = ph.p_flags(endian);
                    let s = LoadSegment {
                        vaddr: ph.p_vaddr(endian),
                        memsz: ph.p_memsz(endian),
                        offset: ph.p_offset(endian),
                        filesz: ph.p_filesz(endian),
                        flags,
                        executable: flags & elf::PF_X != 0,
                        align: ph.p_align(endian),
                    };
                    if s.offset
                        .checked_add(s.filesz)
                        .is_none_or(|e| e > bytes.len() as u64)
                    {
                        return Err(malformed(format!(
                            "PT_LOAD at file offset {:#x} (+{:#x}) extends past the end of the file ({:#x} bytes)",
                            s.offset,
                            s.filesz,
                            bytes.len()
                        )));
                    }
                    segments.push(s);
                }
                _ => {}
            }
        }
        let (preferred_text, _) = segments::preferred_text_segments(&segments);

        let section_bases =
            (e_type == elf::ET_REL).then(|| crate::relocatable::section_bases(&file));
        let mut sections = Vec::new();
        for s in file.sections() {
            let (offset, _) = s.file_range().unwrap_or((0, 0));
            let sh = s.elf_section_header();
            use object::read::elf::SectionHeader;
            sections.push(SectionInfo {
                index: s.index().0,
                name: String::from_utf8_lossy(s.name_bytes().unwrap_or(b"")).into_owned(),
                addr: match &section_bases {
                    Some(b) => b.get(s.index().0).copied().unwrap_or(0),
                    None => s.address(),
                },
                size: s.size(),
                offset,
                flags: sh.sh_flags(endian),
                sh_type: sh.sh_type(endian),
            });
        }
        let build_id = crate::build_id::find(&file, bytes);
        let debuglink = match file.gnu_debuglink() {
            Ok(Some((name, _crc))) => Some(String::from_utf8_lossy(name).into_owned()),
            _ => None,
        };

        Ok(Binary {
            path,
            arch,
            e_type,
            has_interp,
            segments,
            preferred_text,
            build_id,
            sections,
            section_bases,
            debuglink,
            symbols: OnceLock::new(),
            debug: OnceLock::new(),
            data,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The whole file.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// `e_type` (ET_EXEC = 2, ET_DYN = 3, ...).
    pub fn elf_type(&self) -> u16 {
        self.e_type
    }

    /// The NT_GNU_BUILD_ID descriptor bytes, if the binary has one.
    pub fn build_id(&self) -> Option<&[u8]> {
        self.build_id.clone().map(|r| &self.data[r])
    }

    /// ET_REL: a relocatable object such as a kernel module (`.ko`). Its sections,
    /// symbols and debug info have the addresses of kfdo's layout (`relocatable`):
    /// executable sections first, as the kernel's module loader places them, from
    /// [`crate::RELOCATABLE_LAYOUT_BASE`] (so that no code sits at address 0).
    pub fn is_relocatable(&self) -> bool {
        self.e_type == elf::ET_REL
    }

    /// ET_DYN: a PIE or a shared library, loaded at a runtime-chosen base.
    pub fn is_pie(&self) -> bool {
        self.e_type == elf::ET_DYN
    }

    /// Whether this looks like a Linux kernel image (vmlinux): a static
    /// executable (no PT_INTERP) whose text sits where its architecture links
    /// the kernel ([`Arch::kernel_text_start`]) and which defines `_stext` or `_text`.
    /// ET_EXEC, or ET_DYN: a relocatable arm64 kernel (CONFIG_RELOCATABLE, which KASLR
    /// selects) is linked with `-pie`; its text address tells it from a user PIE.
    pub fn is_kernel(&self) -> bool {
        matches!(self.e_type, elf::ET_EXEC | elf::ET_DYN)
            && !self.has_interp
            && self
                .arch
                .kernel_text_start()
                .is_some_and(|lo| self.preferred_text.first().is_some_and(|&a| a >= lo))
            && (self.symbol_address("_stext").is_some() || self.symbol_address("_text").is_some())
    }

    pub fn has_interp(&self) -> bool {
        self.has_interp
    }

    /// PT_LOAD headers in program-header order.
    pub fn load_segments(&self) -> &[LoadSegment] {
        &self.segments
    }

    /// llvm-profgen's `getPreferredBaseAddress()`: the vaddr of the first
    /// executable PT_LOAD rounded down to 4 KiB. 0 when there is no
    /// executable segment (llvm-profgen refuses such a binary).
    pub fn preferred_base(&self) -> u64 {
        self.preferred_text.first().copied().unwrap_or(0)
    }

    /// llvm-profgen's `getFirstLoadableAddress()`.
    pub fn first_loadable_address(&self) -> u64 {
        segments::first_loadable_address(&self.segments)
    }

    pub fn file_offset_to_vaddr(&self, off: u64) -> Option<u64> {
        segments::file_offset_to_vaddr(&self.segments, off)
    }

    pub fn vaddr_to_file_offset(&self, va: u64) -> Option<u64> {
        segments::vaddr_to_file_offset(&self.segments, va)
    }

    /// Section headers, in section-table order.
    pub fn sections(&self) -> &[SectionInfo] {
        &self.sections
    }

    pub fn section_by_name(&self, name: &str) -> Option<&SectionInfo> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The `.symtab` symbols (parsed on first use).
    pub fn symbols(&self) -> &Symbols {
        self.symbols.get_or_init(|| match self.elf() {
            Ok(file) => Symbols::load(&file, self.data(), self.section_bases.as_deref()),
            Err(_) => Symbols::default(),
        })
    }

    /// Address of a defined symbol in `.symtab` (falling back to `.dynsym`),
    /// preferring a global definition over a local one.
    pub fn symbol_address(&self, name: &str) -> Option<u64> {
        self.symbols().address(self.data(), name)
    }

    /// `.debug_info` is present (possibly compressed).
    pub fn has_debug_info(&self) -> bool {
        self.sections.iter().any(|s| {
            (s.name == ".debug_info" || s.name == ".zdebug_info")
                && s.sh_type != elf::SHT_NOBITS
                && s.size > 0
        })
    }

    /// The `.gnu_debuglink` file name, if the binary points to separate debug info.
    pub fn gnu_debuglink(&self) -> Option<&str> {
        self.debuglink.as_deref()
    }

    /// The raw `.debug_*` sections, decompressed on first use and kept for
    /// the life of the `Binary`.
    pub(crate) fn debug_sections(&self) -> Result<&DebugSections, ElfError> {
        let loaded = self.debug.get_or_init(|| match self.elf() {
            Ok(file) => DebugSections::load(&file, self.data(), self.section_bases.as_deref()),
            Err(e) => Err(SectionError {
                section: "(headers)".to_string(),
                what: e.to_string(),
                relocating: false,
            }),
        });
        loaded.as_ref().map_err(|e| {
            let (path, section, what) = (self.path.clone(), e.section.clone(), e.what.clone());
            if e.relocating {
                ElfError::Relocate {
                    path,
                    section,
                    what,
                }
            } else {
                ElfError::Decompress {
                    path,
                    section,
                    what,
                }
            }
        })
    }

    /// Re-parses the ELF headers; cheap (no copying), used by the lazy stages.
    pub(crate) fn elf(&self) -> Result<ElfFile64<'_, object::Endianness>, ElfError> {
        ElfFile64::parse(self.data()).map_err(|e| self.malformed(format!("{e}")))
    }

    pub(crate) fn malformed(&self, what: String) -> ElfError {
        ElfError::Malformed {
            path: self.path.clone(),
            what,
        }
    }
}
