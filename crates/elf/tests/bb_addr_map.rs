//! `BbAddrMap::read` against `llvm-readobj --bb-addr-map`, field by field, on
//! programs clang builds at test time, with the tools of each LLVM release kfdo is
//! tested with (19 writes map version 2, 22 version 5): plain, with the PGO analysis map, with
//! basic-block sections (several ranges per function), as a relocatable object, and
//! the older versions 0 and 1 written by yaml2obj-19. Malformed maps must fail with
//! the section and byte offset named.

mod common;

use std::path::Path;

use common::*;
use kfdo_elf::{BbAddrMap, Binary, ElfError};
use kfdo_testkit::require_tools;

/// A block as compared: (ID, offset, size, flags: return, tail call, EH pad,
/// fall-through, indirect branch).
type Block = (u32, u32, u32, [bool; 5]);
/// A range: its base address and blocks.
type Range = (u64, Vec<Block>);

/// One function as llvm-readobj prints it.
#[derive(Debug, Default, PartialEq)]
struct ReadobjFunction {
    at: u64,
    name: String,
    ranges: Vec<Range>,
    entry_count: Option<u64>,
    /// (frequency, successors: (id, probability))
    pgo_blocks: Vec<(u64, Vec<(u32, u32)>)>,
}

fn num(v: &str) -> u64 {
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).unwrap(),
        None => v.parse().unwrap(),
    }
}

/// Parses `llvm-readobj --bb-addr-map`'s nested "Key: value" text.
fn readobj(llvm: Llvm, bin: &Path) -> Vec<ReadobjFunction> {
    let text = run(&llvm.readobj(), &["--bb-addr-map", bin.to_str().unwrap()]);
    let mut out: Vec<ReadobjFunction> = Vec::new();
    let mut in_pgo = false;
    for line in text.lines() {
        let line = line.trim();
        if line == "Function {" {
            out.push(ReadobjFunction::default());
            in_pgo = false;
            continue;
        }
        if line.starts_with("PGO analyses") {
            in_pgo = true;
            continue;
        }
        let Some((key, value)) = line.split_once(": ") else {
            continue;
        };
        let Some(f) = out.last_mut() else { continue };
        let flag = |i: usize, f: &mut ReadobjFunction| {
            let b = &mut f.ranges.last_mut().unwrap().1.last_mut().unwrap().3;
            b[i] = value == "Yes";
        };
        match (in_pgo, key) {
            (false, "At") => f.at = num(value),
            (false, "Name") => f.name = value.to_string(),
            (false, "Base Address") => f.ranges.push((num(value), Vec::new())),
            (false, "ID") => {
                f.ranges
                    .last_mut()
                    .unwrap()
                    .1
                    .push((num(value) as u32, 0, 0, [false; 5]))
            }
            (false, "Offset") => {
                f.ranges.last_mut().unwrap().1.last_mut().unwrap().1 = num(value) as u32
            }
            (false, "Size") => {
                f.ranges.last_mut().unwrap().1.last_mut().unwrap().2 = num(value) as u32
            }
            (false, "HasReturn") => flag(0, f),
            (false, "HasTailCall") => flag(1, f),
            (false, "IsEHPad") => flag(2, f),
            (false, "CanFallThrough") => flag(3, f),
            (false, "HasIndirectBranch") => flag(4, f),
            (true, "FuncEntryCount") => f.entry_count = Some(num(value)),
            (true, "Frequency") => f.pgo_blocks.push((num(value), Vec::new())),
            (true, "ID") => f
                .pgo_blocks
                .last_mut()
                .unwrap()
                .1
                .push((num(value) as u32, 0)),
            (true, "Probability") => {
                // "0x50000000 / 0x80000000 = 62.50%" in some versions; the raw value first.
                let raw = value.split_whitespace().next().unwrap();
                f.pgo_blocks.last_mut().unwrap().1.last_mut().unwrap().1 = num(raw) as u32;
            }
            _ => {}
        }
    }
    out
}

