//! `Symbolizer`: address -> inline stack, and DWARF function ranges, with
//! the exact semantics llvm-profgen gets from llvm-symbolizer.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::binary::Binary;
use crate::code::profgen_text_symbols;
use crate::dwarf::inline::NO_PARENT;
use crate::dwarf::DwarfCtx;
use crate::error::ElfError;

/// One frame of an inline stack.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    /// Linkage (mangled) name, else DW_AT_name, via abstract origin / specification.
    pub func: Arc<str>,
    /// Leaf: the line-table line; caller frames: DW_AT_call_line of the callee.
    pub line: u32,
    /// Leaf: the line-table column; callers: DW_AT_call_column.
    pub column: u32,
    /// DW_AT_decl_line of the function (0 if absent).
    pub start_line: u32,
    /// Leaf: the line-table discriminator; callers: the inlined
    /// subroutine's DW_AT_GNU_discriminator. Raw (not decoded into base /
    /// duplication factor).
    pub discriminator: u32,
}

impl Frame {
    /// llvm-profgen's line offset: `(line - start_line) & 0xffff`.
    pub fn line_offset(&self) -> u32 {
        self.line.wrapping_sub(self.start_line) & 0xffff
    }
}

/// One contiguous address range of a function, as llvm-profgen's FuncRange.
#[derive(Clone, Debug)]
pub struct FuncRange {
    pub start: u64,
    /// Exclusive.
    pub end: u64,
    pub name: Arc<str>,
    /// llvm-profgen's IsFuncEntry: the function has a single range, or an ELF
    /// symbol inside this range has the function's (canonical) name.
    pub is_func_entry: bool,
    /// Index into [`Symbolizer::functions`].
    pub func: u32,
}

/// All ranges of one function name (llvm-profgen's BinaryFunction).
#[derive(Clone, Debug)]
pub struct Function {
    pub name: Arc<str>,
    pub ranges: Vec<(u64, u64)>,
}

struct FuncIndex {
    functions: Vec<Function>,
    /// Sorted by start, unique starts.
    ranges: Vec<FuncRange>,
}

pub struct Symbolizer<'a> {
    bin: &'a Binary,
    ctx: DwarfCtx<'a>,
    funcs: OnceLock<FuncIndex>,
}

impl std::fmt::Debug for Symbolizer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Symbolizer")
            .field("path", &self.bin.path())
            .field("units", &self.ctx.units.len())
            .finish_non_exhaustive()
    }
}

impl<'a> Symbolizer<'a> {
    /// DWARF symbolizer for `bin`. Fails if the binary has no DWARF (or only
    /// a pointer to separate / split DWARF). Cheap to repeat: the decompressed
    /// debug sections are cached in `bin` and shared by its symbolizers.
    pub fn new(bin: &'a Binary) -> Result<Symbolizer<'a>, ElfError> {
        if !bin.has_debug_info() {
            if let Some(link) = bin.gnu_debuglink() {
                return Err(ElfError::SeparateDebugInfo {
                    path: bin.path().to_owned(),
                    link: link.to_owned(),
                });
            }
            return Err(ElfError::NoDebugInfo {
                path: bin.path().to_owned(),
            });
        }
        let ctx = DwarfCtx::load(bin)?;
        if !ctx.units.iter().any(|u| u.is_compile) {
            return Err(ElfError::NoDebugInfo {
                path: bin.path().to_owned(),
            });
        }
        Ok(Symbolizer {
            bin,
            ctx,
            funcs: OnceLock::new(),
        })
    }

    pub fn binary(&self) -> &'a Binary {
        self.bin
    }

    /// Inline stack at `addr`, outermost caller first, leaf last, exactly as
    /// llvm-profgen's `ProfiledBinary::symbolize` builds it from
    /// llvm-symbolizer's inlining info: the walk from the outermost frame stops
    /// at the first frame whose name is empty or unknown. `out` is cleared
    /// first; it stays empty when `addr` has no DWARF subroutine.
    pub fn frames(&self, addr: u64, out: &mut Vec<Frame>) {
        out.clear();
        let Some(ui) = self.ctx.unit_for_addr(addr) else {
            return;
        };
        let tree = self.ctx.tree(ui);
        let Some(leaf) = tree.lookup(addr) else {
            return;
        };
        // Innermost-first chain (llvm InlinedChain).
        let mut chain: [u32; 32] = [0; 32];
        let mut long_chain: Vec<u32> = Vec::new();
        let mut n = 0usize;
        let mut cur = leaf;
        loop {
            if n < chain.len() {
                chain[n] = cur;
            } else {
                if long_chain.is_empty() {
                    long_chain.extend_from_slice(&chain);
                }
                long_chain.push(cur);
            }
            n += 1;
            let node = &tree.nodes[cur as usize];
            if node.is_subprogram || node.parent == NO_PARENT {
                break;
            }
            cur = node.parent;
        }
        let chain: &[u32] = if long_chain.is_empty() {
            &chain[..n]
        } else {
            &long_chain
        };
        let row = self.ctx.lines(ui).lookup(addr).filter(|r| r.file_ok);
        for i in (0..n).rev() {
            let node = &tree.nodes[chain[i] as usize];
            let Some(name) = node.name.as_ref().filter(|s| !s.is_empty()) else {
                break;
            };
            let (line, column, discriminator) = if i == 0 {
                row.map_or((0, 0, 0), |r| (r.line, r.column, r.discriminator))
            } else {
                let callee = &tree.nodes[chain[i - 1] as usize];
                (
                    callee.call_line,
                    callee.call_column,
                    callee.call_discriminator,
                )
            };
            out.push(Frame {
                func: name.clone(),
                line,
                column,
                start_line: node.decl_line,
                discriminator,
            });
        }
    }

