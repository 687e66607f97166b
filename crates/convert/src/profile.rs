//! `kfdo profile`: recordings -> a profile of one binary. The checks every format
//! shares, then one `match` hands the request to the format's writer.

use std::path::Path;
use std::time::Instant;

use kfdo_afdo::Format;

use crate::error::ProfileError;
use crate::outcome::ProfileOutcome;
use crate::request::{OutputFormat, ProfileRequest};

/// Converts `req.inputs` into `req.output`. `on_input` hears each input as it is read
/// (for progress). The output is written whole or not at all.
pub fn profile(
    req: &ProfileRequest,
    on_input: &mut dyn FnMut(&Path),
) -> Result<ProfileOutcome, ProfileError> {
    let started = Instant::now();
    if req.inputs.is_empty() {
        return Err(ProfileError::Request(
            "no input: give --perf-data, --perf-script or --raw-in".into(),
        ));
    }
    // The architecture of the binary against the recordings', before anything is read.
    let bin = kfdo_elf::Binary::open(&req.binary)?;
    crate::arch_check::check_inputs(&req.inputs, &req.binary, bin.arch())?;
    crate::stripped::check_symbols(&bin, req.format)?;
    match req.format {
        // BOLT reads perf.data on its own terms and checks its own options.
        OutputFormat::Bolt => crate::bolt::profile_bolt(req, on_input, started),
        OutputFormat::Gcov => {
            // Before any input is read: which GCC the gcov file is for.
            let (version, release) = crate::gcov::gcov_version(req.gcc_version, &bin)?;
            check_kernel(req, &bin)?;
            let mut outcome = crate::autofdo::profile_autofdo(
                req,
                &bin,
                Format::Gcov(version),
                on_input,
                started,
            )?;
            outcome.gcc = Some(release);
            Ok(outcome)
        }
        OutputFormat::Propeller => {
            check_no_gcc_version(req)?;
            check_kernel(req, &bin)?;
            crate::propeller::profile_propeller(req, &bin, on_input, started)
        }
        OutputFormat::Raw => {
            check_no_gcc_version(req)?;
            check_kernel(req, &bin)?;
            crate::raw::profile_raw(req, &bin, on_input, started)
        }
        OutputFormat::Text | OutputFormat::Extbinary => {
            check_no_gcc_version(req)?;
            check_kernel(req, &bin)?;
            let format = if req.format == OutputFormat::Text {
                Format::Text
            } else {
                Format::ExtBinary
            };
            crate::autofdo::profile_autofdo(req, &bin, format, on_input, started)
        }
    }
}

fn check_no_gcc_version(req: &ProfileRequest) -> Result<(), ProfileError> {
    if req.gcc_version.is_some() {
        return Err(ProfileError::Request(
            "--gcc-version is for --format gcov only".into(),
        ));
    }
    Ok(())
}

/// `--kernel` takes a vmlinux.
fn check_kernel(req: &ProfileRequest, bin: &kfdo_elf::Binary) -> Result<(), ProfileError> {
    if req.kernel && !bin.is_kernel() {
        return Err(ProfileError::Request(format!(
            "{}: --kernel was given but this is not a vmlinux (no _text/_stext at a kernel address); \
             pass the uncompressed vmlinux with debug info, not a bzImage or a module",
            req.binary.display()
        )));
    }
    Ok(())
}
