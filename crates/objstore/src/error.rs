//! [`Error`]: every way talking to an object store can fail, each naming the s3:// URL
//! or the endpoint and what to do.

use std::path::PathBuf;

/// Why an object-store operation failed.
///
/// [`Error::Unreachable`] (nothing answered) and [`Error::Status`] (the store answered
/// with an error) are kept apart so that a caller can tell a store that is down or
/// misaddressed from one that refuses the request.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Text that is not an `s3://BUCKET/KEY` URL.
    #[error("`{text}` is not an S3 URL ({why}): write s3://BUCKET/KEY or s3://BUCKET/PREFIX/ (s3a:// is read the same)")]
    BadUrl { text: String, why: String },
    /// The environment does not say how to reach the store (credentials, endpoint).
    #[error("{0}")]
    Config(String),
    /// Nothing answered: connection refused, the host name unknown, a timeout, a
    /// connection cut.
    #[error(
        "cannot reach the object store at {endpoint}: {detail}; check that it runs and that \
         AWS_ENDPOINT_URL (unset: AWS itself) and AWS_REGION name it"
    )]
    Unreachable { endpoint: String, detail: String },
    /// The store answered with an error: the HTTP status, and S3's error `Code` and
    /// `Message` from the body (a response without a body gets the status's name).
    #[error(
        "{op} {url}: HTTP {status} {code}: {}{}",
        .message.trim_end_matches('.'),
        hint(*.status, .code)
    )]
    Status {
        op: &'static str,
        url: String,
        status: u16,
        code: String,
        message: String,
    },
    /// The store answered, but not as S3 does (a malformed listing, a body of the wrong
    /// size, a broken response).
    #[error("{op} {url}: {detail}")]
    Protocol {
        op: &'static str,
        url: String,
        detail: String,
    },
    /// A URL that names no object, and no object of the kind asked for under it.
    #[error(
        "{url}: {what}: point at the prefix the files were uploaded to (`aws s3 ls {prefix}` \
         lists what is there)"
    )]
    Empty {
        url: String,
        what: String,
        prefix: String,
    },
    /// A local file could not be read (an upload) or written (a download).
    #[error("{}: {what}", path.display())]
    Local { path: PathBuf, what: String },
}

impl Error {
    /// The store could not be reached at all (as opposed to answering with an error).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, Error::Unreachable { .. })
    }

    /// Worth trying again later: the store was unreachable, busy or failed inside
    /// (HTTP 5xx, 429, S3's `SlowDown` and `RequestTimeout`).
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Unreachable { .. } => true,
            Error::Status { status, code, .. } => {
                *status >= 500 || *status == 429 || code == "SlowDown" || code == "RequestTimeout"
            }
            _ => false,
        }
    }

    /// The HTTP status the store answered with, if it answered with an error.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// What to do about an error answer, after the store's own message.
fn hint(status: u16, code: &str) -> &'static str {
    match code {
        "InvalidAccessKeyId"
        | "SignatureDoesNotMatch"
        | "InvalidToken"
        | "ExpiredToken"
        | "TokenRefreshRequired" => {
            "; check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for \
             temporary credentials) for this store"
        }
        "RequestTimeTooSkewed" => "; this machine's clock is off: set it right (NTP)",
        "AuthorizationHeaderMalformed" | "PermanentRedirect" | "IncorrectEndpoint" => {
            "; the bucket is in another region or behind another endpoint: set AWS_REGION \
             (or AWS_ENDPOINT_URL) to the bucket's"
        }
        "NoSuchBucket" => "; create the bucket, or check the bucket name in the URL",
        "NoSuchKey" | "NotFound" => "; no object under this key: check the URL",
        "BadDigest" | "InvalidDigest" => {
            "; the body that arrived is not the one sent (cut short or changed in transit, \
             or the file changed while it was sent): send it again"
        }
        "AccessDenied" | "Forbidden" => {
            "; these credentials may not do this: check the bucket's policy and the key's \
             permissions"
        }
        _ if status >= 500 || status == 429 => "; the store is busy or failing: try again later",
        _ => "",
    }
}
