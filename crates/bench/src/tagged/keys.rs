//! Where a tagged session is marked in the store: its settings and environment keys.

/// The settings key of a tagged session: the tag.
pub const TAG_KEY: &str = "tag";
/// The environment key of a tagged session: the [`RunningKernel`](crate::running_kernel::RunningKernel).
pub const KERNEL_KEY: &str = "running_kernel";
