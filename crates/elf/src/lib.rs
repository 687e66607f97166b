//! kfdo-elf: everything kfdo needs to know about an ELF binary, computed the
//! way llvm-profgen computes it so the two tools' profiles agree.
//!
//! * [`Binary`]: mapping, build-id, PT_LOAD segments, address <-> file offset,
//!   llvm-profgen's preferred base, symbols.
//! * [`Code`]: the instructions llvm-profgen disassembles (symbol by symbol),
//!   with call / return / branch classification.
//! * [`Symbolizer`]: DWARF inline stacks (llvm-symbolizer semantics) and
//!   function ranges (llvm-profgen's `loadSymbolsFromDWARF`).
//!
//! Everything past the ELF headers is computed on first use; the symbolizer
//! is `Send + Sync` and builds per-unit tables lazily, so callers can
//! symbolize from many threads.

mod arch;
mod binary;
mod build_id;
mod code;
mod debug_sections;
mod dwarf;
mod error;
mod segments;
mod symbolizer;
mod symbols;

pub use arch::{Arch, InsnKind};
pub use binary::{Binary, SectionInfo};
pub use code::Code;
pub use error::ElfError;
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
