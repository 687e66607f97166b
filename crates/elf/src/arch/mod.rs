//! Per-architecture instruction decoding. Each architecture provides one
//! function that decodes a run of bytes into (length, kind) pairs; `Code`
//! does the rest (which bytes, ordering, lookup) architecture-independently.
//!
//! The vocabulary both sides share lives here too: [`Arch`] (which decoder;
//! `Binary` reads it from `e_machine`) and [`InsnKind`] (what a decoder
//! reports and `Code` stores), so this module needs nothing above it.

mod x86_64;

/// Target architecture, from `e_machine`. Only x86-64 is decoded today;
/// the enum is where another architecture would be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    Other(u16),
}

/// Control-flow class of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum InsnKind {
    /// Falls through (includes syscall-free system instructions, xbegin...).
    Other,
    /// Direct call (llvm `isCall`).
    Call,
    /// Indirect call through a register or memory (llvm `isCall`).
    IndirectCall,
    /// ret / lret / iret (llvm `isReturn`).
    Return,
    /// jcc, jrcxz, loop (llvm `isBranch`, not a barrier).
    CondBranch,
    /// Direct unconditional jmp (llvm `isUnconditionalBranch`).
    Jump,
    /// Indirect jmp (llvm `isIndirectBranch`).
    IndirectJump,
    /// int3, int n, syscall, sysenter, ud2: not a call/branch/return for llvm-profgen.
    Trap,
}

impl InsnKind {
    /// llvm-profgen's `addressIsCall` (CallAddressSet).
    pub fn is_call(self) -> bool {
        matches!(self, InsnKind::Call | InsnKind::IndirectCall)
    }
    /// llvm-profgen's `addressIsReturn`.
    pub fn is_return(self) -> bool {
        self == InsnKind::Return
    }
    /// Membership in llvm-profgen's BranchAddressSet (`MCDesc.isBranch()`).
    pub fn is_branch(self) -> bool {
        matches!(
            self,
            InsnKind::CondBranch | InsnKind::Jump | InsnKind::IndirectJump
        )
    }
}

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