/// kfdo's map in readobj's shape; `bias` is subtracted from addresses (an object's
/// `.text` layout address, since llvm-readobj prints an object's section offsets).
fn ours(bin_path: &Path, bias: u64) -> Vec<ReadobjFunction> {
    let bin = Binary::open(bin_path).unwrap();
    let map = BbAddrMap::read(&bin).unwrap();
    let names = BbAddrMap::function_names(&bin);
    map.functions
        .iter()
        .map(|f| ReadobjFunction {
            at: f.address() - bias,
            name: names.get(&f.address()).cloned().unwrap_or_default(),
            ranges: f
                .ranges
                .iter()
                .map(|r| {
                    let blocks = r
                        .blocks
                        .iter()
                        .map(|b| {
                            let m = b.metadata;
                            let flags = [
                                m.has_return,
                                m.has_tail_call,
                                m.is_eh_pad,
                                m.can_fall_through,
                                m.has_indirect_branch,
                            ];
                            (b.id, b.offset, b.size, flags)
                        })
                        .collect();
                    (r.base - bias, blocks)
                })
                .collect(),
            entry_count: f.pgo.as_ref().and_then(|p| p.entry_count),
            pgo_blocks: f.pgo.as_ref().map_or(Vec::new(), |p| {
                p.blocks
                    .iter()
                    .map(|b| {
                        let succ = b.successors.iter().map(|s| (s.id, s.probability)).collect();
                        (b.frequency.unwrap_or(0), succ)
                    })
                    .collect()
            }),
        })
        .collect()
}

fn assert_same(llvm: Llvm, bin: &Path, bias: u64) -> Vec<ReadobjFunction> {
    let theirs = readobj(llvm, bin);
    let mine = ours(bin, bias);
    assert!(
        !theirs.is_empty(),
        "llvm-readobj printed no functions for {}",
        bin.display()
    );
    assert_eq!(mine.len(), theirs.len(), "function count");
    for (m, t) in mine.iter().zip(&theirs) {
        assert_eq!(
            m,
            t,
            "function {} differs from {}'s",
            t.name,
            llvm.readobj()
        );
    }
    mine
}

/// [`assert_same`] on a map `llvm`'s clang wrote, which has the version
/// kfdo_toolchain says that release writes.
fn assert_same_clang(llvm: Llvm, bin: &Path, bias: u64) -> Vec<ReadobjFunction> {
    let mine = assert_same(llvm, bin, bias);
    let map = BbAddrMap::read(&Binary::open(bin).unwrap()).unwrap();
    let want = llvm.differences().bb_addr_map_version;
    assert!(
        map.functions.iter().all(|f| f.version == Some(want)),
        "{}: {llvm}'s clang writes version {want}, found {:?}",
        bin.display(),
        map.functions
            .iter()
            .map(|f| f.version)
            .collect::<std::collections::BTreeSet<_>>()
    );
    mine
}

fn tools() -> bool {
    require_tools(&["clang-19", "llvm-readobj-19", "yaml2obj-19"])
}

/// The releases whose clang and llvm-readobj the maps are compared with.
fn releases() -> Vec<Llvm> {
    kfdo_testkit::llvm_releases(&["clang", "clang++", "llvm-readobj"])
}

#[test]
fn linked_program_matches_llvm_readobj() {
    for llvm in releases() {
        linked_program_matches(llvm);
    }
}

fn linked_program_matches(llvm: Llvm) {
    let dir = tempfile::tempdir().unwrap();
    // C++: many functions, exception landing pads (IsEHPad), tail calls.
    let bin = build_with(
        llvm,
        dir.path(),
        "containers.cpp",
        "containers",
        &["-O2", "-g", "-fbasic-block-address-map"],
    );
    let funcs = assert_same_clang(llvm, &bin, 0);
    let flag = |i: usize| {
        funcs
            .iter()
            .flat_map(|f| &f.ranges)
            .flat_map(|r| &r.1)
            .any(|b| b.3[i])
    };
    assert!(
        flag(0) && flag(2) && flag(3),
        "returns, EH pads and fall-throughs seen"
    );
    let blocks: usize = funcs
        .iter()
        .flat_map(|f| &f.ranges)
        .map(|r| r.1.len())
        .sum();
    assert!(
        funcs.len() > 20 && blocks > 200,
        "{} functions, {blocks} blocks",
        funcs.len()
    );
    // Block IDs are not addresses in order: the optimizer reorders blocks.
    assert!(funcs
        .iter()
        .any(|f| f.ranges[0].1.windows(2).any(|w| w[1].0 < w[0].0)));
}

