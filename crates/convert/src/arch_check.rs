//! Recordings of one architecture cannot profile a binary of another: the addresses
//! would be symbolized as whatever the other machine's code happens to be. perf.data
//! says which machine it was recorded on (its ARCH header feature, `uname -m`, which
//! `perf record` and `kfdo record` both write); the binary says what it is (`e_machine`).
//! Checked before any input is read, so nothing is written on a mismatch.

use std::path::Path;

use kfdo_elf::Arch;

use crate::error::ProfileError;
use crate::request::Input;

/// Fails if a perf.data input was recorded on another architecture than `binary`'s.
/// Inputs without the ARCH feature, perf script text, unsymbolized counts and raw
/// Parquet files carry no architecture and pass.
pub(crate) fn check_inputs(
    inputs: &[Input],
    binary: &Path,
    arch: Arch,
) -> Result<(), ProfileError> {
    for input in inputs {
        let Input::PerfData(p) = input else {
            continue;
        };
        // An unreadable file is reported, with its details, by the reader proper.
        let Ok(pd) = kfdo_perf::PerfData::open(p) else {
            continue;
        };
        let Some(name) = pd.arch() else {
            continue;
        };
        let recorded = Arch::from_uname(&name);
        if recorded != Some(arch) {
            let what = match recorded {
                Some(a) => a.to_string(),
                None => name.clone(),
            };
            return Err(ProfileError::Request(format!(
                "{}: recorded on {what} (its ARCH header says \"{name}\"), but {} is an {arch} \
                 binary: these samples are not of its code. Profile the {what} binary that \
                 ran, or record this one (`kfdo record` runs an {arch} program under its own \
                 emulator, chosen from the ELF header)",
                p.display(),
                binary.display(),
            )));
        }
    }
    Ok(())
}
