//! x86-64 decoding with iced-x86.
//!
//! The classification mirrors LLVM's MCInstrDesc flags as llvm-profgen uses
//! them: `isCall` (direct and indirect, near and far), `isReturn` (ret, lret,
//! iret), `isBranch` (jcc, jmp, indirect jmp; jrcxz/loop count as conditional).

use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction};

use super::Decoded;
use crate::code::InsnKind;

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
