//! [`ProfileError`]: every way a conversion can fail.

use kfdo_aggregate::AggregateError;

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("{0}")]
    Request(String),
    /// A request that failed on a system call (running a tool it needs, say): the
    /// message says what was asked and the fix, the source is the system's error.
    #[error("{message}")]
    RequestIo {
        message: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Elf(#[from] kfdo_elf::ElfError),
    #[error(transparent)]
    Aggregate(#[from] AggregateError),
    #[error(transparent)]
    Afdo(#[from] kfdo_afdo::AfdoError),
    #[error(transparent)]
    Output(#[from] kfdo_outfile::OutputError),
    #[error(transparent)]
    Bolt(#[from] kfdo_layout::BoltError),
    #[error(transparent)]
    Raw(#[from] kfdo_rawfleet::RawError),
    #[error(transparent)]
    Propeller(#[from] kfdo_layout::propeller::PropellerError),
}
