//! `kfdo profile --format propeller -o PREFIX`: Propeller's cc and ld profiles,
//! `PREFIX_cc_profile.txt` and `PREFIX_ld_profile.txt` (the names the kernel's
//! `CLANG_PROPELLER_PROFILE_PREFIX` expects), both written or neither.

use std::path::{Path, PathBuf};
use std::time::Instant;

use kfdo_layout::propeller::{propeller_profile, LayoutParams};

use crate::error::ProfileError;
use crate::outcome::{ProfileOutcome, PropellerSummary};
use crate::read::Read;
use crate::request::ProfileRequest;

/// The two files a prefix names.
pub fn propeller_paths(prefix: &Path) -> (PathBuf, PathBuf) {
    let p = prefix.display();
    (
        PathBuf::from(format!("{p}_cc_profile.txt")),
        PathBuf::from(format!("{p}_ld_profile.txt")),
    )
}

/// Before any input is read: the counts must hold branches, and the binary its map.
pub(crate) fn check(req: &ProfileRequest, bin: &kfdo_elf::Binary) -> Result<(), ProfileError> {
    if req.ip_only {
        return Err(ProfileError::Request(
            "--format propeller needs branch stacks (LBR, or kfdo record's emulated LBR): drop --ip-only".into(),
        ));
    }
    // Fail on a missing or unreadable map before reading any recording.
    kfdo_elf::BbAddrMap::read(bin)?;
    Ok(())
}

/// Writes both profiles of `req.binary` from the counts the read step found.
pub(crate) fn write_propeller(
    req: &ProfileRequest,
    bin: &kfdo_elf::Binary,
    read: Read,
    started: Instant,
) -> Result<ProfileOutcome, ProfileError> {
    let Read { raw, inputs, .. } = read;
    if raw.branches.is_empty() {
        return Err(ProfileError::Request(format!(
            "no branch samples: the inputs hold no taken branch of {} (was it recorded with branch stacks?)",
            req.binary.display()
        )));
    }
    let profile = propeller_profile(bin, &raw, &LayoutParams::default())?;
    let (cc_path, ld_path) = propeller_paths(&req.output);
    let mut cc = kfdo_outfile::AtomicOutput::create(&cc_path)?;
    let mut ld = kfdo_outfile::AtomicOutput::create(&ld_path)?;
    use std::io::Write;
    cc.file()
        .write_all(profile.cc_profile.as_bytes())
        .map_err(|e| cc.error(e))?;
    ld.file()
        .write_all(profile.ld_profile.as_bytes())
        .map_err(|e| ld.error(e))?;
    cc.commit()?;
    ld.commit()?;
    let s = &profile.stats;
    Ok(ProfileOutcome {
        binary: req.binary.display().to_string(),
        output: cc_path.display().to_string(),
        format: req.format.name(),
        inputs,
        ranges: raw.ranges.len(),
        branches: raw.branches.len(),
        functions: s.cfg.hot_functions,
        total_samples: s.cfg.branch_weight,
        build: None,
        locations_with_discriminators: None,
        gcc: None,
        modules: Vec::new(),
        bolt: None,
        propeller: Some(PropellerSummary {
            cc_profile: cc_path.display().to_string(),
            ld_profile: ld_path.display().to_string(),
            mapped_functions: s.cfg.functions,
            hot_functions: s.cfg.hot_functions,
            hot_blocks: s.hot_blocks,
            split_functions: s.split_functions,
            ambiguous_functions: s.ambiguous_functions,
            branch_weight: s.cfg.branch_weight,
            edge_weight: s.cfg.edge_weight,
            dubious_weight: s.cfg.dubious_weight,
            dropped_fallthrough_weight: s.cfg.dropped_fallthrough_weight,
            ext_tsp_score_before: s.intra_score_before,
            ext_tsp_score_after: s.intra_score_after,
        }),
        seconds: started.elapsed().as_secs_f64(),
    })
}
