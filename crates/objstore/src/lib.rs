//! A small synchronous S3 client: what kfdo's fleet loop needs of an object store
//! (AWS S3, or any S3-compatible store such as SeaweedFS, MinIO or Ceph), and nothing
//! more.
//!
//! [`Store`] puts a file (with its MD5, so a body cut short is refused, never stored),
//! heads, lists (every page), downloads (whole or not at all) and deletes objects of one
//! bucket, one request each and no retries: the caller decides what is worth repeating.
//! Requests are signed by `rusty-s3` (SigV4 presigned URLs, no IO) and sent by `ureq`
//! (blocking, rustls for https), so there is no async runtime. [`Settings`] come from
//! the variables every S3 tool reads (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`). Every [`Error`] names
//! the s3:// URL or the endpoint and what to do, and tells "the store could not be
//! reached" ([`Error::is_unreachable`]) from "the store answered with an error"
//! ([`Error::Status`]).
//!
//! # Layers
//!
//! Each module uses only the layers below it; modules in one layer are
//! independent of each other (the `layering` test checks every `crate::` /
//! `super::` path against this list):
//!
//! 1. `error` ([`Error`]).
//! 2. `s3url` ([`S3Url`]), `config` ([`Settings`] from the environment), `xml` (S3's
//!    error code and message).
//! 3. `transport`: the HTTP agent and its timeouts, a failed call sorted into
//!    unreachable, error answer or protocol error.
//! 4. `client` ([`Store`]): the operations.
//! 5. `fetch`: the objects a URL names, downloaded a few at a time with retries
//!    ([`objects`], [`download_all`]).

mod client;
mod config;
mod error;
mod fetch;
mod s3url;
mod transport;
mod xml;

pub use client::{ObjectInfo, Store, CONNECT_TIMEOUT, REQUEST_TIMEOUT};
pub use config::{Addressing, Settings, DEFAULT_REGION};
pub use error::Error;
pub use fetch::{download_all, objects, Fetch, PARALLEL};
pub use s3url::S3Url;

#[cfg(test)]
mod layering {
    /// The `# Layers` section of the crate doc is the layer table: every `crate::` /
    /// `super::` path under `src/` must point down it.
    #[test]
    fn modules_only_use_lower_layers() {
        kfdo_testkit::layering::assert_documented_layers(env!("CARGO_MANIFEST_DIR"));
    }
}
