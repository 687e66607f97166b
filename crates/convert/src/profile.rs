//! `kfdo profile`: recordings -> a profile of one binary, or one host's raw Parquet
//! file. As llvm-profgen: validate once (the request, the binary, each format's own
//! options, before anything is read), read once (`read`), then generate: one `match`
//! hands the counts to the format's writer.

use std::path::Path;
use std::time::Instant;

use kfdo_afdo::Format;

use crate::error::ProfileError;
use crate::outcome::ProfileOutcome;
use crate::raw_out::RawOutOutcome;
use crate::request::{Output, OutputFormat, ProfileRequest, RawOut};

/// What [`convert`] wrote.
// One per conversion: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Converted {
    Profile(ProfileOutcome),
    RawParquet(RawOutOutcome),
}

/// Converts `req.inputs` into what `output` says. `on_input` hears each input as it is
/// read (for progress). The output is written whole or not at all.
pub fn convert(
    req: &ProfileRequest,
    output: &Output,
    on_input: &mut dyn FnMut(&Path),
) -> Result<Converted, ProfileError> {
    match output {
        Output::Profile => profile(req, on_input).map(Converted::Profile),
        Output::RawParquet(out) => write_raw_parquet(req, out, on_input).map(Converted::RawParquet),
    }
}

/// A profile in `req.format` at `req.output`.
pub fn profile(
    req: &ProfileRequest,
    on_input: &mut dyn FnMut(&Path),
) -> Result<ProfileOutcome, ProfileError> {
    let started = Instant::now();
    let req = &crate::parquet_input::with_recorded_mode(req)?;
    if req.inputs.is_empty() {
        return Err(ProfileError::Request(
            "no input: give --perf-data, --perf-script or --unsymbolized-in".into(),
        ));
    }
    check_modules(req, false)?;
    let bin = open_binary(req, req.format)?;
    let writer = match req.format {
        // BOLT reads perf.data on its own terms and checks its own options.
        OutputFormat::Bolt => return crate::bolt::profile_bolt(req, on_input, started),
        OutputFormat::Gcov => {
            // Before any input is read: which GCC the gcov file is for.
            let (version, release) = crate::gcov::gcov_version(req.gcc_version, &bin)?;
            check_kernel(req, &bin)?;
            Writer::AutoFdo {
                format: Format::Gcov(version),
                sym: kfdo_elf::Symbolizer::new(&bin)?,
                gcc: Some(release),
            }
        }
        OutputFormat::Propeller => {
            check_no_gcc_version(req)?;
            check_kernel(req, &bin)?;
            crate::propeller::check(req, &bin)?;
            Writer::Propeller
        }
        OutputFormat::Unsymbolized => {
            check_no_gcc_version(req)?;
            check_kernel(req, &bin)?;
            Writer::Unsymbolized
        }
        OutputFormat::Text | OutputFormat::Extbinary => {
            check_no_gcc_version(req)?;
            check_kernel(req, &bin)?;
            Writer::AutoFdo {
                format: if req.format == OutputFormat::Text {
                    Format::Text
                } else {
                    Format::ExtBinary
                },
                // Fail before reading any input if the result could not be symbolized.
                sym: kfdo_elf::Symbolizer::new(&bin)?,
                gcc: None,
            }
        }
    };
    let read = crate::read::read(req, &bin, on_input)?;
    match writer {
        Writer::AutoFdo { format, sym, gcc } => {
            let mut outcome =
                crate::autofdo::write_autofdo(req, &bin, format, &sym, read, on_input, started)?;
            outcome.gcc = gcc;
            Ok(outcome)
        }
        Writer::Propeller => crate::propeller::write_propeller(req, &bin, read, started),
        Writer::Unsymbolized => crate::unsymbolized::write_unsymbolized(req, &bin, read, started),
    }
}

/// `kfdo profile --raw-out`: the recordings' counts of `req.binary` as one host's raw
/// Parquet file.
pub fn write_raw_parquet(
    req: &ProfileRequest,
    out: &RawOut,
    on_input: &mut dyn FnMut(&Path),
) -> Result<RawOutOutcome, ProfileError> {
    let started = Instant::now();
    let req = &crate::parquet_input::with_recorded_mode(req)?;
    crate::raw_out::check_inputs(req)?;
    check_modules(req, true)?;
    let bin = open_binary(req, OutputFormat::Unsymbolized)?;
    let read = crate::read::read(req, &bin, on_input)?;
    crate::raw_out::write_raw_out(req, out, &bin, read, started)
}

