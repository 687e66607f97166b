//! [`Store`]: one bucket's objects put, headed, listed, fetched and deleted, one
//! request each (listing: one per page). No retries here: a caller knows whether an
//! operation is worth repeating ([`Error::is_transient`]).

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use rusty_s3::actions::ListObjectsV2;
use rusty_s3::{Bucket, Credentials, S3Action, UrlStyle};
use ureq::http::Response;
use ureq::Body;

use crate::config::{Addressing, Settings};
use crate::error::Error;
use crate::s3url::S3Url;
use crate::transport::{agent, Call};

/// One object of a listing.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectInfo {
    pub key: String,
    pub size: u64,
}

/// The default time to connect.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time for a whole request, body included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Keys per listing page: S3's own maximum.
const LIST_PAGE: usize = 1000;

/// A bucket of an S3-compatible store, with the credentials to use it.
#[derive(Clone)]
pub struct Store {
    bucket: Bucket,
    credentials: Credentials,
    endpoint: String,
    agent: ureq::Agent,
    request_timeout: Duration,
    list_page: usize,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("bucket", &self.bucket.name())
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// The bucket `bucket` at the store and with the credentials the environment names
    /// ([`Settings::from_env`]: `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`).
    pub fn from_env(bucket: &str) -> Result<Store, Error> {
        Store::new(bucket, Settings::from_env(bucket)?)
    }

    /// The bucket `bucket` with explicit settings.
    pub fn new(bucket: &str, settings: Settings) -> Result<Store, Error> {
        let bad = |why: String| {
            Error::Config(format!(
                "cannot address s3://{bucket}/ at {}: {why}; check AWS_ENDPOINT_URL and the \
                 bucket name",
                settings.endpoint
            ))
        };
        let endpoint = url::Url::parse(&settings.endpoint).map_err(|e| bad(e.to_string()))?;
        let style = match settings.addressing {
            Addressing::Path => UrlStyle::Path,
            Addressing::VirtualHost => UrlStyle::VirtualHost,
        };
        let b = Bucket::new(endpoint, style, bucket.to_string(), settings.region.clone())
            .map_err(|e| bad(format!("{e:?}")))?;
        let credentials = match settings.session_token {
            Some(token) => Credentials::new_with_token(
                settings.access_key_id,
                settings.secret_access_key,
                token,
            ),
            None => Credentials::new(settings.access_key_id, settings.secret_access_key),
        };
        Ok(Store {
            bucket: b,
            credentials,
            endpoint: settings.endpoint,
            agent: agent(CONNECT_TIMEOUT, REQUEST_TIMEOUT),
            request_timeout: REQUEST_TIMEOUT,
            list_page: LIST_PAGE,
        })
    }

    /// The same store, each request giving up after `connect` to connect and `request`
    /// in all (body included).
    pub fn with_timeout(mut self, connect: Duration, request: Duration) -> Store {
        self.agent = agent(connect, request);
        self.request_timeout = request;
        self
    }

    /// The same store, listing `keys` keys per request (at least 1): small pages test
    /// the continuation of a listing.
    pub fn with_list_page(mut self, keys: usize) -> Store {
        self.list_page = keys.clamp(1, LIST_PAGE);
        self
    }

    pub fn bucket(&self) -> &str {
        self.bucket.name()
    }

    /// The endpoint requests go to (`https://s3.REGION.amazonaws.com` for AWS).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// `s3://BUCKET/KEY`, as messages name an object.
    pub fn url(&self, key: &str) -> S3Url {
        S3Url {
            bucket: self.bucket.name().to_string(),
            key: key.to_string(),
        }
    }

    /// How long a signed URL stays valid: past the request's own timeout, so a request
    /// that starts in time is never refused as expired.
    fn expiry(&self) -> Duration {
        self.request_timeout + Duration::from_secs(300)
    }

