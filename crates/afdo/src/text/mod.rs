//! LLVM's text sample-profile format, as `llvm-profdata merge --sample --text`
//! and `llvm-profgen --format=text` print it:
//!
//! ```text
//! main:1200:10              name:total:head (top level only)
//!  1: 10                    offset[.discriminator]: count [target:count ...]
//!  2.1: 20 foo:15 bar:5     call targets by count descending, then name
//!  3: inl:300               inlinee at a call site: name:total (no head)
//!   1: 300                  its body, one more space of indentation
//! ```
//!
//! Within a function, all body lines come first (by location), then the
//! inlinees (by location, then callee name). Top-level functions are sorted
//! by total samples descending, then name.

mod reader;
mod writer;

pub use reader::{parse_text, read_text};
pub use writer::write_text;
