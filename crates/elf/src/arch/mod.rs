//! Per-architecture instruction decoding. Each architecture provides one
//! function that decodes a run of bytes into (length, kind) pairs; `Code`
//! does the rest (which bytes, ordering, lookup) architecture-independently.

mod x86_64;

use crate::binary::Arch;
use crate::code::InsnKind;

/// One decoded instruction as the architecture decoder reports it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decoded {
    pub addr: u64,
    pub size: u8,
    pub kind: InsnKind,
}

/// Decodes instructions starting at `start` (whose bytes begin at
/// `bytes[0]`; `bytes` runs to the end of the section, as llvm-profgen hands
/// the disassembler the rest of the section, not just the symbol) until the
/// next instruction would start at or after `end`. Undecodable bytes are
/// skipped one at a time and not reported, like llvm-profgen does.
pub(crate) type DecodeFn = fn(bytes: &[u8], start: u64, end: u64, out: &mut Vec<Decoded>);

pub(crate) fn decoder_for(arch: Arch) -> Option<DecodeFn> {
    match arch {
        Arch::X86_64 => Some(x86_64::decode),
        Arch::Other(_) => None,
    }
}
