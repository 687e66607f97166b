//! AArch64 (A64) decoding with yaxpeax-arm.
//!
//! Why yaxpeax-arm, of the maintained A64 decoders on crates.io:
//! - yaxpeax-arm (0BSD, pure Rust, `no_std`): one `Opcode` per mnemonic, and it knows the
//!   pointer-authentication branches (BRAA/BLRAA/RETAA..., FEAT_PAuth, and the FEAT_PAuth_LR
//!   returns RETAASPPC...) and BC.cond (FEAT_HBC), so every A64 branch form gets a kind from the
//!   opcode alone, with no text matching. Builds with nothing but rustc.
//! - bad64 binds Binary Ninja's C decoder: it needs a C compiler and the `bad64-sys` build
//!   step, which a Rust-only workspace should not need for one table lookup.
//! - disarm64 generates its tables from Arm's machine-readable spec, which is attractive, but it
//!   is a young 0.2 crate with one maintainer and fewer users than yaxpeax.
//!
//! The classification mirrors LLVM's MCInstrDesc flags for AArch64, as llvm-profgen uses them:
//! `isCall` for BL and BLR (with the PAuth forms BLRAA/BLRAAZ/BLRAB/BLRABZ), `isReturn` for RET
//! (RETAA/RETAB and the FEAT_PAuth_LR forms) and the exception returns ERET/ERETAA/ERETAB/DRPS
//! (as x86's iret), `isBranch` for B, BR (BRAA...), B.cond, BC.cond, CBZ/CBNZ, TBZ/TBNZ.
//! Exception generation (SVC, HVC, SMC, BRK, HLT, DCPS1-3) and UDF are traps, as x86's
//! syscall/int3/ud2: llvm-profgen must not take a system call for a call site.
//!
//! Every A64 instruction is 4 bytes. A word the decoder rejects (a literal pool, padding, an
//! extension yaxpeax does not know) is not code, and decoding goes on at the next word, as
//! LLVM's AArch64 disassembler reports a failed word with size 4 and llvm-profgen skips it.
//!
//! One deliberate difference: llvm-profgen-19 builds its disassembler with no target features
//! (the generic CPU), so it rejects extension instructions such as the LSE atomics in the
//! outlined-atomics helpers (`ldaddal` in `__aarch64_ldadd8_acq_rel`) or RETAA, and leaves
//! those addresses out of its code. We decode them: a RETAA is a return whatever the CPU
//! setting, and the helpers have no debug info, so no profile line depends on it
//! (tests/symbolize.rs checks that these are the only addresses where we differ).

use yaxpeax_arch::{Decoder, U8Reader};
use yaxpeax_arm::armv8::a64::{InstDecoder, Instruction, Opcode};

use super::{Decoded, InsnKind};

/// The size of every A64 instruction.
const WORD: u64 = 4;

pub(super) fn decode(bytes: &[u8], start: u64, end: u64, out: &mut Vec<Decoded>) {
    let decoder = InstDecoder::default();
    let mut insn = Instruction::default();
    let mut addr = start;
    while addr < end {
        let pos = (addr - start) as usize;
        let Some(word) = bytes.get(pos..pos + WORD as usize) else {
            break;
        };
        let mut reader = U8Reader::new(word);
        if decoder.decode_into(&mut insn, &mut reader).is_ok() {
            out.push(Decoded {
                addr,
                size: WORD as u8,
                kind: classify(insn.opcode),
            });
        }
        addr += WORD;
    }
}

fn classify(op: Opcode) -> InsnKind {
    use Opcode as O;
    match op {
        O::BL => InsnKind::Call,
        O::BLR | O::BLRAA | O::BLRAAZ | O::BLRAB | O::BLRABZ => InsnKind::IndirectCall,
        O::RET
        | O::RETAA
        | O::RETAB
        | O::RETAASPPC
        | O::RETABSPPC
        | O::RETAASPPCR
        | O::RETABSPPCR
        | O::ERET
        | O::ERETAA
        | O::ERETAB
        | O::DRPS => InsnKind::Return,
        O::Bcc(_) | O::BCcc(_) | O::CBZ | O::CBNZ | O::TBZ | O::TBNZ => InsnKind::CondBranch,
        O::B => InsnKind::Jump,
        O::BR | O::BRAA | O::BRAAZ | O::BRAB | O::BRABZ => InsnKind::IndirectJump,
        O::SVC | O::HVC | O::SMC | O::BRK | O::HLT | O::DCPS1 | O::DCPS2 | O::DCPS3 | O::UDF => {
            InsnKind::Trap
        }
        _ => InsnKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes little-endian words placed at 0x1000 and returns (address, kind).
    fn kinds(words: &[u32]) -> Vec<(u64, InsnKind)> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut out = Vec::new();
        decode(&bytes, 0x1000, 0x1000 + bytes.len() as u64, &mut out);
        assert!(out.iter().all(|d| d.size == 4));
        out.iter().map(|d| (d.addr, d.kind)).collect()
    }

    #[test]
    fn every_branch_form_has_its_kind() {
        // Encodings from the Arm ARM, cross-checked with llvm-mc-19 -triple=aarch64
        // -mattr=+pauth,+hbc -show-encoding.
        use InsnKind::*;
        let cases: &[(u32, &str, InsnKind)] = &[
            (0x9400_0000, "bl .", Call),
            (0xd63f_0100, "blr x8", IndirectCall),
            (0xd73f_0911, "blraa x8, x17", IndirectCall),
            (0xd63f_091f, "blraaz x8", IndirectCall),
            (0xd65f_03c0, "ret", Return),
            (0xd65f_0be0, "retaa", Return),
            (0xd65f_0fe0, "retab", Return),
            (0xd69f_03e0, "eret", Return),
            (0x5400_0040, "b.eq .+8", CondBranch),
            (0x5400_0051, "bc.ne .+8", CondBranch),
            (0xb400_0040, "cbz x0, .+8", CondBranch),
            (0x3500_0040, "cbnz w0, .+8", CondBranch),
            (0x3600_0040, "tbz w0, #0, .+8", CondBranch),
            (0xb7f8_0040, "tbnz x0, #63, .+8", CondBranch),
            (0x1400_0000, "b .", Jump),
            (0xd61f_0100, "br x8", IndirectJump),
            (0xd71f_0911, "braa x8, x17", IndirectJump),
            (0xd4000001, "svc #0", Trap),
            (0xd420_0000, "brk #0", Trap),
            (0x0000_0000, "udf #0", Trap),
            (0xd503_201f, "nop", Other),
            (0xd503_233f, "paciasp", Other),
            (0x9100_0400, "add x0, x0, #1", Other),
            (0xf940_0000, "ldr x0, [x0]", Other),
        ];
        for (i, &(word, text, want)) in cases.iter().enumerate() {
            let got = kinds(&[word]);
            assert_eq!(got, vec![(0x1000, want)], "case {i}: {word:#010x} {text}");
        }
    }

    #[test]
    fn undecodable_words_are_skipped_and_a_short_tail_is_ignored() {
        // 0xffffffff is unallocated in A64; then a ret; then 2 stray bytes.
        let mut bytes: Vec<u8> = [0xffff_ffffu32, 0xd65f_03c0]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        bytes.extend([0x1f, 0x20]);
        let mut out = Vec::new();
        decode(&bytes, 0x40, 0x40 + bytes.len() as u64, &mut out);
        let got: Vec<(u64, InsnKind)> = out.iter().map(|d| (d.addr, d.kind)).collect();
        assert_eq!(got, vec![(0x44, InsnKind::Return)]);
    }
}
