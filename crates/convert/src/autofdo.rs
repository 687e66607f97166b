//! LLVM's AutoFDO sample profiles (text, extensible binary) and GCC's (gcov): the raw
//! counts of the binary, and of each kernel module asked for, symbolized with DWARF
//! (`kfdo-afdo`).

use std::path::Path;
use std::time::Instant;

use kfdo_afdo::builder::{
    build_profile, BuildStats, Discriminators, Functions, Mode, FS_DISCRIMINATOR_SYMBOL,
};
use kfdo_afdo::Format;
use kfdo_aggregate::target::TargetBinary;
use kfdo_aggregate::RawProfile;

use crate::error::ProfileError;
use crate::outcome::{ModuleOutcome, ProfileOutcome};
use crate::read::{counted_outcome, read_inputs, require_counts, Read};
use crate::request::{OutputFormat, ProfileRequest};

/// Writes the sample profile of `req.binary` (and of `req.modules`) as `format`, from
/// the counts the read step found; `sym` was made before any input was read, so a
/// binary that cannot be symbolized fails first.
pub(crate) fn write_autofdo(
    req: &ProfileRequest,
    bin: &kfdo_elf::Binary,
    format: Format,
    sym: &kfdo_elf::Symbolizer<'_>,
    read: Read,
    on_input: &mut dyn FnMut(&Path),
    started: Instant,
) -> Result<ProfileOutcome, ProfileError> {
    let Read { code, raw, inputs } = read;
    require_counts(req, &raw)?;
    let mut out = kfdo_outfile::AtomicOutput::create(&req.output)?;
    let mut outcome = counted_outcome(req, inputs, &raw);
    let (mut profile, stats) = symbolize(req, &req.binary, bin, &raw, &code, sym)?;
    for m in &req.modules {
        let (p, part) = module_profile(req, m, on_input)?;
        profile.merge(&p);
        outcome.modules.push(part);
    }
    kfdo_afdo::write_profile(&profile, format, std::io::BufWriter::new(out.file()))
        .map_err(|e| out.error(e))?;
    outcome.functions = profile.len();
    outcome.total_samples = profile.total();
    outcome.build = Some(stats);
    outcome.locations_with_discriminators = Some(profile.locations_with_discriminators());
    out.commit()?;
    outcome.seconds = started.elapsed().as_secs_f64();
    Ok(outcome)
}

/// The sample profile of one binary's raw counts.
fn symbolize(
    req: &ProfileRequest,
    path: &Path,
    bin: &kfdo_elf::Binary,
    raw: &RawProfile,
    code: &kfdo_elf::Code,
    sym: &kfdo_elf::Symbolizer<'_>,
) -> Result<(kfdo_afdo::Profile, BuildStats), ProfileError> {
    let functions = Functions::new(
        sym.function_ranges()
            .iter()
            .map(|f| (f.start, f.end, &*f.name, f.is_func_entry)),
    );
    let mode = if req.ip_only { Mode::IpOnly } else { Mode::Lbr };
    // As llvm-profgen: clang's marker symbol says the discriminators are
    // flow-sensitive (kbuild's CONFIG_AUTOFDO_CLANG builds).
    // GCC's discriminators are plain block numbers: a gcov profile is for GCC.
    let disc = if req.format == OutputFormat::Gcov {
        Discriminators::Gcc
    } else if bin.symbol_address(FS_DISCRIMINATOR_SYMBOL).is_some() {
        Discriminators::FlowSensitive
    } else {
        Discriminators::Encoded
    };
    let (profile, stats) = build_profile(raw, code, sym, &functions, mode, disc);
    if profile.is_empty() {
        return Err(ProfileError::Request(format!(
            "{}: the samples hit {} instructions, none with line info: was it built with -g?",
            path.display(),
            stats.instructions
        )));
    }
    Ok((profile, stats))
}

/// A kernel module's profile, from the same inputs: its samples are those of the
/// recording's mapping of the `.ko` (perf's module MMAP, or kfdo's for an emulated guest).
fn module_profile(
    req: &ProfileRequest,
    path: &Path,
    on_input: &mut dyn FnMut(&Path),
) -> Result<(kfdo_afdo::Profile, ModuleOutcome), ProfileError> {
    let bin = kfdo_elf::Binary::open(path)?;
    if !bin.is_relocatable() {
        return Err(ProfileError::Request(format!(
            "{}: --module takes a kernel module (a relocatable .ko), not this ELF type",
            path.display()
        )));
    }
    let sym = kfdo_elf::Symbolizer::new(&bin)?;
    let code = kfdo_elf::Code::new(&bin)?;
    let target = TargetBinary::new(&bin, None, false);
    let (raw, inputs) = read_inputs(req, &bin, &target, &code, on_input)?;
    if raw.is_empty() {
        return Err(ProfileError::Request(format!(
            "no samples: the inputs hold no range or branch counts for the module {}",
            path.display()
        )));
    }
    let (profile, _) = symbolize(req, path, &bin, &raw, &code, &sym)?;
    let part = ModuleOutcome {
        module: path.display().to_string(),
        inputs,
        functions: profile.len(),
        total_samples: profile.total(),
    };
    Ok((profile, part))
}
