//! Arm BRBE recordings are read like LBR ones. What `kfdo record --method brbe` runs on an
//! Arm machine with BRBE (Linux >= 6.17, `caps/branches` in the armv8/armv9 PMU):
//!
//!     perf record -e BR_RETIRED -j any,save_type -c PERIOD -o perf.data -- PROGRAM
//!
//! (the command `kfdo record --method brbe` runs, crates/record/src/hardware) gives
//! samples of the raw event BR_RETIRED (0x21) whose branch stacks carry, per
//! entry, the branch type (save_type: PERF_BR_COND, CALL, RET...), the privilege level
//! (PERF_BR_PRIV_USER) and cycle counts, after a `hw_idx` word (perf asks for
//! PERF_SAMPLE_BRANCH_HW_INDEX wherever the kernel has it; the Arm driver leaves it at
//! "not available"). Written here as an unprivileged user's recording is (user branches
//! only, as perf_event_paranoid 2 gives). No BRBE machine is at hand, so this test writes that layout: the
//! branches of an aarch64 program recorded under qemu-aarch64, re-encoded as BRBE
//! samples (types from the program's own decoding, cycles counted up), and checks that
//! `kfdo profile` reads it to the same profile as the emulated recording, and that
//! llvm-profgen-19 (through `perf script`) agrees.

use crate::common;

use common::*;
use kfdo_elf::{Binary, Code, InsnKind};
use kfdo_perf::consts::{br_type, branch, perf_type, sample};
use kfdo_perf::{BranchEntry, EventAttr, FeatureId, PerfData, PerfWriter, Record, SampleOut};
use std::path::Path;
use std::process::Command;

/// The Armv8 PMU's common event BR_RETIRED (instruction architecturally executed,
/// branch).
const BR_RETIRED: u64 = 0x21;
/// `perf_branch_entry.priv` (3 bits at bit 30): PERF_BR_PRIV_USER.
const PRIV_USER: u64 = 1;

fn br_type_of(kind: Option<InsnKind>) -> u8 {
    match kind {
        Some(InsnKind::CondBranch) => br_type::COND,
        Some(InsnKind::Jump) => br_type::UNCOND,
        Some(InsnKind::IndirectJump) => br_type::IND,
        Some(InsnKind::Call) => br_type::CALL,
        Some(InsnKind::IndirectCall) => br_type::IND_CALL,
        Some(InsnKind::Return) => br_type::RET,
        _ => br_type::UNKNOWN,
    }
}

/// Rewrites the emulated recording `from` as BRBE samples into `to`; returns how many
/// entries got a known branch type.
fn as_brbe(from: &Path, bin: &Path, to: &Path) -> u64 {
    let b = Binary::open(bin).unwrap();
    let code = Code::new(&b).unwrap();
    let kind_at = |a: u64| code.index_of(a).map(|i| code.kind(i));
    let pd = PerfData::open(from).unwrap();
    let period = pd.attrs()[0].sample_period_or_freq;
    let mut attr = EventAttr::new(perf_type::RAW, BR_RETIRED, period);
    attr.sample_type = sample::IP | sample::TID | sample::TIME | sample::BRANCH_STACK;
    attr.branch_sample_type = branch::USER | branch::ANY | branch::TYPE_SAVE | branch::HW_INDEX;
    attr.exclude_kernel = true;
    attr.exclude_hv = true;
    attr.name = Some("BR_RETIRED:u".into());
    let mut w = PerfWriter::create(to, vec![attr]).unwrap();
    w.set_feature_string(FeatureId::ARCH, "aarch64");
    w.set_feature_string(FeatureId::CPUDESC, "Neoverse-V3 (BRBE layout, kfdo test)");
    let (mut typed, mut cycles) = (0u64, 0u16);
    for r in pd.records() {
        match r.unwrap() {
            Record::Mmap(m) => w.write_mmap2(&m.to_owned()).unwrap(),
            Record::Comm(c) => w.write_comm(c.pid, c.tid, c.comm, c.exec).unwrap(),
            Record::Sample(s) => {
                let entries: Vec<BranchEntry> = s
                    .branch_stack
                    .iter()
                    .map(|e| {
                        // A non-PIE program: its addresses are the file's.
                        let t = br_type_of(kind_at(e.from));
                        typed += u64::from(t != br_type::UNKNOWN);
                        cycles = cycles.wrapping_mul(7).wrapping_add(13) % 4096;
                        BranchEntry {
                            from: e.from,
                            to: e.to,
                            flags: BranchEntry::make_flags(false, true, false, false, cycles, t)
                                | PRIV_USER << 30,
                        }
                    })
                    .collect();
                w.write_sample(
                    0,
                    &SampleOut {
                        ip: s.ip,
                        pid: s.pid,
                        tid: s.tid,
                        time: s.time,
                        branches: &entries,
                        hw_idx: None,
                        ..Default::default()
                    },
                )
                .unwrap();
            }
            _ => {}
        }
    }
    w.finish().unwrap();
    typed
}

