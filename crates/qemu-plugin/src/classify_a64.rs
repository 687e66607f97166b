//! AArch64 (A64) branch classification by instruction word, in the kinds of `classify.rs`.
//! Every A64 instruction is one little-endian 32-bit word, and the branch forms are a few
//! fixed bit patterns (Arm ARM, "Branches, Exception Generating and System instructions"),
//! so masks do, as the x86 side does with its opcode table.
//!
//! Kinds, as LLVM's flags and hardware branch records see them:
//! - B.cond, BC.cond, CBZ, CBNZ, TBZ, TBNZ: conditional (`K_COND`, 4 bytes);
//! - B: `K_JMP`; BL: `K_CALL`;
//! - BR, BRAA, BRAAZ, BRAB, BRABZ: `K_IND_JMP`; BLR and its PAuth forms: `K_IND_CALL`;
//! - RET, RETAA, RETAB, RETAASPPC(R), RETABSPPC(R): `K_RET`;
//! - ERET, ERETAA, ERETAB, DRPS: exception returns, `K_FAR` (x86's iret);
//! - SVC, HVC, SMC, BRK, HLT, DCPS1-3: exception generation, `K_SYSCALL` (in user mode
//!   QEMU performs an SVC itself and resumes after it: no branch, as `can_branch` says).

use super::classify::{
    K_CALL, K_COND, K_FAR, K_IND_CALL, K_IND_JMP, K_JMP, K_NONE, K_RET, K_SYSCALL,
};

/// Classifies one A64 instruction by its bytes (fewer than 4: not a branch).
pub fn classify_a64(b: &[u8]) -> u8 {
    let Some(w) = b.get(..4) else {
        return K_NONE;
    };
    let w = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
    match w {
        _ if w & 0xFC00_0000 == 0x1400_0000 => K_JMP,
        _ if w & 0xFC00_0000 == 0x9400_0000 => K_CALL,
        // B.cond (bit 4 = 0) and BC.cond (bit 4 = 1).
        _ if w & 0xFF00_0000 == 0x5400_0000 => K_COND,
        // CBZ / CBNZ (bit 24 = op), TBZ / TBNZ; bit 31 = sf / b5.
        _ if w & 0x7C00_0000 == 0x3400_0000 => K_COND,
        // RETAASPPC / RETABSPPC <label> (FEAT_PAuth_LR).
        _ if w & 0xFFC0_001F == 0x5500_001F => K_RET,
        // Unconditional branch (register): opc in bits 21..25, op2 (bits 16..21) all ones.
        _ if w & 0xFE1F_0000 == 0xD61F_0000 => match (w >> 21) & 0xF {
            0b0000 | 0b1000 => K_IND_JMP,
            0b0001 | 0b1001 => K_IND_CALL,
            0b0010 => K_RET,
            0b0100 | 0b0101 => K_FAR,
            _ => K_NONE,
        },
        // Exception generation: SVC, HVC, SMC, BRK, HLT, DCPSn.
        _ if w & 0xFF00_0000 == 0xD400_0000 => K_SYSCALL,
        _ => K_NONE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(w: u32) -> u8 {
        classify_a64(&w.to_le_bytes())
    }

    /// Encodings as `llvm-mc-19 -triple=aarch64 -mattr=+pauth,+pauth-lr,+hbc,+el3
    /// -show-encoding` prints them.
    #[test]
    fn every_branch_form() {
        let cases: &[(u32, &str, u8)] = &[
            (0x1400_0000, "b .", K_JMP),
            (0x17ff_ffff, "b .-4", K_JMP),
            (0x9400_0000, "bl .", K_CALL),
            (0x97ff_fffe, "bl .-8", K_CALL),
            (0x5400_0040, "b.eq .+8", K_COND),
            (0x5400_002d, "b.le .+4", K_COND),
            (0x5400_0051, "bc.ne .+8", K_COND),
            (0xb400_0040, "cbz x0, .+8", K_COND),
            (0x3500_0040, "cbnz w0, .+8", K_COND),
            (0x3600_0040, "tbz w0, #0, .+8", K_COND),
            (0xb7f8_0040, "tbnz x0, #63, .+8", K_COND),
            (0xd61f_0100, "br x8", K_IND_JMP),
            (0xd61f_087f, "braaz x3", K_IND_JMP),
            (0xd61f_0c7f, "brabz x3", K_IND_JMP),
            (0xd71f_0911, "braa x8, x17", K_IND_JMP),
            (0xd71f_0c64, "brab x3, x4", K_IND_JMP),
            (0xd63f_0100, "blr x8", K_IND_CALL),
            (0xd63f_091f, "blraaz x8", K_IND_CALL),
            (0xd63f_0c7f, "blrabz x3", K_IND_CALL),
            (0xd73f_0911, "blraa x8, x17", K_IND_CALL),
            (0xd73f_0c64, "blrab x3, x4", K_IND_CALL),
            (0xd65f_03c0, "ret", K_RET),
            (0xd65f_0020, "ret x1", K_RET),
            (0xd65f_0bff, "retaa", K_RET),
            (0xd65f_0fff, "retab", K_RET),
            (0xd65f_0bf0, "retaasppcr x16", K_RET),
            (0xd65f_0ff0, "retabsppcr x16", K_RET),
            (0x5500_001f, "retaasppc .", K_RET),
            (0x5520_001f, "retabsppc .", K_RET),
            (0xd69f_03e0, "eret", K_FAR),
            (0xd69f_0fff, "eretab", K_FAR),
            (0xd6bf_03e0, "drps", K_FAR),
            (0xd400_0001, "svc #0", K_SYSCALL),
            (0xd400_0022, "hvc #1", K_SYSCALL),
            (0xd400_0023, "smc #1", K_SYSCALL),
            (0xd420_0000, "brk #0", K_SYSCALL),
            (0xd440_0020, "hlt #1", K_SYSCALL),
            (0xd4a0_0001, "dcps1", K_SYSCALL),
        ];
        for &(w, text, want) in cases {
            assert_eq!(kind(w), want, "{w:#010x} {text}");
        }
    }

    #[test]
    fn not_branches() {
        let cases: &[(u32, &str)] = &[
            (0xd503_201f, "nop"),
            (0xd503_233f, "paciasp"),
            (0xd503_23bf, "autiasp"),
            (0xd503_245f, "bti c"),
            (0x9100_0400, "add x0, x0, #1"),
            (0xf940_0000, "ldr x0, [x0]"),
            (0xa9bf_7bfd, "stp x29, x30, [sp, #-16]!"),
            (0x1000_0000, "adr x0, ."),
            (0x9000_0000, "adrp x0, ."),
            (0x5800_0040, "ldr x0, .+8 (literal)"),
            (0x0000_0000, "udf #0"),
            (0xf2e9_657f, "movk xzr, #0x4b2b, lsl #48 (the start marker)"),
            (0xd51b_4200, "msr nzcv, x0"),
        ];
        for &(w, text) in cases {
            assert_eq!(kind(w), K_NONE, "{w:#010x} {text}");
        }
        assert_eq!(classify_a64(&[0xc0, 0x03, 0x5f]), K_NONE, "cut short");
        assert_eq!(classify_a64(&[]), K_NONE);
    }
}
