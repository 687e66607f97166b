//! Decoding the bytes of one `SHT_LLVM_BB_ADDR_MAP` section, every version LLVM has
//! written.
//!
//! The format, as LLVM's writers (`AsmPrinter::emitBBAddrMapSection`) and readers
//! (`decodeBBAddrMap`) define it, one entry per function:
//!
//! * section type `SHT_LLVM_BB_ADDR_MAP_V0` (0x6fff4c08, LLVM 12-13): no header; the
//!   function address, a ULEB128 block count, and per block its offset from the function
//!   start, size and metadata (ULEB128 each); a block's ID is its index.
//! * section type `SHT_LLVM_BB_ADDR_MAP` (0x6fff4c0a): a version byte and a feature
//!   byte (a 16-bit feature word from version 5), then the function address and block
//!   count, or, with the multi-range feature, a range count and per range an address and
//!   block count. Per block:
//!   - version 0: offset from the function start, size, metadata;
//!   - version 1: the offset counts from the end of the previous block instead;
//!   - version 2 (clang 16-19): the block's ID comes first;
//!   - version 3: with the call-site feature, after the offset, a count and the deltas
//!     of the call-site end offsets; the size then counts from the last call-site end;
//!   - version 4: with the hash feature, a 64-bit block hash after the metadata;
//!   - version 5: the post-link CFG feature adds frequencies to the PGO data.
//!
//!   With the PGO features, after the blocks: the function entry count, and per block
//!   its frequency and its successors' IDs and branch probabilities.

use super::{BbEntry, BbFeatures, BbFunction, BbMetadata, BbPgo, BbPgoBlock, BbRange, BbSuccessor};

/// `SHT_LLVM_BB_ADDR_MAP_V0`, the section type of LLVM 12 and 13.
pub(super) const SHT_LLVM_BB_ADDR_MAP_V0: u32 = 0x6fff_4c08;
/// `SHT_LLVM_BB_ADDR_MAP`, every later version.
pub(super) const SHT_LLVM_BB_ADDR_MAP: u32 = 0x6fff_4c0a;
/// The newest version this reader knows.
const MAX_VERSION: u8 = 5;

/// What went wrong, and at which byte of the section.
#[derive(Debug)]
pub struct DecodeError {
    pub offset: u64,
    pub what: String,
}

/// A cursor over the section bytes.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn err(&self, at: usize, what: impl Into<String>) -> DecodeError {
        DecodeError {
            offset: at as u64,
            what: what.into(),
        }
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        let b = *self
            .data
            .get(self.pos)
            .ok_or_else(|| self.err(self.pos, "the section ends inside an entry"))?;
        self.pos += 1;
        Ok(b)
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let bytes = self
            .data
            .get(self.pos..self.pos + N)
            .ok_or_else(|| self.err(self.pos, "the section ends inside an entry"))?;
        self.pos += N;
        Ok(bytes.try_into().expect("slice of length N"))
    }

    fn uleb64(&mut self) -> Result<u64, DecodeError> {
        let start = self.pos;
        let (mut value, mut shift) = (0u64, 0u32);
        loop {
            let b = self.u8().map_err(|_| {
                self.err(
                    start,
                    "malformed ULEB128: it runs past the end of the section",
                )
            })?;
            let bits = u64::from(b & 0x7f);
            if shift >= 64 || (shift == 63 && bits > 1) {
                return Err(self.err(start, "ULEB128 value does not fit in 64 bits"));
            }
            value |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
            shift += 7;
        }
    }

    fn uleb32(&mut self, field: &str) -> Result<u32, DecodeError> {
        let start = self.pos;
        let v = self.uleb64()?;
        u32::try_from(v).map_err(|_| self.err(start, format!("{field} {v:#x} exceeds 32 bits")))
    }
}

/// Decodes a whole section. `sh_type` picks the V0 layout or the versioned one;
/// `address(offset, raw)` turns the address field stored at `offset` (its raw value
/// `raw`) into the function's address: the identity for linked binaries, the
/// relocation's result in a relocatable object.
pub fn decode_section(
    data: &[u8],
    sh_type: u32,
    address: &dyn Fn(u64, u64) -> Result<u64, String>,
) -> Result<Vec<BbFunction>, DecodeError> {
    let mut r = Reader { data, pos: 0 };
    let mut out = Vec::new();
    while r.pos < data.len() {
        out.push(decode_function(&mut r, sh_type, address)?);
    }
    Ok(out)
}

