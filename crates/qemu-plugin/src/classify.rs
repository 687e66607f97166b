//! x86-64 branch classification by instruction bytes: only control transfers matter, and
//! only the last instruction of a block can be one, so a small opcode table does (no
//! decoder). Kinds are `u8` constants because a block's descriptor stores one.

pub const K_NONE: u8 = 0;
pub const K_COND: u8 = 1;
pub const K_JMP: u8 = 2;
pub const K_CALL: u8 = 3;
pub const K_RET: u8 = 4;
pub const K_IND_JMP: u8 = 5;
pub const K_IND_CALL: u8 = 6;
/// iret, lret, far call / jmp.
pub const K_FAR: u8 = 7;
/// syscall, sysenter, int n.
pub const K_SYSCALL: u8 = 8;
/// sysret, sysexit.
pub const K_SYSRET: u8 = 9;

/// Classifies one x86-64 instruction by its bytes: (kind, has a LOCK prefix).
pub fn classify(b: &[u8]) -> (u8, bool) {
    let mut i = 0;
    let mut lock = false;
    while i < b.len() {
        match b[i] {
            0xF0 => lock = true,
            0x66 | 0x67 | 0xF2 | 0xF3 | 0x2E | 0x3E | 0x26 | 0x36 | 0x64 | 0x65 => {}
            _ => break,
        }
        i += 1;
    }
    if i < b.len() && (b[i] & 0xF0) == 0x40 {
        i += 1;
    }
    let op = match b.get(i) {
        Some(&o) => o,
        None => return (K_NONE, lock),
    };
    let next = b.get(i + 1).copied().unwrap_or(0);
    let kind = match op {
        0x70..=0x7F | 0xE0..=0xE3 => K_COND,
        0x0F => match next {
            0x80..=0x8F => K_COND,
            0x05 | 0x34 => K_SYSCALL,
            0x07 | 0x35 => K_SYSRET,
            _ => K_NONE,
        },
        0xE8 => K_CALL,
        0xE9 | 0xEB => K_JMP,
        0xEA | 0x9A => K_FAR,
        0xC2 | 0xC3 => K_RET,
        0xCA | 0xCB | 0xCF => K_FAR,
        0xCC..=0xCE => K_SYSCALL,
        0xFF => match (next >> 3) & 7 {
            2 => K_IND_CALL,
            4 => K_IND_JMP,
            3 | 5 => K_FAR,
            _ => K_NONE,
        },
        _ => K_NONE,
    };
    (kind, lock)
}