#[test]
fn pgo_analysis_map_matches_llvm_readobj() {
    for llvm in releases() {
        pgo_analysis_map_matches(llvm);
    }
}

fn pgo_analysis_map_matches(llvm: Llvm) {
    let dir = tempfile::tempdir().unwrap();
    let bin = build_with(
        llvm,
        dir.path(),
        "interp.c",
        "interp-pgo",
        &[
            "-O2",
            "-fbasic-block-address-map",
            "-mllvm",
            "-pgo-analysis-map=func-entry-count,bb-freq,br-prob",
        ],
    );
    let funcs = assert_same_clang(llvm, &bin, 0);
    assert!(funcs.iter().all(|f| f.entry_count.is_some()));
    assert!(funcs
        .iter()
        .any(|f| f.pgo_blocks.iter().any(|b| b.1.len() == 2)));
}

#[test]
fn basic_block_sections_give_one_range_per_cluster() {
    for llvm in releases() {
        basic_block_sections_ranges(llvm);
    }
}

fn basic_block_sections_ranges(llvm: Llvm) {
    let dir = tempfile::tempdir().unwrap();
    // A first build tells which blocks `run` has; the cluster list then puts its entry
    // block alone in the first cluster and every other block into a second one (clang
    // puts the unlisted blocks into `.cold`, a third range).
    let first = build_with(
        llvm,
        dir.path(),
        "interp.c",
        "interp",
        &["-O2", "-fbasic-block-address-map"],
    );
    let run_fn = readobj(llvm, &first)
        .into_iter()
        .max_by_key(|f| f.ranges[0].1.len())
        .unwrap();
    let ids: Vec<u32> = run_fn.ranges[0].1.iter().map(|b| b.0).collect();
    let half = &ids[1..ids.len() / 2];
    let list = dir.path().join("clusters.txt");
    let cluster2: Vec<String> = half.iter().map(u32::to_string).collect();
    std::fs::write(
        &list,
        format!("v1\nf {}\nc 0\nc {}\n", run_fn.name, cluster2.join(" ")),
    )
    .unwrap();
    let bin = build_with(
        llvm,
        dir.path(),
        "interp.c",
        "interp-bbs",
        &[
            "-O2",
            "-fbasic-block-address-map",
            &format!("-fbasic-block-sections=list={}", list.display()),
        ],
    );
    let funcs = assert_same_clang(llvm, &bin, 0);
    let split = funcs.iter().find(|f| f.name == run_fn.name).unwrap();
    assert_eq!(
        split.ranges.len(),
        3,
        "entry cluster, second cluster, .cold"
    );
    assert_eq!(split.ranges[0].1.len(), 1);
    assert_eq!(
        split.ranges[1].1.iter().map(|b| b.0).collect::<Vec<_>>(),
        half
    );
}

#[test]
fn relocatable_object_gets_layout_addresses() {
    for llvm in releases() {
        relocatable_object_layout(llvm);
    }
}

fn relocatable_object_layout(llvm: Llvm) {
    let dir = tempfile::tempdir().unwrap();
    let obj = build_with(
        llvm,
        dir.path(),
        "interp.c",
        "interp.o",
        &["-O2", "-c", "-fbasic-block-address-map"],
    );
    let bin = Binary::open(&obj).unwrap();
    let text = bin.section_by_name(".text").unwrap().addr;
    assert!(text >= kfdo_elf::RELOCATABLE_LAYOUT_BASE);
    let funcs = assert_same_clang(llvm, &obj, text);
    // Every function but the first starts after .text's start: the relocations were applied.
    assert!(funcs.iter().skip(1).all(|f| f.at > 0));
}

