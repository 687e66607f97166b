//! DWARF access: units, address -> unit lookup, and the per-unit lazily
//! built inline tree and line table. Units are parsed up front (headers,
//! abbreviations, the unit DIE), the DIE trees and line programs only when an
//! address in that unit is first asked about, like gimli/addr2line.

mod ctx;
pub(crate) mod die;
pub(crate) mod inline;
pub(crate) mod line;
pub(crate) mod producer;
mod units;

pub(crate) use ctx::DwarfCtx;
