//! Per-architecture instruction decoding. Each architecture provides one
//! function that decodes a run of bytes into (length, kind) pairs; `Code`
//! does the rest (which bytes, ordering, lookup) architecture-independently.
//!
//! The vocabulary both sides share lives here too: [`Arch`] (which decoder;
//! `Binary` reads it from `e_machine`) and [`InsnKind`] (what a decoder
//! reports and `Code` stores), so this module needs nothing above it.

mod aarch64;
mod x86_64;

/// Target architecture, from `e_machine`: the one place that says which
/// decoder (and, above this crate, which emulator and which kernel layout)
/// a binary gets. No flag may override it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    Aarch64,
    Other(u16),
}

impl Arch {
    /// The architecture an ELF `e_machine` names.
    pub fn from_e_machine(machine: u16) -> Arch {
        match machine {
            object::elf::EM_X86_64 => Arch::X86_64,
            object::elf::EM_AARCH64 => Arch::Aarch64,
            m => Arch::Other(m),
        }
    }

    /// The lowest address a vmlinux of this architecture links its text at.
    /// x86-64: the kernel text mapping (`__START_KERNEL_map`, the top 2 GiB).
    /// arm64: the kernel half (TTBR1) of the address space, which holds the image
    /// at KIMAGE_VADDR for every VA_BITS (`0xffff800080000000` with 48-bit VAs since
    /// 6.x, `0xffffffc008000000` with 39-bit VAs).
    pub fn kernel_text_start(self) -> Option<u64> {
        match self {
            Arch::X86_64 => Some(0xffff_ffff_8000_0000),
            Arch::Aarch64 => Some(0xffff_0000_0000_0000),
            Arch::Other(_) => None,
        }
    }

    /// The name perf writes in its ARCH header feature (`uname -m`), and
    /// QEMU's target name: `x86_64`, `aarch64`.
    pub fn uname(self) -> Option<&'static str> {
        match self {
            Arch::X86_64 => Some("x86_64"),
            Arch::Aarch64 => Some("aarch64"),
            Arch::Other(_) => None,
        }
    }

    /// The architecture of a perf.data ARCH feature or a QEMU target name;
    /// `arm64` is the kernel's name for aarch64.
    pub fn from_uname(name: &str) -> Option<Arch> {
        match name {
            "x86_64" | "x86-64" | "amd64" => Some(Arch::X86_64),
            "aarch64" | "arm64" => Some(Arch::Aarch64),
            _ => None,
        }
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arch::X86_64 => f.write_str("x86-64"),
            Arch::Aarch64 => f.write_str("aarch64"),
            Arch::Other(m) => write!(f, "ELF machine {m}"),
        }
    }
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
        Arch::Aarch64 => Some(aarch64::decode),
        Arch::Other(_) => None,
    }
}
