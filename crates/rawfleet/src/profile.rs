//! Rows to and from kfdo's [`RawProfile`], addressed as the text form (`kfdo profile
//! --raw`) writes them: relative to the binary's preferred base, with llvm-profgen's
//! external address kept as 1 rather than wrapped below the base, so every value is a
//! non-negative int64 as the schema wants.
//!
//! IP-only counts (`--ip-only`) are one-instruction ranges in a [`RawProfile`]; in a
//! file they are rows of kind `ip` (from == to), so they never mix silently with the
//! fall-through ranges of branch stacks, whose symbolization differs.

use crate::error::RawError;
use crate::schema::{
    Row, RowKind, EXTERNAL, RECORDER_BRBE, RECORDER_BRS, RECORDER_EMULATED, RECORDER_LBR,
};
use kfdo_aggregate::count::CountStats;
use kfdo_aggregate::{RawProfile, EXTERNAL_ADDR};
use std::path::Path;

/// The rows of `raw`; `ip_only`: its ranges are IP samples (collected with `--ip-only`).
pub fn rows_of(raw: &RawProfile, base: u64, ip_only: bool) -> Result<Vec<Row>, RawError> {
    let mut rows = Vec::with_capacity(raw.ranges.len() + raw.branches.len());
    let range_kind = if ip_only { RowKind::Ip } else { RowKind::Range };
    for (map, kind) in [(&raw.ranges, range_kind), (&raw.branches, RowKind::Branch)] {
        for (&(a, b), &n) in map {
            if n == 0 {
                continue;
            }
            rows.push(Row {
                kind,
                from: offset(a, base)?,
                to: offset(b, base)?,
                count: i64::try_from(n).map_err(|_| {
                    RawError::Request(format!(
                        "count {n} of ({a:#x}, {b:#x}) does not fit the schema's int64"
                    ))
                })?,
            });
        }
    }
    rows.sort_unstable();
    Ok(rows)
}

fn offset(addr: u64, base: u64) -> Result<i64, RawError> {
    if addr == EXTERNAL_ADDR {
        return Ok(EXTERNAL);
    }
    addr.checked_sub(base)
        .and_then(|o| i64::try_from(o).ok())
        .ok_or_else(|| {
            RawError::Request(format!(
                "address {addr:#x} lies below the binary's preferred base {base:#x}: it \
                 cannot be written as a non-negative offset"
            ))
        })
}

fn address(off: i64, base: u64) -> u64 {
    if off == EXTERNAL {
        EXTERNAL_ADDR
    } else {
        (off as u64).wrapping_add(base)
    }
}

/// Adds rows into `raw` (link-time addresses); `ip` rows become one-instruction ranges.
pub fn add_rows(raw: &mut RawProfile, rows: &[Row], base: u64) {
    for r in rows {
        let (a, b, n) = (address(r.from, base), address(r.to, base), r.count as u64);
        match r.kind {
            RowKind::Branch => raw.add_branch(a, b, n),
            RowKind::Range | RowKind::Ip => raw.add_range(a, b, n),
        }
    }
}

/// The binary's GNU build-id as the `build_id` column writes it: lowercase hex, "" if
/// none.
pub fn build_id_hex(bin: &kfdo_elf::Binary) -> String {
    bin.build_id()
        .map(kfdo_aggregate::target::hex)
        .unwrap_or_default()
}

/// The `binary_path` column: the name the recording mapped the binary under (perf's
/// `[kernel.kallsyms]_text` is `[kernel.kallsyms]`), else the binary's own path.
pub fn recorded_path(stats: &CountStats, bin: &kfdo_elf::Binary) -> String {
    match &stats.mapped_as {
        Some(m) if m.starts_with("[kernel.kallsyms]") => "[kernel.kallsyms]".into(),
        Some(m) => m.clone(),
        None => bin.path().display().to_string(),
    }
}

/// The `recorder` column of a perf.data with branch stacks. kfdo's emulated recorder
/// writes `kfdo-vlbr` as the perf version; otherwise the hardware is told by the
/// recording's architecture (arm64: BRBE) and CPU description (AMD: BRS, which kfdo
/// also uses for AMD's LBR v2, recorded alike), and Intel's LBR is the rest.
pub fn recorder_of(perf_data: &Path) -> Result<String, RawError> {
    let data = kfdo_perf::PerfData::open(perf_data)
        .map_err(|e| RawError::bad(perf_data, format!("cannot read the recording: {e}")))?;
    if data
        .perf_version()
        .is_some_and(|v| v.starts_with("kfdo-vlbr"))
    {
        return Ok(RECORDER_EMULATED.into());
    }
    let arch = data.arch().unwrap_or_default();
    if arch == "aarch64" || arch == "arm64" {
        return Ok(RECORDER_BRBE.into());
    }
    let cpu = data
        .feature_string(kfdo_perf::FeatureId::CPUDESC)
        .unwrap_or_default();
    if cpu.contains("AMD") || cpu.contains("Hygon") {
        return Ok(RECORDER_BRS.into());
    }
    Ok(RECORDER_LBR.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_external_and_offsets() {
        let mut p = RawProfile::default();
        p.add_range(0x401150, 0x401152, 3);
        p.add_branch(EXTERNAL_ADDR, 0x401150, 2);
        p.add_branch(0x401152, 0x401296, 5);
        let rows = rows_of(&p, 0x400000, false).unwrap();
        assert_eq!(
            rows[0],
            Row {
                kind: RowKind::Branch,
                from: 1,
                to: 0x1150,
                count: 2
            }
        );
        assert_eq!(rows.len(), 3);
        let mut back = RawProfile::default();
        add_rows(&mut back, &rows, 0x400000);
        assert_eq!(back, p);
    }

    #[test]
    fn ip_only_ranges_are_ip_rows() {
        let mut p = RawProfile::default();
        p.add_range(0x1150, 0x1150, 7);
        let rows = rows_of(&p, 0x1000, true).unwrap();
        assert_eq!(rows[0].kind, RowKind::Ip);
        assert_eq!((rows[0].from, rows[0].to), (0x150, 0x150));
    }

    #[test]
    fn below_base_is_an_error_not_a_negative_offset() {
        let mut p = RawProfile::default();
        p.add_range(0x10, 0x20, 1);
        let e = rows_of(&p, 0x1000, false).unwrap_err().to_string();
        assert!(e.contains("below the binary's preferred base"), "{e}");
    }
}