/// A profile format's writer, made before any input is read.
// One per conversion: its size does not matter.
#[allow(clippy::large_enum_variant)]
enum Writer<'b> {
    /// LLVM's or GCC's sample profile; the symbolizer is made first, so a binary that
    /// cannot be symbolized fails before a long read.
    AutoFdo {
        format: Format,
        sym: kfdo_elf::Symbolizer<'b>,
        gcc: Option<crate::outcome::GccRelease>,
    },
    Propeller,
    Unsymbolized,
}

/// The binary, checked against the recordings' architecture and for symbols
/// (`format` says whether DWARF is needed too), before any input is read.
fn open_binary(
    req: &ProfileRequest,
    format: OutputFormat,
) -> Result<kfdo_elf::Binary, ProfileError> {
    let bin = kfdo_elf::Binary::open(&req.binary)?;
    crate::arch_check::check_inputs(&req.inputs, &req.binary, bin.arch())?;
    crate::stripped::check_symbols(&bin, format)?;
    Ok(bin)
}

/// `--module`: only a sample profile of a kernel merges modules into it; every other
/// output refuses them, with its own reason.
fn check_modules(req: &ProfileRequest, raw_parquet: bool) -> Result<(), ProfileError> {
    if req.modules.is_empty() {
        return Ok(());
    }
    let why = match (raw_parquet, req.format) {
        (true, _) => {
            "--raw-out writes one binary's counts: drop --module (write each .ko's file in its own run)"
        }
        (false, OutputFormat::Bolt) => return Err(crate::bolt::refusal(crate::bolt::NO_KERNEL)),
        (false, OutputFormat::Propeller) => {
            "--format propeller lays out one binary: give each module its own run, without --module"
        }
        (false, OutputFormat::Text | OutputFormat::Extbinary | OutputFormat::Gcov)
            if req.kernel =>
        {
            return Ok(());
        }
        (false, _) => {
            "--module needs --kernel and a symbolized format (unsymbolized counts hold one binary)"
        }
    };
    Err(ProfileError::Request(why.into()))
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::check_modules;
    use crate::request::{OutputFormat, ProfileRequest};

    /// The one `--module` check: a kernel's sample profile takes modules; every other
    /// output refuses them with its own reason.
    #[test]
    fn modules_are_refused_with_each_outputs_reason() {
        let mut req = ProfileRequest::new(Path::new("vmlinux"), Vec::new(), Path::new("out"));
        let refusal =
            |req: &ProfileRequest, raw_parquet: bool| match check_modules(req, raw_parquet) {
                Ok(()) => None,
                Err(e) => Some(e.to_string()),
            };
        // Without --module nothing is refused.
        assert_eq!(refusal(&req, true), None);
        req.modules = vec!["m.ko".into()];
        assert!(refusal(&req, true)
            .unwrap()
            .starts_with("--raw-out writes one binary's counts: drop --module"));
        for format in [
            OutputFormat::Text,
            OutputFormat::Extbinary,
            OutputFormat::Gcov,
        ] {
            req.format = format;
            req.kernel = false;
            assert!(refusal(&req, false)
                .unwrap()
                .starts_with("--module needs --kernel and a symbolized format"));
            req.kernel = true;
            assert_eq!(refusal(&req, false), None);
        }
        req.format = OutputFormat::Unsymbolized;
        assert!(refusal(&req, false)
            .unwrap()
            .starts_with("--module needs --kernel and a symbolized format"));
        req.format = OutputFormat::Propeller;
        assert!(refusal(&req, false)
            .unwrap()
            .starts_with("--format propeller lays out one binary"));
        req.format = OutputFormat::Bolt;
        assert_eq!(
            refusal(&req, false).unwrap(),
            "--format bolt does not take --kernel or --module (BOLT on vmlinux is experimental); \
             BOLT's profile is built from perf.data recordings of one binary"
        );
    }
}
