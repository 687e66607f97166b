//! `kfdo profile --unsymbolized`: the counts as llvm-profgen's `--skip-symbolization`
//! text, mergeable and readable by llvm-profgen.

use std::time::Instant;

use crate::error::ProfileError;
use crate::outcome::ProfileOutcome;
use crate::read::{counted_outcome, require_counts, Read};
use crate::request::ProfileRequest;

/// Writes the counts of `req.binary` the read step found.
pub(crate) fn write_unsymbolized(
    req: &ProfileRequest,
    bin: &kfdo_elf::Binary,
    read: Read,
    started: Instant,
) -> Result<ProfileOutcome, ProfileError> {
    let Read { raw, inputs, .. } = read;
    require_counts(req, &raw)?;
    let mut out = kfdo_outfile::AtomicOutput::create(&req.output)?;
    let mut outcome = counted_outcome(req, inputs, &raw);
    raw.write_text(out.file(), bin.preferred_base())
        .map_err(|e| out.error(e))?;
    out.commit()?;
    outcome.seconds = started.elapsed().as_secs_f64();
    Ok(outcome)
}
