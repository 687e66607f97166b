//! `kfdo compare` as one typed call: run the arms interleaved, store every run,
//! count each arm once, and judge them from everything stored for the benchmark.
//!
//! The caller builds a [`CompareRequest`], passes a stop flag (set it from a Ctrl-C
//! handler: finished runs are kept) and a sink for [`CompareEvent`]s (progress, and
//! the lines a user should see while it runs), and gets the verdict back.

mod counting;
mod flow;
mod request;
mod session;
mod timing;
mod verdict;

pub(crate) use flow::compare_with;
pub use flow::{compare, compare_pooled, compare_trials};
pub use request::{default_benchmark, CompareError, CompareEvent, CompareOutcome, CompareRequest};
pub(crate) use session::SessionExtras;
