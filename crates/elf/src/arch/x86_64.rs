//! x86-64 decoding with iced-x86.
//!
//! The classification mirrors LLVM's MCInstrDesc flags as llvm-profgen uses
//! them: `isCall` (direct and indirect, near and far), `isReturn` (ret, lret,
//! iret), `isBranch` (jcc, jmp, indirect jmp; jrcxz/loop count as conditional).

use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction};

use super::{Decoded, InsnKind};

pub(super) fn decode(bytes: &[u8], start: u64, end: u64, out: &mut Vec<Decoded>) {
    let mut dec = Decoder::with_ip(64, bytes, start, DecoderOptions::NONE);
    let mut insn = Instruction::default();
    let mut addr = start;
    while addr < end {
        let pos = (addr - start) as usize;
        if pos >= bytes.len() {
            break;
        }
        if dec.position() != pos {
            // Resynchronise after an invalid byte.
            if dec.set_position(pos).is_err() {
                break;
            }
            dec.set_ip(addr);
        }
        if let Some(n) = llvm_prefix_only_insn(&bytes[pos..]) {
            // LLVM decodes these prefixes as an instruction of their own;
            // the instruction they prefix then starts right after them.
            out.push(Decoded {
                addr,
                size: n,
                kind: InsnKind::Other,
            });
            addr += u64::from(n);
            continue;
        }
        dec.decode_out(&mut insn);
        if insn.is_invalid() {
            // llvm-profgen: a failed decode advances by one byte and records
            // nothing, so the address is not code.
            addr += 1;
            continue;
        }
        let size = insn.len() as u8;
        out.push(Decoded {
            addr,
            size,
            kind: classify(&insn),
        });
        addr += u64::from(size);
    }
}

/// LLVM's X86 disassembler (readPrefixes) does not fold every prefix into
/// the instruction that follows it: a LOCK (0xf0) as the very first byte, and
/// a REP/REPNE (0xf3/0xf2) that reads as XRELEASE/XACQUIRE (followed by LOCK,
/// an xchg, or for 0xf3 a `mov` to memory) together with any prefixes before
/// it, come out as separate prefix-only instructions (`lock`, `xrelease`).
/// llvm-profgen therefore counts the prefixed instruction's own address as
/// code; iced decodes the whole thing as one instruction, so we split it the
/// same way. Returns the length of such a prefix-only instruction.
fn llvm_prefix_only_insn(bytes: &[u8]) -> Option<u8> {
    if bytes.first() == Some(&0xf0) {
        return Some(1);
    }
    for (p, &b) in bytes.iter().enumerate().take(14) {
        if b == 0xf2 || b == 0xf3 {
            if let Some(&nb) = bytes.get(p + 1) {
                let xchg_or_lock = nb == 0xf0
                    || (nb & 0xfe) == 0x86
                    || ((nb & 0xf8) == 0x90 && !(b == 0xf3 && nb == 0x90));
                let xrelease_mov = b == 0xf3 && matches!(nb, 0x88 | 0x89 | 0xc6 | 0xc7);
                if xchg_or_lock || xrelease_mov {
                    return Some(p as u8 + 1);
                }
            }
        }
        let is_prefix = matches!(
            b,
            0xf0 | 0xf2 | 0xf3 | 0x2e | 0x36 | 0x3e | 0x26 | 0x64 | 0x65 | 0x66 | 0x67
        ) || (0x40..=0x4f).contains(&b);
        if !is_prefix {
            return None;
        }
    }
    None
}