fn decode_function(
    r: &mut Reader<'_>,
    sh_type: u32,
    address: &dyn Fn(u64, u64) -> Result<u64, String>,
) -> Result<BbFunction, DecodeError> {
    let entry_offset = r.pos as u64;
    let (version, features) = if sh_type == SHT_LLVM_BB_ADDR_MAP_V0 {
        (None, BbFeatures::default())
    } else {
        let at = r.pos;
        let version = r.u8()?;
        if version > MAX_VERSION {
            return Err(r.err(
                at,
                format!(
                    "unsupported BB address map version {version} (kfdo reads versions 0 to \
                     {MAX_VERSION}); a newer LLVM wrote it: rebuild with clang-19 or update kfdo"
                ),
            ));
        }
        let raw = if version >= 5 {
            u16::from_le_bytes(r.fixed::<2>()?)
        } else {
            u16::from(r.u8()?)
        };
        let features = BbFeatures::decode(raw)
            .ok_or_else(|| r.err(at + 1, format!("unknown feature bits in {raw:#x}")))?;
        if let Some(needs) = features.minimum_version() {
            if version < needs {
                return Err(r.err(
                    at,
                    format!(
                        "version {version} with features {raw:#x}, which need version {needs} \
                         or later"
                    ),
                ));
            }
        }
        (Some(version), features)
    };
    let v = version.unwrap_or(0);

    let read_address = |r: &mut Reader<'_>| -> Result<u64, DecodeError> {
        let at = r.pos;
        let raw = u64::from_le_bytes(r.fixed::<8>()?);
        address(at as u64, raw).map_err(|what| r.err(at, what))
    };
    // (base address, block count) per range.
    let mut ranges = Vec::new();
    if features.multi_bb_range {
        let at = r.pos;
        let n = r.uleb32("range count")?;
        if n == 0 {
            return Err(r.err(at, "a function with zero block ranges"));
        }
        for _ in 0..n {
            let base = read_address(r)?;
            let blocks = r.uleb32("block count")?;
            ranges.push(BbRange {
                base,
                blocks: decode_blocks(r, v, &features, blocks)?,
            });
        }
    } else {
        let base = read_address(r)?;
        let blocks = r.uleb32("block count")?;
        ranges.push(BbRange {
            base,
            blocks: decode_blocks(r, v, &features, blocks)?,
        });
    }

    let pgo = if features.has_pgo() {
        let entry_count = if features.func_entry_count {
            Some(r.uleb64()?)
        } else {
            None
        };
        let mut blocks = Vec::new();
        if features.bb_freq || features.br_prob {
            let total: usize = ranges.iter().map(|x| x.blocks.len()).sum();
            for _ in 0..total {
                blocks.push(decode_pgo_block(r, &features)?);
            }
        }
        Some(BbPgo {
            entry_count,
            blocks,
        })
    } else {
        None
    };
    Ok(BbFunction {
        version,
        features,
        ranges,
        pgo,
        entry_offset,
    })
}

fn decode_blocks(
    r: &mut Reader<'_>,
    version: u8,
    features: &BbFeatures,
    count: u32,
) -> Result<Vec<BbEntry>, DecodeError> {
    if features.omit_bb_entries {
        return Ok(Vec::new());
    }
    // Guard the allocation: a block takes at least 3 bytes.
    let mut blocks = Vec::with_capacity((count as usize).min(r.data.len() / 3 + 1));
    let mut prev_end = 0u32;
    for index in 0..count {
        let id = if version >= 2 {
            r.uleb32("block ID")?
        } else {
            index
        };
        let offset_at = r.pos;
        let mut offset = r.uleb32("block offset")?;
        let mut callsite_end_offsets = Vec::new();
        let mut last_callsite = 0u32;
        if features.callsite_end_offsets {
            let n = r.uleb32("call-site count")?;
            for _ in 0..n.min(r.data.len() as u32) {
                let delta = r.uleb32("call-site offset")?;
                last_callsite = last_callsite
                    .checked_add(delta)
                    .ok_or_else(|| r.err(offset_at, "call-site offsets overflow 32 bits"))?;
                callsite_end_offsets.push(last_callsite);
            }
        }
        let size_at = r.pos;
        let size = r
            .uleb32("block size")?
            .checked_add(last_callsite)
            .ok_or_else(|| r.err(size_at, "block size overflows 32 bits"))?;
        let meta_at = r.pos;
        let raw_meta = r.uleb32("block metadata")?;
        let meta = BbMetadata::decode(raw_meta)
            .ok_or_else(|| r.err(meta_at, format!("invalid block metadata {raw_meta:#x}")))?;
        let hash = if features.bb_hash {
            Some(u64::from_le_bytes(r.fixed::<8>()?))
        } else {
            None
        };
        // Version 0 (and the V0 section type, read as version 0) store offsets from the
        // range start; later versions from the end of the previous block.
        if version >= 1 {
            offset = offset
                .checked_add(prev_end)
                .ok_or_else(|| r.err(offset_at, "block offset overflows 32 bits"))?;
            prev_end = offset
                .checked_add(size)
                .ok_or_else(|| r.err(size_at, "block end overflows 32 bits"))?;
        }
        blocks.push(BbEntry {
            id,
            offset,
            size,
            metadata: meta,
            callsite_end_offsets,
            hash,
        });
    }
    Ok(blocks)
}

