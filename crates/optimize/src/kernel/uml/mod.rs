//! Native time for kernel verdicts: each variant's User-Mode Linux twin (`twin`), the
//! same source, fragments and profile built as `ARCH=um` (`config`, `build`), booted on
//! the host with the evaluation workloads (`run`) and judged on its host CPU time and the
//! workloads' own time (`judge`), with how much of the profile applies to it
//! (`coverage`), rendered for the summary (`summary`). The counters of the QEMU boots
//! say what changed in the real kernel; the twins say what that is worth in time for
//! the generic code, on any Linux machine.

pub mod build;
pub mod config;
pub mod coverage;
pub mod judge;
pub mod run;
pub mod summary;
pub mod twin;
