//! Does the BB address map still describe the code? Each block the layout will move
//! must start and end on an instruction boundary of the bytes at its address. A map
//! copied from another build, or a binary rewritten after linking (its blocks moved
//! by a post-link tool), fails this for the functions that changed, and a cluster
//! list made from it would name the wrong blocks.

use iced_x86::{Decoder, DecoderOptions, Mnemonic};
use kfdo_elf::{BbFunction, Binary};

/// `None` when `f`'s blocks fit its code (or its code cannot be read here, as in a
/// relocatable object); otherwise the address of the first block that does not.
pub fn misplaced_block(bin: &Binary, f: &BbFunction) -> Option<u64> {
    for range in &f.ranges {
        let end = range
            .blocks
            .iter()
            .map(|b| u64::from(b.offset) + u64::from(b.size))
            .max()
            .unwrap_or(0);
        let Some(bytes) = code_at(bin, range.base, end) else {
            continue;
        };
        let mut starts = Vec::new();
        let mut d = Decoder::with_ip(64, bytes, range.base, DecoderOptions::NONE);
        while d.can_decode() {
            let insn = d.decode();
            if insn.mnemonic() == Mnemonic::INVALID {
                break;
            }
            starts.push(insn.ip());
        }
        starts.push(range.base + end);
        for b in &range.blocks {
            let (start, stop) = (
                range.base + u64::from(b.offset),
                range.base + u64::from(b.offset) + u64::from(b.size),
            );
            if starts.binary_search(&start).is_err() || starts.binary_search(&stop).is_err() {
                return Some(start);
            }
        }
    }
    None
}

fn code_at(bin: &Binary, addr: u64, len: u64) -> Option<&[u8]> {
    if bin.is_relocatable() || bin.arch() != kfdo_elf::Arch::X86_64 {
        return None;
    }
    let off = bin.vaddr_to_file_offset(addr)? as usize;
    bin.data().get(off..off.checked_add(len as usize)?)
}
