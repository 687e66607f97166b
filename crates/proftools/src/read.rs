//! Reading a profile of any format kfdo reads, with the error the tools report.

use std::path::Path;

use crate::error::ToolError;

/// Read a profile, any format `kfdo_afdo` reads; errors name the file and the place.
pub fn read(path: &Path) -> Result<kfdo_afdo::Profile, ToolError> {
    kfdo_afdo::read_profile(path).map_err(ToolError::Read)
}
