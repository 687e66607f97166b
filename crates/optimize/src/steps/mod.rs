//! The step core both pipelines (programs, kernels) stand on: the cache (`cache`:
//! keys and content hashes), a step's log and commands (`exec`), the progress display
//! (`progress`), the run's plan of steps (`planned`), the engine that runs a step unless the cache holds it (`engine`), a
//! step that writes one file (`profile`), the steps and notes both pipelines take
//! (`llvm_profgen`, `agree`, `gcc_note`), recipe-file parsing (`recipe_file`), the
//! output directory kfdo claims as its own (`output_dir`), the bundled scripts (`scripts`)
//! and what an interrupted run stops and says
//! (`interrupt`). Nothing here knows programs or kernels.

pub mod agree;
pub mod cache;
pub mod engine;
pub mod exec;
pub mod gcc_note;
pub mod interrupt;
pub mod llvm_profgen;
pub mod output_dir;
pub mod planned;
pub mod profile;
pub mod progress;
pub mod recipe_file;
pub mod scripts;

pub use engine::{fresh_dir, tool_identity, Steps};
pub use planned::{Opt, StepList};
pub use profile::ProfileFile;
