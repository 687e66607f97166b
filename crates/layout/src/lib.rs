//! kfdo-layout: profiles for the tools that lay code out after compilation, built from
//! the branch samples kfdo already reads.
//!
//! * [`bolt`]: BOLT's fdata (`llvm-bolt -data=`), the records perf2bolt writes: taken
//!   branches and the fall-throughs between basic blocks, per function, by offset.

pub mod bolt;
pub mod propeller;

pub use bolt::{bolt_profile, BoltError, BoltProfile, BoltStats};
