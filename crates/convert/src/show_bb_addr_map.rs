//! `kfdo show --bb-addr-map BINARY`: a binary's basic-block address map, one line per
//! function and one per block, with the function names from the symbol table.

use std::io::Write;
use std::path::Path;

use kfdo_elf::{BbAddrMap, BbEntry, BbFunction, Binary};

use crate::show::ShowError;

/// Writes the map of `binary` to `out`.
pub fn show_bb_addr_map(binary: &Path, out: &mut dyn Write) -> Result<(), ShowError> {
    let bin = Binary::open(binary)?;
    let map = BbAddrMap::read(&bin)?;
    let names = BbAddrMap::function_names(&bin);
    let blocks: usize = map
        .functions
        .iter()
        .map(|f| f.ranges.iter().map(|r| r.blocks.len()).sum::<usize>())
        .sum();
    writeln!(
        out,
        "# {}: {} functions, {} basic blocks",
        binary.display(),
        map.functions.len(),
        blocks
    )?;
    for f in &map.functions {
        let name = names
            .get(&f.address())
            .map_or("<no symbol>", String::as_str);
        write_function(out, name, f)?;
    }
    out.flush()?;
    Ok(())
}

fn write_function(out: &mut dyn Write, name: &str, f: &BbFunction) -> std::io::Result<()> {
    let version = f
        .version
        .map_or("v0 section".to_string(), |v| format!("version {v}"));
    write!(
        out,
        "function {name} {:#x} {version} features {:#x}",
        f.address(),
        f.features.encode()
    )?;
    if let Some(count) = f.pgo.as_ref().and_then(|p| p.entry_count) {
        write!(out, " entry-count {count}")?;
    }
    writeln!(out)?;
    let freqs = f.pgo.as_ref().map(|p| &p.blocks);
    let mut index = 0usize;
    for r in &f.ranges {
        writeln!(out, "  range {:#x}", r.base)?;
        for b in &r.blocks {
            write!(
                out,
                "    bb {:<4} {:#x} size {:#x}",
                b.id,
                r.base + u64::from(b.offset),
                b.size
            )?;
            write_flags(out, b)?;
            if let Some(p) = freqs.and_then(|v| v.get(index)) {
                if let Some(freq) = p.frequency {
                    write!(out, " freq {freq}")?;
                }
                for s in &p.successors {
                    write!(out, " succ {}:{:#x}", s.id, s.probability)?;
                }
            }
            writeln!(out)?;
            index += 1;
        }
    }
    Ok(())
}

fn write_flags(out: &mut dyn Write, b: &BbEntry) -> std::io::Result<()> {
    let m = &b.metadata;
    for (on, flag) in [
        (m.has_return, "return"),
        (m.has_tail_call, "tail-call"),
        (m.is_eh_pad, "eh-pad"),
        (m.can_fall_through, "fallthrough"),
        (m.has_indirect_branch, "indirect"),
    ] {
        if on {
            write!(out, " {flag}")?;
        }
    }
    if !b.callsite_end_offsets.is_empty() {
        let ends: Vec<String> = b
            .callsite_end_offsets
            .iter()
            .map(|o| format!("{o:#x}"))
            .collect();
        write!(out, " calls-end {}", ends.join(","))?;
    }
    if let Some(h) = b.hash {
        write!(out, " hash {h:#018x}")?;
    }
    Ok(())
}
