//! Kernels compared across reboots: `kfdo compare --tag` and `--baseline-tag`.
//!
//! A kernel cannot be interleaved with another within one boot, so each is measured
//! in its own boot under a tag ([`record_tag`]: one variant named by the tag, its
//! session recording the running kernel), and two tags are judged afterwards from the
//! store ([`compare_tags`]) with the statistics of an interleaved comparison, and a
//! warning that the boots' drift is not controlled.
//!
//! A tag is a variant of a benchmark whose sessions carry `"tag"` in their settings;
//! the kernel of each such session is `"running_kernel"` in its environment. Nothing
//! else is added to the store, so `kfdo report` shows tags as ordinary variants.

mod compare;
mod error;
mod keys;
mod record;
mod stored;

pub use compare::{compare_tags, TagCompareRequest, TagComparison};
pub use error::TagError;
pub use keys::{KERNEL_KEY, TAG_KEY};
pub use record::{record_tag, TagOutcome, TagRequest};
pub use stored::{stored_tags, StoredTag};