/// yaml2obj-19 writes versions 0 (offsets from the function start) and 1 (from the
/// previous block's end), which no clang-19 build does.
#[test]
fn versions_0_and_1_match_llvm_readobj() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let yaml = dir.path().join("old.yaml");
    std::fs::write(&yaml, yaml_with_entries(OLD_VERSIONS)).unwrap();
    let bin = dir.path().join("old.elf");
    run(
        "yaml2obj-19",
        &[yaml.to_str().unwrap(), "-o", bin.to_str().unwrap()],
    );
    let funcs = assert_same(Llvm::DEFAULT, &bin, 0);
    assert_eq!(funcs.len(), 2);
    assert_eq!(
        funcs[1].ranges[0].1[1].1, 0x6,
        "version 1: offset 2 after the 4-byte block"
    );
}

const OLD_VERSIONS: &str = "    Entries:
      - Version: 0
        BBRanges:
          - BaseAddress: 0x401000
            BBEntries:
              - { AddressOffset: 0x0, Size: 0x4, Metadata: 0x8 }
              - { AddressOffset: 0x4, Size: 0x6, Metadata: 0x1 }
      - Version: 1
        BBRanges:
          - BaseAddress: 0x401020
            BBEntries:
              - { AddressOffset: 0x0, Size: 0x4, Metadata: 0x8 }
              - { AddressOffset: 0x2, Size: 0x6, Metadata: 0x2 }
";

fn yaml_with_entries(map_body: &str) -> String {
    format!(
        "--- !ELF
FileHeader:
  Class: ELFCLASS64
  Data:  ELFDATA2LSB
  Type:  ET_EXEC
  Machine: EM_X86_64
Sections:
  - Name: .text
    Type: SHT_PROGBITS
    Flags: [ SHF_ALLOC, SHF_EXECINSTR ]
    Address: 0x401000
    Size: 0x100
  - Name: .llvm_bb_addr_map
    Type: SHT_LLVM_BB_ADDR_MAP
    Link: .text
{map_body}Symbols:
  - {{ Name: a, Type: STT_FUNC, Section: .text, Value: 0x401000 }}
  - {{ Name: b, Type: STT_FUNC, Section: .text, Value: 0x401020 }}
"
    )
}

fn read_err(content_hex: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let yaml = dir.path().join("bad.yaml");
    std::fs::write(
        &yaml,
        yaml_with_entries(&format!("    Content: \"{content_hex}\"\n")),
    )
    .unwrap();
    let bin_path = dir.path().join("bad.elf");
    run(
        "yaml2obj-19",
        &[yaml.to_str().unwrap(), "-o", bin_path.to_str().unwrap()],
    );
    let bin = Binary::open(&bin_path).unwrap();
    match BbAddrMap::read(&bin) {
        Err(e @ ElfError::BbAddrMap { .. }) => e.to_string(),
        other => panic!("expected a BbAddrMap error, got {other:?}"),
    }
}

#[test]
fn malformed_maps_name_the_section_and_byte() {
    if !tools() {
        return;
    }
    // One good version-2 entry (15 bytes) is "020000104000000000000100000408".
    // Cut before its metadata:
    let e = read_err("0200001040000000000001000004");
    assert!(e.contains("past the end of the section"), "{e}");
    // Followed by a version-9 entry at byte 0xf:
    let e = read_err("0200001040000000000001000004080900");
    assert!(e.contains("byte 0xf") && e.contains("version 9"), "{e}");
    assert!(e.contains(".llvm_bb_addr_map (section 2)"), "{e}");
    // Metadata with an undefined bit (0x40).
    let e = read_err("020000104000000000000100000440");
    assert!(e.contains("invalid block metadata 0x40"), "{e}");
    // Feature bits on a version-1 entry.
    let e = read_err("0101001040000000000000");
    assert!(e.contains("need version 2"), "{e}");
}

#[test]
fn binary_without_map_is_refused() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = build(dir.path(), "interp.c", "interp", &["-O2"]);
    let e = BbAddrMap::read(&Binary::open(&bin).unwrap()).unwrap_err();
    assert!(matches!(e, ElfError::NoBbAddrMap { .. }), "{e}");
    assert!(e.to_string().contains("-fbasic-block-address-map"), "{e}");
}