    fn func_index(&self) -> &FuncIndex {
        self.funcs.get_or_init(|| self.build_func_index())
    }

    /// Every function range from DWARF subprograms, sorted by start address,
    /// as llvm-profgen's `loadSymbolsFromDWARF` + `StartAddrToFuncRangeMap`:
    /// ranges starting below the preferred base or empty are dropped, and of
    /// several ranges starting at one address the first (in unit/DIE order) wins.
    pub fn function_ranges(&self) -> &[FuncRange] {
        &self.func_index().ranges
    }

    /// Functions by name, each with all its ranges (llvm-profgen's BinaryFunctions).
    pub fn functions(&self) -> &[Function] {
        &self.func_index().functions
    }

    fn build_func_index(&self) -> FuncIndex {
        let base = self.bin.preferred_base();
        let units: Vec<usize> = (0..self.ctx.units.len())
            .filter(|&i| self.ctx.units[i].is_compile)
            .collect();
        // Trees in parallel; the merge below is sequential to keep llvm's order.
        units.par_iter().for_each(|&i| {
            self.ctx.tree(i);
        });
        let mut by_name: FxHashMap<Arc<str>, u32> = FxHashMap::default();
        let mut functions: Vec<Function> = Vec::new();
        let mut starts: BTreeMap<u64, FuncRange> = BTreeMap::new();
        for &ui in &units {
            let tree = self.ctx.tree(ui);
            for sp in &tree.subprograms {
                let Some(name) = tree.nodes[sp.node as usize].name.clone() else {
                    continue;
                };
                let fi = *by_name.entry(name.clone()).or_insert_with(|| {
                    functions.push(Function {
                        name: name.clone(),
                        ranges: Vec::new(),
                    });
                    functions.len() as u32 - 1
                });
                for &(start, end) in &sp.ranges {
                    if end <= start || start < base {
                        continue;
                    }
                    functions[fi as usize].ranges.push((start, end));
                    starts.entry(start).or_insert_with(|| FuncRange {
                        start,
                        end,
                        name: name.clone(),
                        is_func_entry: false,
                        func: fi,
                    });
                }
            }
        }
        let mut ranges: Vec<FuncRange> = starts.into_values().collect();
        // llvm-profgen's setIsFuncEntry, run for every symbol it disassembles.
        for list in profgen_text_symbols(self.bin) {
            for sym in list {
                let Some(i) = find_containing(&ranges, sym.addr) else {
                    continue;
                };
                let r = &mut ranges[i];
                if functions[r.func as usize].ranges.len() == 1
                    || (!r.is_func_entry && r.name.as_bytes() == canonical_fn_name(sym.name))
                {
                    r.is_func_entry = true;
                }
            }
        }
        FuncIndex { functions, ranges }
    }
}

fn find_containing(ranges: &[FuncRange], addr: u64) -> Option<usize> {
    let i = ranges.partition_point(|r| r.start <= addr).checked_sub(1)?;
    (addr < ranges[i].end).then_some(i)
}

/// llvm `FunctionSamples::getCanonicalFnName(Name, "selected")` with the
/// default `HasUniqSuffix = true`: strips a trailing `.llvm.<x>` then a
/// trailing `.part.<x>` (only when that suffix holds the last '.'); keeps
/// `.__uniq.` suffixes.
pub fn canonical_fn_name(name: &[u8]) -> &[u8] {
    let mut cand = name;
    for suffix in [&b".llvm."[..], b".part."] {
        let Some(it) = rfind(cand, suffix) else {
            continue;
        };
        let dit = cand.iter().rposition(|&c| c == b'.');
        if dit == Some(it + suffix.len() - 1) {
            cand = &cand[..it];
        }
    }
    cand
}

fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    (0..=hay.len().checked_sub(needle.len())?)
        .rev()
        .find(|&i| &hay[i..i + needle.len()] == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_names() {
        assert_eq!(canonical_fn_name(b"foo.llvm.123"), b"foo");
        assert_eq!(canonical_fn_name(b"foo.part.0"), b"foo");
        assert_eq!(canonical_fn_name(b"foo.part.0.llvm.77"), b"foo");
        assert_eq!(canonical_fn_name(b"foo.llvm.1.cold"), b"foo.llvm.1.cold");
        assert_eq!(
            canonical_fn_name(b"_ZL1fi.__uniq.123"),
            b"_ZL1fi.__uniq.123"
        );
        assert_eq!(canonical_fn_name(b"foo.cold"), b"foo.cold");
    }

    #[test]
    fn line_offset_wraps_like_profgen() {
        let f = Frame {
            func: Arc::from("f"),
            line: 3,
            column: 0,
            start_line: 5,
            discriminator: 0,
        };
        assert_eq!(f.line_offset(), 0xfffe);
    }
}