/// Whether a block ending in an instruction of kind `k` can branch out.
#[inline(always)]
pub fn can_branch(k: u8, system: bool) -> bool {
    match k {
        K_NONE => false,
        // In user mode QEMU performs system calls itself and resumes at the next
        // instruction: no branch, as user-only LBR filtering gives on hardware.
        K_SYSCALL | K_SYSRET => system,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(b: &[u8]) -> u8 {
        classify(b).0
    }

    #[test]
    fn conditional_branches() {
        assert_eq!(kind(&[0x75, 0x10]), K_COND, "jne rel8");
        assert_eq!(kind(&[0x70, 0x00]), K_COND, "jo rel8");
        assert_eq!(kind(&[0x7f, 0xfe]), K_COND, "jg rel8");
        assert_eq!(kind(&[0x0f, 0x84, 0, 0, 0, 0]), K_COND, "je rel32");
        assert_eq!(kind(&[0x0f, 0x8f, 0, 0, 0, 0]), K_COND, "jg rel32");
        assert_eq!(kind(&[0xe2, 0xfe]), K_COND, "loop");
        assert_eq!(kind(&[0xe3, 0x05]), K_COND, "jrcxz");
        assert_eq!(kind(&[0x67, 0xe3, 0x05]), K_COND, "jecxz");
    }

    #[test]
    fn direct_and_indirect_transfers() {
        assert_eq!(kind(&[0xe8, 0, 0, 0, 0]), K_CALL);
        assert_eq!(kind(&[0xe9, 0, 0, 0, 0]), K_JMP);
        assert_eq!(kind(&[0xeb, 0xfe]), K_JMP);
        assert_eq!(kind(&[0xc3]), K_RET);
        assert_eq!(kind(&[0xc2, 8, 0]), K_RET, "ret imm16");
        assert_eq!(kind(&[0xff, 0xd0]), K_IND_CALL, "call *%rax");
        assert_eq!(kind(&[0xff, 0x15, 0, 0, 0, 0]), K_IND_CALL, "call *x(%rip)");
        assert_eq!(kind(&[0x41, 0xff, 0xd3]), K_IND_CALL, "call *%r11 (REX.B)");
        assert_eq!(kind(&[0xff, 0xe0]), K_IND_JMP, "jmp *%rax");
        assert_eq!(
            kind(&[0xff, 0x24, 0xc5, 0, 0, 0, 0]),
            K_IND_JMP,
            "jmp *x(,%rax,8)"
        );
        assert_eq!(kind(&[0x3e, 0xff, 0xe0]), K_IND_JMP, "notrack jmp");
    }

    #[test]
    fn far_transfers_and_system_calls() {
        assert_eq!(kind(&[0xcf]), K_FAR, "iret");
        assert_eq!(kind(&[0x48, 0xcf]), K_FAR, "iretq");
        assert_eq!(kind(&[0xcb]), K_FAR, "lret");
        assert_eq!(kind(&[0xca, 8, 0]), K_FAR, "lret imm16");
        assert_eq!(kind(&[0xff, 0x18]), K_FAR, "lcall *(%rax)");
        assert_eq!(kind(&[0xff, 0x28]), K_FAR, "ljmp *(%rax)");
        assert_eq!(kind(&[0x0f, 0x05]), K_SYSCALL, "syscall");
        assert_eq!(kind(&[0x0f, 0x34]), K_SYSCALL, "sysenter");
        assert_eq!(kind(&[0xcd, 0x80]), K_SYSCALL, "int 0x80");
        assert_eq!(kind(&[0xcc]), K_SYSCALL, "int3");
        assert_eq!(kind(&[0x48, 0x0f, 0x07]), K_SYSRET, "sysretq");
        assert_eq!(kind(&[0x0f, 0x35]), K_SYSRET, "sysexit");
    }

    #[test]
    fn prefixes_are_skipped() {
        assert_eq!(kind(&[0xf3, 0xc3]), K_RET, "rep ret");
        assert_eq!(kind(&[0xf2, 0xe9, 0, 0, 0, 0]), K_JMP, "bnd jmp");
        assert_eq!(kind(&[0x2e, 0x75, 0x02]), K_COND, "branch hint");
        assert_eq!(
            kind(&[0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0]),
            K_NONE,
            "nopw"
        );
        // One REX prefix only, after the legacy ones.
        assert_eq!(kind(&[0x66, 0x48, 0xff, 0xe0]), K_IND_JMP);
    }

    #[test]
    fn not_branches() {
        assert_eq!(kind(&[0x90]), K_NONE, "nop");
        assert_eq!(kind(&[0x48, 0x89, 0xe5]), K_NONE, "mov %rsp,%rbp");
        assert_eq!(kind(&[0xff, 0xc0]), K_NONE, "inc %eax (ff /0)");
        assert_eq!(kind(&[0xff, 0x30]), K_NONE, "push (%rax) (ff /6)");
        assert_eq!(kind(&[0x0f, 0x1f, 0x00]), K_NONE, "nopl");
        assert_eq!(kind(&[0x0f]), K_NONE, "cut after 0f");
        assert_eq!(kind(&[0xf3, 0xa4]), K_NONE, "rep movsb");
        assert_eq!(classify(&[]), (K_NONE, false));
    }

    #[test]
    fn lock_prefix() {
        assert_eq!(
            classify(&[0xf0, 0x48, 0x0f, 0xb1, 0x11]),
            (K_NONE, true),
            "lock cmpxchg"
        );
        assert_eq!(
            classify(&[0x66, 0xf0, 0x0f, 0xc1, 0x01]),
            (K_NONE, true),
            "lock xadd"
        );
        assert_eq!(classify(&[0xf0]), (K_NONE, true), "prefix only");
        assert_eq!(
            classify(&[0x48, 0xf0, 0x01]),
            (K_NONE, false),
            "after REX: not a prefix"
        );
        assert_eq!(classify(&[0xc3]), (K_RET, false));
    }

    #[test]
    fn which_kinds_branch() {
        for system in [false, true] {
            assert!(!can_branch(K_NONE, system));
            for k in [K_COND, K_JMP, K_CALL, K_RET, K_IND_JMP, K_IND_CALL, K_FAR] {
                assert!(can_branch(k, system), "kind {k}");
            }
            // QEMU runs a user-mode guest's system calls itself.
            assert_eq!(can_branch(K_SYSCALL, system), system);
            assert_eq!(can_branch(K_SYSRET, system), system);
        }
    }
}
