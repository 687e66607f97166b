//! One sample placed in the binary and added to a raw profile (pass 2 of both readers).

use crate::code::CodeMap;
use crate::lbr;
use crate::raw::RawProfile;
use crate::space::{Spaces, ANY_PID};
use crate::stacks::StackCache;

use super::stats::{CountOptions, Counts, SampleMode};

#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn count_sample(
    raw: &mut RawProfile,
    cache: &mut StackCache,
    c: &mut Counts,
    code: &CodeMap,
    spaces: &Spaces,
    opts: &CountOptions,
    pos: u64,
    pid: Option<u32>,
    ip: u64,
    entries: impl ExactSizeIterator<Item = (u64, u64)>,
    repeat: u64,
) {
    if let Some(pid) = pid {
        if !opts.pids.is_empty() && !opts.pids.contains(&pid) {
            return;
        }
    }
    let view = spaces.view(pid.unwrap_or(ANY_PID), pos);
    if view.is_empty() {
        return;
    }
    c.used += repeat;
    match opts.mode {
        SampleMode::IpOnly => {
            if let Some(a) = view.translate(ip) {
                c.in_binary += repeat;
                lbr::add_ip(raw, code, a, repeat);
            }
        }
        SampleMode::Lbr => {
            if entries.len() == 0 {
                return;
            }
            c.records += entries.len() as u64 * repeat;
            // Not in the binary: 0, which is never code, so it counts as external.
            let mut hit = false;
            let entries = entries.map(|(from, to)| {
                let from = view.translate(from);
                let to = view.translate(to);
                hit |= from.is_some_and(|a| a != 0) || to.is_some_and(|a| a != 0);
                (from, to)
            });
            cache.add(raw, code, entries, repeat);
            c.in_binary += hit as u64 * repeat;
        }
    }
}