fn classify(insn: &Instruction) -> InsnKind {
    use iced_x86::Mnemonic as M;
    // iced counts system calls and their returns as calls/returns; LLVM
    // marks none of them isCall/isReturn, and llvm-profgen must not treat a
    // syscall as a call site.
    if matches!(
        insn.mnemonic(),
        M::Syscall
            | M::Sysenter
            | M::Sysexit
            | M::Sysexitq
            | M::Sysret
            | M::Sysretq
            | M::Vmcall
            | M::Vmmcall
            | M::Vmgexit
            | M::Tdcall
            | M::Seamcall
            | M::Seamret
    ) {
        return InsnKind::Trap;
    }
    match insn.flow_control() {
        FlowControl::Next => InsnKind::Other,
        FlowControl::Call => InsnKind::Call,
        FlowControl::IndirectCall => InsnKind::IndirectCall,
        FlowControl::Return => InsnKind::Return,
        FlowControl::ConditionalBranch => InsnKind::CondBranch,
        FlowControl::UnconditionalBranch => InsnKind::Jump,
        FlowControl::IndirectBranch => InsnKind::IndirectJump,
        FlowControl::Interrupt | FlowControl::Exception => InsnKind::Trap,
        FlowControl::XbeginXabortXend => InsnKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_sizes() {
        // call rel32; ret; je rel8; jmp rel8; jmp *%rax; call *%rax; int3; syscall; nop
        let code = [
            0xe8, 0, 0, 0, 0, 0xc3, 0x74, 0x00, 0xeb, 0x00, 0xff, 0xe0, 0xff, 0xd0, 0xcc, 0x0f,
            0x05, 0x90,
        ];
        let mut out = Vec::new();
        decode(&code, 0x1000, 0x1000 + code.len() as u64, &mut out);
        let got: Vec<(u64, u8, InsnKind)> = out.iter().map(|d| (d.addr, d.size, d.kind)).collect();
        use InsnKind::*;
        assert_eq!(
            got,
            vec![
                (0x1000, 5, Call),
                (0x1005, 1, Return),
                (0x1006, 2, CondBranch),
                (0x1008, 2, Jump),
                (0x100a, 2, IndirectJump),
                (0x100c, 2, IndirectCall),
                (0x100e, 1, Trap),
                (0x100f, 2, Trap),
                (0x1011, 1, Other),
            ]
        );
    }

    /// Bytes, and the (offset, length) of each instruction decoded from them.
    type Case<'a> = (&'a [u8], &'a [(u64, u8)]);

    #[test]
    fn lock_and_xrelease_are_separate_instructions_like_llvm() {
        let cases: &[Case] = &[
            // lock decq (%rax): "lock" (1) + "decq (%rax)" (3)
            (&[0xf0, 0x48, 0xff, 0x08], &[(0, 1), (1, 3)]),
            // xrelease lock addl $1,(%rax)
            (&[0xf3, 0xf0, 0x83, 0x00, 0x01], &[(0, 1), (1, 1), (2, 3)]),
            // 66 f3 f0 ...: prefixes up to the f3 form the xrelease
            (
                &[0x66, 0xf3, 0xf0, 0x83, 0x00, 0x01],
                &[(0, 2), (2, 1), (3, 3)],
            ),
            // xrelease movl %eax,(%rax)
            (&[0xf3, 0x89, 0x00], &[(0, 1), (1, 2)]),
            // rep movq %rax,(%rax) (REX in between): one instruction
            (&[0xf3, 0x48, 0x89, 0x00], &[(0, 4)]),
            // pause; rep stosq; lock inside: 66 f0 83 00 01 is one instruction
            (
                &[0xf3, 0x90, 0xf3, 0x48, 0xab, 0x66, 0xf0, 0x83, 0x00, 0x01],
                &[(0, 2), (2, 3), (5, 5)],
            ),
        ];
        for (bytes, want) in cases {
            let mut out = Vec::new();
            decode(bytes, 0, bytes.len() as u64, &mut out);
            let got: Vec<(u64, u8)> = out.iter().map(|d| (d.addr, d.size)).collect();
            assert_eq!(&got, want, "{bytes:x?}");
        }
    }

    #[test]
    fn invalid_bytes_are_skipped_one_at_a_time() {
        // 0x06 is invalid in 64-bit mode; then a nop; then a truncated call.
        let code = [0x06, 0x06, 0x90, 0xe8, 0x00];
        let mut out = Vec::new();
        decode(&code, 0, code.len() as u64, &mut out);
        let got: Vec<u64> = out.iter().map(|d| d.addr).collect();
        assert_eq!(got, vec![2]);
    }
}
