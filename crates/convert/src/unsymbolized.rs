//! `kfdo profile --raw`: the unsymbolized raw aggregate (llvm-profgen's
//! `--skip-symbolization` text), mergeable and readable by llvm-profgen.

use std::path::Path;
use std::time::Instant;

use kfdo_aggregate::target::TargetBinary;

use crate::collect::{collect, counted_outcome};
use crate::error::ProfileError;
use crate::outcome::ProfileOutcome;
use crate::request::ProfileRequest;

/// Writes the raw counts of `req.binary`.
pub(crate) fn profile_raw(
    req: &ProfileRequest,
    bin: &kfdo_elf::Binary,
    on_input: &mut dyn FnMut(&Path),
    started: Instant,
) -> Result<ProfileOutcome, ProfileError> {
    if !req.modules.is_empty() {
        return Err(ProfileError::Request(
            "--module needs --kernel and a symbolized format (a raw aggregate holds one binary)"
                .into(),
        ));
    }
    let code = kfdo_elf::Code::new(bin)?;
    let target = TargetBinary::new(bin, req.binary_name.as_deref(), req.kernel);
    let (raw, inputs) = collect(req, bin, &target, &code, on_input)?;
    if raw.is_empty() {
        return Err(ProfileError::Request(format!(
            "no samples: the inputs hold no range or branch counts for {}",
            req.binary.display()
        )));
    }
    let mut out = kfdo_outfile::AtomicOutput::create(&req.output)?;
    let mut outcome = counted_outcome(req, inputs, &raw);
    raw.write_text(out.file(), bin.preferred_base())
        .map_err(|e| out.error(e))?;
    out.commit()?;
    outcome.seconds = started.elapsed().as_secs_f64();
    Ok(outcome)
}
