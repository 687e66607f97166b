//! kfdo-outfile: every file kfdo writes is complete or absent.
//!
//! An output is written to a temporary sibling (same directory, so the rename cannot
//! cross file systems) and renamed over its name only when complete: a failure, a
//! panic or Ctrl-C never leaves a partial profile, report or perf.data behind. The
//! temporary file gets the mode any other tool's output would (0666 less the umask,
//! which open(2) applies), not tempfile's 0600. Errors name the file or directory and
//! what to check.
//!
//! # Layers
//!
//! Each module uses only the layers below it; modules in one layer are
//! independent of each other (the `layering` test checks every `crate::` /
//! `super::` path against this list):
//!
//! 1. `atomic`: [`OutputError`] and the writer ([`AtomicOutput`], [`write`]).
//! 2. `inputs` (no output over an input: [`refuse_overwriting_inputs`]) and `writable`
//!    (an output that can be written at all: [`check_writable`]).
//! 3. `commands` (no output over a file that a command kfdo runs names:
//!    [`refuse_overwriting_command_files`]).
//!
//! [`check_outputs`], the check every command runs before its work, uses both.

mod atomic;
mod commands;
mod inputs;
mod writable;

use std::path::Path;

pub use atomic::{
    create_error, parent_dir, temp_in, write, write_readable, AtomicOutput, OutputError,
};
pub use commands::{
    files_named_by, program_path, refuse_overwriting_command_files, CommandLine, NamedFile,
};
pub use inputs::{refuse_output_inside_input_dirs, refuse_overwriting_inputs, Out};
pub use writable::check_writable;

/// What every command checks before it does any work: no output is one of its inputs
/// (the same path or the same file), and each output can be written.
pub fn check_outputs(outputs: &[Out], inputs: &[&Path]) -> Result<(), OutputError> {
    refuse_overwriting_inputs(outputs, inputs)?;
    for out in outputs {
        check_writable(out.option, out.path)?;
    }
    Ok(())
}

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
