//! Why a tag could not be recorded or compared.

use std::path::PathBuf;

use crate::compare::CompareError;
use crate::running_kernel::RunningKernel;
use crate::store::StoreError;

/// Why a tag could not be recorded or compared. Each message names the store and
/// says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TagError {
    /// The request itself is wrong; the message says what to change.
    #[error("{0}")]
    Request(String),
    #[error("results store {} does not exist: record each tag first, booted into its kernel, \
             with `kfdo compare --tag NAME --store {} -- CMD`", store.display(), store.display())]
    StoreMissing { store: PathBuf },
    #[error("results store {}: no tag '{tag}'; {}", store.display(), known_tags(known))]
    UnknownTag {
        store: PathBuf,
        tag: String,
        /// "'benchmark': tag, tag" per benchmark that has tags.
        known: Vec<String>,
    },
    #[error("results store {}: tag '{tag}' of benchmark '{benchmark}' has {runs} timed run(s), \
             and a comparison needs at least 2; add runs with `kfdo compare --tag {tag} --store {} \
             --benchmark {benchmark} -- CMD` booted into its kernel", store.display(), store.display())]
    TooFewRuns {
        store: PathBuf,
        tag: String,
        benchmark: String,
        runs: usize,
    },
    #[error("results store {}: {problem}; {}", store.display(), benchmarks_with_both(candidates))]
    Benchmark {
        store: PathBuf,
        problem: String,
        /// Benchmarks that have both tags.
        candidates: Vec<String>,
    },
    #[error("results store {}: tag '{tag}' was recorded on kernel {stored}, but kernel {running} \
             is running, and a tag names one kernel; record this kernel under another tag \
             (--tag NAME), or add its runs to '{tag}' anyway with --force-tag", store.display())]
    KernelChanged {
        store: PathBuf,
        tag: String,
        // Boxed: two kernels would make every Result of this error large.
        stored: Box<RunningKernel>,
        running: Box<RunningKernel>,
    },
    #[error("results store {}: tag '{tag}' of benchmark '{benchmark}' ran `{stored}`, not `{given}`; \
             every kernel must run the same workload: give the same command, or another \
             --benchmark", store.display())]
    CommandChanged {
        store: PathBuf,
        tag: String,
        benchmark: String,
        stored: String,
        given: String,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Boxed: a comparison's error is large, and a tag's errors are mostly small.
    #[error(transparent)]
    Compare(Box<CompareError>),
    #[error("cannot write the JSON verdict: {0}")]
    Json(String),
}

impl From<CompareError> for TagError {
    fn from(e: CompareError) -> TagError {
        TagError::Compare(Box::new(e))
    }
}

fn known_tags(known: &[String]) -> String {
    if known.is_empty() {
        "it holds no tags yet (record one with `--tag NAME -- CMD`)".into()
    } else {
        format!("its tags are {}", known.join("; "))
    }
}

fn benchmarks_with_both(candidates: &[String]) -> String {
    if candidates.is_empty() {
        "no benchmark has both tags: record the missing one with `--tag NAME --benchmark NAME -- CMD`"
            .into()
    } else {
        format!(
            "give --benchmark NAME with one that has both: {}",
            candidates.join(", ")
        )
    }
}