fn decode_pgo_block(r: &mut Reader<'_>, features: &BbFeatures) -> Result<BbPgoBlock, DecodeError> {
    let frequency = if features.bb_freq {
        Some(r.uleb64()?)
    } else {
        None
    };
    let post_link_frequency = if features.post_link_cfg {
        Some(r.uleb32("post-link frequency")?)
    } else {
        None
    };
    let mut successors = Vec::new();
    if features.br_prob {
        let n = r.uleb64()?;
        for _ in 0..n.min(r.data.len() as u64) {
            let id = r.uleb32("successor ID")?;
            let probability = r.uleb32("branch probability")?;
            let post_link_frequency = if features.post_link_cfg {
                Some(r.uleb32("post-link edge frequency")?)
            } else {
                None
            };
            successors.push(BbSuccessor {
                id,
                probability,
                post_link_frequency,
            });
        }
    }
    Ok(BbPgoBlock {
        frequency,
        post_link_frequency,
        successors,
    })
}

/// The versions no clang-19 build writes (the unversioned V0 section type, 3, 4 and 5),
/// encoded by hand from the format described above.
#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn decode(s: &str, sh_type: u32) -> Result<Vec<BbFunction>, DecodeError> {
        decode_section(&hex(s), sh_type, &|_, raw| Ok(raw))
    }

    const ADDR: &str = "0010000000000000"; // 0x1000

    #[test]
    fn v0_section_type_has_no_header_and_absolute_offsets() {
        let f = decode(
            &format!("{ADDR} 02 00 04 08 08 06 10"),
            SHT_LLVM_BB_ADDR_MAP_V0,
        )
        .unwrap();
        assert_eq!(f[0].version, None);
        let b: Vec<_> = f[0].blocks().map(|(a, b)| (a, b.id, b.size)).collect();
        assert_eq!(b, [(0x1000, 0, 4), (0x1008, 1, 6)]);
        assert!(f[0].ranges[0].blocks[1].metadata.has_indirect_branch);
    }

    #[test]
    fn v3_callsite_end_offsets_and_size_after_the_last_call() {
        let f = decode(
            &format!("03 20 {ADDR} 01 00 00 02 05 03 04 08"),
            SHT_LLVM_BB_ADDR_MAP,
        )
        .unwrap();
        let b = &f[0].ranges[0].blocks[0];
        assert_eq!(b.callsite_end_offsets, [5, 8]);
        assert_eq!(b.size, 12);
    }

    #[test]
    fn v4_block_hash() {
        let f = decode(
            &format!("04 40 {ADDR} 01 00 00 04 01 8877665544332211"),
            SHT_LLVM_BB_ADDR_MAP,
        )
        .unwrap();
        assert_eq!(f[0].ranges[0].blocks[0].hash, Some(0x1122_3344_5566_7788));
    }

    #[test]
    fn v5_sixteen_bit_features_and_post_link_frequencies() {
        let f = decode(
            &format!("05 8600 {ADDR} 01 00 00 02 01  10 07 01 00 8080808008 03"),
            SHT_LLVM_BB_ADDR_MAP,
        )
        .unwrap();
        let pgo = f[0].pgo.as_ref().unwrap();
        assert_eq!(pgo.entry_count, None);
        let b = &pgo.blocks[0];
        assert_eq!((b.frequency, b.post_link_frequency), (Some(0x10), Some(7)));
        assert_eq!(
            b.successors,
            [BbSuccessor {
                id: 0,
                probability: 0x8000_0000,
                post_link_frequency: Some(3)
            }]
        );
    }

    #[test]
    fn multi_range_offsets_restart_per_range() {
        let f = decode(
            &format!("02 08 02 {ADDR} 01 00 00 04 08  0020000000000000 01 03 02 04 01"),
            SHT_LLVM_BB_ADDR_MAP,
        )
        .unwrap();
        let b: Vec<_> = f[0].blocks().map(|(a, b)| (a, b.id)).collect();
        assert_eq!(b, [(0x1000, 0), (0x2002, 3)]);
    }

    #[test]
    fn omitted_entries_and_errors() {
        let f = decode(&format!("02 10 {ADDR} 03"), SHT_LLVM_BB_ADDR_MAP).unwrap();
        assert!(f[0].ranges[0].blocks.is_empty());
        let e = decode("02 08 00", SHT_LLVM_BB_ADDR_MAP).unwrap_err();
        assert!(e.what.contains("zero block ranges"), "{}", e.what);
        let e = decode(&format!("02 20 {ADDR} 00"), SHT_LLVM_BB_ADDR_MAP).unwrap_err();
        assert!(e.what.contains("need version 3"), "{}", e.what);
        let e = decode(&format!("05 0001 {ADDR} 00"), SHT_LLVM_BB_ADDR_MAP).unwrap_err();
        assert!(
            e.what.contains("unknown feature bits in 0x100"),
            "{}",
            e.what
        );
        assert_eq!(e.offset, 1);
        let e = decode(
            &format!("02 00 {ADDR} 01 00 8080808010 04 08"),
            SHT_LLVM_BB_ADDR_MAP,
        )
        .unwrap_err();
        assert!(
            e.what.contains("block offset 0x100000000 exceeds 32 bits"),
            "{}",
            e.what
        );
    }
}