fn text_profile(bin: &Path, data: &Path, out: &Path) -> kfdo_afdo::Profile {
    run_ok(
        kfdo()
            .args(["-q", "profile", "--format", "text", "--binary"])
            .arg(bin)
            .arg("--perf-data")
            .arg(data)
            .arg("-o")
            .arg(out),
    );
    read_text(out)
}

#[test]
fn brbe_layout_reads_like_the_emulated_lbr() {
    if !kfdo_testkit::require_tools(&[
        "clang-19",
        "llvm-profgen-19",
        "perf",
        "qemu-aarch64",
        "aarch64-linux-gnu-gcc",
    ]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let bin = build(
        "lz.c",
        d,
        &[
            "--target=aarch64-linux-gnu",
            "-fuse-ld=lld",
            "-no-pie",
            "-fno-pie",
        ],
    );
    let emulated = d.join("emulated.data");
    record_emulated(&bin, &["100000"], &emulated);
    let brbe = d.join("brbe.data");
    let typed = as_brbe(&emulated, &bin, &brbe);
    assert!(typed > 1000, "only {typed} entries with a branch type");

    // The reader sees the BRBE fields as written.
    let pd = PerfData::open(&brbe).unwrap();
    assert!(pd.attrs()[0].has_branch_hw_idx());
    assert_eq!(pd.arch().as_deref(), Some("aarch64"));
    let first = pd
        .records()
        .find_map(|r| match r.unwrap() {
            Record::Sample(s) => Some((s.branch_stack.hw_idx, s.branch_stack.iter().next())),
            _ => None,
        })
        .unwrap();
    assert_eq!(first.0, Some(u64::MAX), "hw_idx: not available");
    let e = first.1.unwrap();
    assert_eq!(e.privilege(), PRIV_USER as u8);
    assert!(e.predicted() && e.cycles() == 13);
    let read_typed: u64 = pd
        .records()
        .filter_map(|r| match r.unwrap() {
            Record::Sample(s) => Some(
                s.branch_stack
                    .iter()
                    .filter(|e| e.branch_type() != br_type::UNKNOWN)
                    .count() as u64,
            ),
            _ => None,
        })
        .sum();
    assert_eq!(
        read_typed, typed,
        "entries read back with their branch type"
    );

    let ours = text_profile(&bin, &emulated, &d.join("emulated.txt"));
    let from_brbe = text_profile(&bin, &brbe, &d.join("brbe.txt"));
    assert!(
        from_brbe == ours,
        "BRBE layout vs emulated LBR:\n{}",
        diff(&from_brbe, &ours)
    );

    // perf itself reads the layout, and llvm-profgen-19 agrees on its perf script.
    let script = run_ok(
        Command::new("perf")
            .args(["script", "-F", "ip,brstack", "--show-mmap-events", "-i"])
            .arg(&brbe),
    );
    let text = String::from_utf8_lossy(&script.stdout);
    // perf 6.1 prints no branch types in brstack, but the flags it prints (P, cycles)
    // are read from the same packed word as the types.
    assert!(
        text.contains("/P/-/-/13/"),
        "perf script does not show the first entry's flags: {}",
        &text[..text.len().min(400)]
    );
    std::fs::write(d.join("brbe.script"), &script.stdout).unwrap();
    run_ok(
        Command::new("llvm-profgen-19")
            .arg(format!("--binary={}", bin.display()))
            .arg(format!("--perfscript={}", d.join("brbe.script").display()))
            .arg(format!("--output={}", d.join("ref.txt").display()))
            .arg("--format=text"),
    );
    let reference = read_text(&d.join("ref.txt"));
    assert!(
        from_brbe == reference,
        "BRBE layout: kfdo vs llvm-profgen-19:\n{}",
        diff(&from_brbe, &reference)
    );
    eprintln!(
        "BRBE layout: {typed} typed entries; profile of {} functions equal to the emulated \
         recording's and llvm-profgen-19's",
        from_brbe.functions.len()
    );
}
