//! The HTTP side: an agent with the store's timeouts, and a failed call sorted into
//! "nothing answered" ([`Error::Unreachable`]), "the store said no" ([`Error::Status`])
//! or "the answer made no sense" ([`Error::Protocol`]).

use std::io;
use std::time::Duration;

use ureq::http::Response;
use ureq::Body;

use crate::error::Error;
use crate::xml;

/// The most of an error body read: S3's are a few hundred bytes, and a proxy's page
/// need not be read whole to be quoted.
const ERROR_BODY_LIMIT: u64 = 64 * 1024;

/// An agent whose calls give up after `connect` to connect and `request` in all.
///
/// Error statuses come back as responses (their bodies hold S3's code and message), and
/// redirects are not followed: a signed URL is valid for its own host only, and S3's
/// redirect for a bucket in another region is an error body naming the region.
pub fn agent(connect: Duration, request: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_connect(Some(connect))
        .timeout_global(Some(request))
        .build()
        .into()
}

/// One call, as its errors name it: the operation, the object's s3:// URL and the
/// endpoint.
pub struct Call<'a> {
    pub op: &'static str,
    pub url: String,
    pub endpoint: &'a str,
}

impl Call<'_> {
    /// The request could not be sent or its response not received.
    pub fn failed(&self, e: ureq::Error) -> Error {
        match e {
            // Before an answer, an IO error is the way there: the name not resolved
            // (which std reports as an uncategorized error), the connection refused,
            // reset or timed out.
            ureq::Error::Io(e) => {
                let text = e.to_string();
                if text.contains("failed to lookup address") {
                    self.unreachable(format!("the host name is not known (DNS: {text})"))
                } else {
                    self.unreachable(text)
                }
            }
            ureq::Error::Timeout(t) => self.unreachable(format!("no answer in time ({t} timeout)")),
            ureq::Error::HostNotFound => {
                self.unreachable("the host name is not known (DNS)".into())
            }
            ureq::Error::ConnectionFailed => self.unreachable("the connection failed".into()),
            other => self.protocol(other.to_string()),
        }
    }

    /// Reading or sending a body failed: a cut or stalled connection is "unreachable"
    /// (worth a retry), anything else a protocol error.
    pub fn io_failed(&self, e: io::Error) -> Error {
        if let Some(inner) = e.get_ref().and_then(|i| i.downcast_ref::<ureq::Error>()) {
            if matches!(
                inner,
                ureq::Error::Timeout(_) | ureq::Error::HostNotFound | ureq::Error::ConnectionFailed
            ) {
                return self.unreachable(inner.to_string());
            }
        }
        use io::ErrorKind::*;
        match e.kind() {
            ConnectionRefused | ConnectionReset | ConnectionAborted | NotConnected | BrokenPipe
            | TimedOut | UnexpectedEof | HostUnreachable | NetworkUnreachable
            | AddrNotAvailable | NetworkDown => {
                let what = if e.kind() == UnexpectedEof {
                    "the connection closed before the whole answer arrived".to_string()
                } else {
                    e.to_string()
                };
                self.unreachable(what)
            }
            _ => self.protocol(e.to_string()),
        }
    }

    /// An error answer: its status, and S3's code and message from the body (or the
    /// status's name and the body's first words, for a body that is not S3's).
    pub fn status(&self, resp: &mut Response<Body>) -> Error {
        let status = resp.status();
        let body = resp
            .body_mut()
            .with_config()
            .limit(ERROR_BODY_LIMIT)
            .lossy_utf8(true)
            .read_to_string()
            .unwrap_or_default();
        let (code, message) = xml::code_and_message(&body);
        let code = code.unwrap_or_else(|| {
            status
                .canonical_reason()
                .map(|r| r.replace([' ', '-'], ""))
                .unwrap_or_else(|| format!("HTTP{}", status.as_u16()))
        });
        let message = message.unwrap_or_else(|| {
            let e = xml::excerpt(&body);
            if e.is_empty() {
                "(the answer had no body)".into()
            } else {
                e
            }
        });
        Error::Status {
            op: self.op,
            url: self.url.clone(),
            status: status.as_u16(),
            code,
            message,
        }
    }

    pub fn protocol(&self, detail: String) -> Error {
        Error::Protocol {
            op: self.op,
            url: self.url.clone(),
            detail: format!("{detail} (from {})", self.endpoint),
        }
    }

    fn unreachable(&self, what: String) -> Error {
        Error::Unreachable {
            endpoint: self.endpoint.to_string(),
            detail: format!("{} {}: {what}", self.op, self.url),
        }
    }
}