    fn call(&self, op: &'static str, key: &str) -> Call<'_> {
        Call {
            op,
            url: self.url(key).to_string(),
            endpoint: &self.endpoint,
        }
    }

    /// One PUT of the file's bytes under `key`.
    ///
    /// The request carries the body's MD5 (`Content-MD5`, signed), so a store that
    /// receives other bytes than were read here (cut short, changed in transit, the
    /// file changed while it was sent) refuses them with `BadDigest` instead of storing
    /// a partial object. The answer's ETag is not compared: with server-side encryption
    /// by KMS it is not the body's MD5.
    pub fn put_file(&self, key: &str, path: &Path) -> Result<(), Error> {
        let local = |what: String| Error::Local {
            path: path.to_path_buf(),
            what,
        };
        let mut file =
            File::open(path).map_err(|e| local(format!("cannot open to upload: {e}")))?;
        let mut md5 = md5::Context::new();
        let mut buf = vec![0u8; 1 << 16];
        let mut len = 0u64;
        loop {
            let n = file
                .read(&mut buf)
                .map_err(|e| local(format!("cannot read to upload: {e}")))?;
            if n == 0 {
                break;
            }
            md5.consume(&buf[..n]);
            len += n as u64;
        }
        drop(file);
        // Opened again for the body: ureq sends exactly the length the file has now
        // (Content-Length from its metadata), and the digest catches any difference.
        let file = File::open(path).map_err(|e| local(format!("cannot open to upload: {e}")))?;
        let now = file
            .metadata()
            .map_err(|e| local(format!("cannot stat to upload: {e}")))?
            .len();
        if now != len {
            return Err(local(format!(
                "changed while it was being uploaded ({len} bytes read, now {now}): upload it \
                 again once it is complete"
            )));
        }
        self.put(key, file, md5.compute().0)
    }

    /// One PUT of `bytes` under `key` (with `Content-MD5`, as [`Store::put_file`]).
    pub fn put_bytes(&self, key: &str, bytes: &[u8]) -> Result<(), Error> {
        self.put(key, bytes, md5::compute(bytes).0)
    }

    fn put(&self, key: &str, body: impl ureq::AsSendBody, md5: [u8; 16]) -> Result<(), Error> {
        let call = self.call("PUT", key);
        let digest = base64::engine::general_purpose::STANDARD.encode(md5);
        let mut action = self.bucket.put_object(Some(&self.credentials), key);
        action.headers_mut().insert("content-md5", digest.clone());
        let signed = action.sign(self.expiry());
        let mut resp = self
            .agent
            .put(signed.as_str())
            .header("content-md5", &digest)
            .send(body)
            .map_err(|e| call.failed(e))?;
        expect_success(&call, &mut resp)
    }

    /// The object's size, or None when there is no object under `key` (404).
    pub fn head(&self, key: &str) -> Result<Option<u64>, Error> {
        let call = self.call("HEAD", key);
        let signed = self
            .bucket
            .head_object(Some(&self.credentials), key)
            .sign(self.expiry());
        let mut resp = self
            .agent
            .head(signed.as_str())
            .call()
            .map_err(|e| call.failed(e))?;
        if resp.status().as_u16() == 404 {
            return Ok(None);
        }
        if !resp.status().is_success() {
            return Err(call.status(&mut resp));
        }
        content_length(&resp)
            .map(Some)
            .ok_or_else(|| call.protocol("the answer has no Content-Length".into()))
    }

    /// Every object whose key starts with `prefix` (ListObjectsV2, page after page),
    /// sorted by key.
    pub fn list(&self, prefix: &str) -> Result<Vec<ObjectInfo>, Error> {
        let call = self.call("LIST", prefix);
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut action = ListObjectsV2::new(&self.bucket, Some(&self.credentials));
            action.with_prefix(prefix);
            action.with_max_keys(self.list_page);
            if let Some(t) = &token {
                action.with_continuation_token(t.clone());
            }
            let signed = action.sign(self.expiry());
            let mut resp = self
                .agent
                .get(signed.as_str())
                .call()
                .map_err(|e| call.failed(e))?;
            if !resp.status().is_success() {
                return Err(call.status(&mut resp));
            }
            let text = resp
                .body_mut()
                .with_config()
                .limit(64 << 20)
                .read_to_string()
                .map_err(|e| call.failed(e))?;
            let page = ListObjectsV2::parse_response(&text)
                .map_err(|e| call.protocol(format!("not a ListObjectsV2 answer ({e})")))?;
            for c in page.contents {
                let Some(size) = c.size else {
                    return Err(call.protocol(format!("the listing gives no Size for `{}`", c.key)));
                };
                out.push(ObjectInfo { key: c.key, size });
            }
            match page.next_continuation_token {
                // A store that hands back the token it was given would list forever.
                Some(next) if token.as_deref() == Some(next.as_str()) => {
                    return Err(call.protocol(format!(
                        "the listing gave the same continuation token twice (`{next}`)"
                    )));
                }
                Some(next) => token = Some(next),
                None => break,
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// Downloads the object under `key` to `dest`: written to a temporary name beside
    /// it and renamed only once complete, its size checked against the answer's
    /// Content-Length, so `dest` is the whole object or is not written.
    pub fn get_to_file(&self, key: &str, dest: &Path) -> Result<(), Error> {
        let call = self.call("GET", key);
        let signed = self
            .bucket
            .get_object(Some(&self.credentials), key)
            .sign(self.expiry());
        let mut resp = self
            .agent
            .get(signed.as_str())
            .call()
            .map_err(|e| call.failed(e))?;
        if !resp.status().is_success() {
            return Err(call.status(&mut resp));
        }
        let expected = content_length(&resp);
        let mut out = kfdo_outfile::AtomicOutput::create(dest).map_err(|e| Error::Local {
            path: dest.to_path_buf(),
            what: e.message,
        })?;
        let local = |e: std::io::Error| Error::Local {
            path: dest.to_path_buf(),
            what: format!("cannot write the download: {e} (check the disk space)"),
        };
        let mut reader = resp.body_mut().as_reader();
        let mut buf = vec![0u8; 1 << 16];
        let mut got = 0u64;
        loop {
            let n = reader.read(&mut buf).map_err(|e| call.io_failed(e))?;
            if n == 0 {
                break;
            }
            out.file().write_all(&buf[..n]).map_err(local)?;
            got += n as u64;
        }
        if let Some(len) = expected {
            if got != len {
                return Err(call.protocol(format!(
                    "{got} bytes arrived of the {len} the answer announced: download it again"
                )));
            }
        }
        out.file().flush().map_err(local)?;
        out.commit().map_err(|e| Error::Local {
            path: dest.to_path_buf(),
            what: e.message,
        })
    }

    /// Deletes the object under `key` (no error when there is none: S3 answers alike).
    pub fn delete(&self, key: &str) -> Result<(), Error> {
        let call = self.call("DELETE", key);
        let signed = self
            .bucket
            .delete_object(Some(&self.credentials), key)
            .sign(self.expiry());
        let mut resp = self
            .agent
            .delete(signed.as_str())
            .call()
            .map_err(|e| call.failed(e))?;
        expect_success(&call, &mut resp)
    }
}

fn expect_success(call: &Call<'_>, resp: &mut Response<Body>) -> Result<(), Error> {
    if resp.status().is_success() {
        Ok(())
    } else {
        Err(call.status(resp))
    }
}

/// The answer's Content-Length, when it has a valid one.
fn content_length(resp: &Response<Body>) -> Option<u64> {
    resp.headers()
        .get("content-length")?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}
