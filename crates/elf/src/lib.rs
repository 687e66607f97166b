//! kfdo-elf: everything kfdo needs to know about an ELF binary, computed the
//! way llvm-profgen computes it so the two tools' profiles agree.
//!
//! * [`Binary`]: mapping, build-id, PT_LOAD segments, address <-> file offset,
//!   llvm-profgen's preferred base, symbols.
//! * [`gnu_build_id_in_notes`]: the build-id in a bare list of notes (the running
//!   kernel's `/sys/kernel/notes`).
//! * [`Code`]: the instructions llvm-profgen disassembles (symbol by symbol),
//!   with call / return / branch classification. `Code::new(&bin)`.
//! * [`Symbolizer`]: DWARF inline stacks (llvm-symbolizer semantics) and
//!   function ranges (llvm-profgen's `loadSymbolsFromDWARF`).
//!   `Symbolizer::new(&bin)`.
//!
//! Everything past the ELF headers is computed on first use; the symbolizer
//! is `Send + Sync` and builds per-unit tables lazily, so callers can
//! symbolize from many threads.
//!
//! # Layers
//!
//! The modules form layers, and each uses only the layers below it (the
//! `layering` test checks every `crate::` / `super::` path against this list,
//! so an import cycle cannot come back):
//!
//! 1. `error`: [`ElfError`].
//! 2. `segments`, `build_id`, `arch`, `relocatable`: functions of the headers and
//!    bytes (`relocatable`: the section layout and debug-info relocation of ET_REL
//!    objects, i.e. kernel modules).
//!    `arch` owns [`Arch`] and [`InsnKind`], the vocabulary shared by the
//!    decoders and the layers that use them.
//! 3. `symbols`, `debug_sections`: tables read from the parsed `object` file
//!    (`.symtab` / `.dynsym`; the `.debug_*` bytes, decompressed if needed).
//! 4. `binary`: [`Binary`], the mapped file and its cheap facts. It caches
//!    layer 3's tables, because they point into the mapping and must live as
//!    long as it (the decompressed debug sections are shared by every
//!    symbolizer of one binary).
//! 5. `code` ([`Code`]), `dwarf` (units, inline trees, line tables) and
//!    `bb_addr_map` ([`BbAddrMap`], clang's basic-block address map), each built from
//!    a `&Binary`, independent of each other.
//! 6. `symbolizer`: [`Symbolizer`], DWARF plus the symbols `code` says
//!    llvm-profgen disassembles.
//!
//! Inside `dwarf/` (tested too; `dwarf/mod.rs` only declares and re-exports), bottom
//! first:
//!
//! 1. `units`: the units parsed up front, and the reader type.
//! 2. `line` (a unit's line table) and `die` (the DIE attributes the symbolizer
//!    reads, and names followed through abstract origins and specifications).
//! 3. `inline`: a unit's inline tree.
//! 4. `ctx`: the units ready for lookups (the address -> unit map, each unit's tree
//!    and line table built on first use).
//! 5. `producer`: which compiler built the binary.
//!
//! `lib.rs` only re-exports; callers use the names above, not the modules.

mod arch;
mod bb_addr_map;
mod binary;
mod build_id;
mod code;
mod debug_sections;
mod dwarf;
mod error;
mod relocatable;
mod segments;
mod symbolizer;
mod symbols;

pub use arch::{Arch, InsnKind};
pub use bb_addr_map::{
    BbAddrMap, BbEntry, BbFeatures, BbFunction, BbMetadata, BbPgo, BbPgoBlock, BbRange, BbSuccessor,
};
pub use binary::{Binary, SectionInfo};
pub use build_id::gnu_build_id_in_notes;
pub use code::Code;
pub use dwarf::producer::{
    clang_major_of_producer, compiler_of_producers, gcc_major_of_producer, producers, Compiler,
};
pub use error::ElfError;
pub use relocatable::LAYOUT_BASE as RELOCATABLE_LAYOUT_BASE;
pub use segments::{LoadSegment, PROFGEN_PAGE_SIZE};
pub use symbolizer::{canonical_fn_name, Frame, FuncRange, Function, Symbolizer};
pub use symbols::{Symbol, Symbols};

#[cfg(test)]
mod send_sync {
    fn assert_send_sync<T: Send + Sync>() {}
    #[test]
    fn symbolizer_is_send_sync() {
        assert_send_sync::<crate::Symbolizer<'_>>();
        assert_send_sync::<crate::Binary>();
        assert_send_sync::<crate::Code>();
    }
}

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
