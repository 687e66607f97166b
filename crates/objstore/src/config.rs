//! [`Settings`]: where the store is and who we are, from the variables every S3 tool
//! reads (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, ...).

use crate::error::Error;

/// How requests address a bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addressing {
    /// `https://BUCKET.s3.REGION.amazonaws.com/KEY`: what AWS wants.
    VirtualHost,
    /// `ENDPOINT/BUCKET/KEY`: what every S3-compatible store (SeaweedFS, MinIO, Ceph)
    /// understands without DNS set up for it.
    Path,
}

/// The endpoint, region and credentials of a store.
#[derive(Clone, PartialEq, Eq)]
pub struct Settings {
    /// `http(s)://host[:port]`, no trailing slash.
    pub endpoint: String,
    pub addressing: Addressing,
    pub region: String,
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

/// Credentials never go into logs or error messages.
impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("endpoint", &self.endpoint)
            .field("addressing", &self.addressing)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

/// The region when none is set: where AWS's own tools default to.
pub const DEFAULT_REGION: &str = "us-east-1";

impl Settings {
    /// From the process's environment; see [`Settings::from_lookup`].
    pub fn from_env(bucket: &str) -> Result<Settings, Error> {
        Settings::from_lookup(bucket, |k| std::env::var(k).ok())
    }

    /// From variables looked up by `var` (an empty value counts as unset):
    ///
    /// - `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`: the store (http allowed),
    ///   addressed path-style; unset: AWS itself, `https://s3.REGION.amazonaws.com`,
    ///   addressed virtual-host style (path-style for a bucket with a dot in its name,
    ///   whose virtual host would not match AWS's TLS certificate).
    /// - `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1`.
    /// - `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` (both needed), and
    ///   `AWS_SESSION_TOKEN` for temporary credentials.
    ///
    /// `bucket` only shapes the messages and the addressing.
    pub fn from_lookup(
        bucket: &str,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, Error> {
        let get = |k: &str| {
            var(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let region = get("AWS_REGION")
            .or_else(|| get("AWS_DEFAULT_REGION"))
            .unwrap_or_else(|| DEFAULT_REGION.to_string());
        let custom = get("AWS_ENDPOINT_URL_S3")
            .map(|v| ("AWS_ENDPOINT_URL_S3", v))
            .or_else(|| get("AWS_ENDPOINT_URL").map(|v| ("AWS_ENDPOINT_URL", v)));
        let (endpoint, addressing) = match custom {
            Some((name, value)) => (endpoint(name, &value)?, Addressing::Path),
            None => {
                if region
                    .chars()
                    .any(|c| !(c.is_ascii_alphanumeric() || c == '-'))
                {
                    return Err(Error::Config(format!(
                        "AWS_REGION `{region}` is not a region name (such as us-east-1): set \
                         AWS_REGION to the bucket's region, or AWS_ENDPOINT_URL to the store"
                    )));
                }
                let style = if bucket.contains('.') {
                    Addressing::Path
                } else {
                    Addressing::VirtualHost
                };
                (format!("https://s3.{region}.amazonaws.com"), style)
            }
        };
        let key = get("AWS_ACCESS_KEY_ID");
        let secret = get("AWS_SECRET_ACCESS_KEY");
        let (Some(access_key_id), Some(secret_access_key)) = (key, secret) else {
            let missing: Vec<&str> = [
                ("AWS_ACCESS_KEY_ID", get("AWS_ACCESS_KEY_ID")),
                ("AWS_SECRET_ACCESS_KEY", get("AWS_SECRET_ACCESS_KEY")),
            ]
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| *k)
            .collect();
            return Err(Error::Config(format!(
                "no credentials for s3://{bucket}/ at {endpoint}: {} unset; set \
                 AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for \
                 temporary credentials)",
                missing.join(" and ")
            )));
        };
        Ok(Settings {
            endpoint,
            addressing,
            region,
            access_key_id,
            secret_access_key,
            session_token: get("AWS_SESSION_TOKEN"),
        })
    }
}

/// An endpoint variable's value checked: `http(s)://host[:port]`, no query.
fn endpoint(name: &str, value: &str) -> Result<String, Error> {
    let bad = |why: &str| {
        Error::Config(format!(
            "{name} is `{value}`: {why}; set it to the store's URL, such as \
             http://127.0.0.1:8333 or https://s3.example.com, or unset it for AWS itself"
        ))
    };
    if !(value.starts_with("http://") || value.starts_with("https://")) {
        return Err(bad("it does not start with http:// or https://"));
    }
    let url = url::Url::parse(value).map_err(|e| bad(&format!("not a URL ({e})")))?;
    if url.host_str().is_none() {
        return Err(bad("no host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("it has a query or fragment"));
    }
    Ok(value.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::{Addressing, Settings};

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    const KEYS: [(&str, &str); 2] = [
        ("AWS_ACCESS_KEY_ID", "id"),
        ("AWS_SECRET_ACCESS_KEY", "secret"),
    ];

    #[test]
    fn aws_by_default_virtual_host_in_the_region() {
        let s = Settings::from_lookup("kfdo", lookup(&KEYS)).unwrap();
        assert_eq!(s.endpoint, "https://s3.us-east-1.amazonaws.com");
        assert_eq!(s.addressing, Addressing::VirtualHost);
        let mut v = KEYS.to_vec();
        v.push(("AWS_DEFAULT_REGION", "eu-west-1"));
        let s = Settings::from_lookup("kfdo", lookup(&v)).unwrap();
        assert_eq!(s.endpoint, "https://s3.eu-west-1.amazonaws.com");
        v.push(("AWS_REGION", "ap-south-1"));
        let s = Settings::from_lookup("my.bucket", lookup(&v)).unwrap();
        assert_eq!(
            (s.region.as_str(), s.addressing),
            ("ap-south-1", Addressing::Path)
        );
    }

    #[test]
    fn an_endpoint_is_path_style_and_may_be_http() {
        let mut v = KEYS.to_vec();
        v.push(("AWS_ENDPOINT_URL", "http://127.0.0.1:8333/"));
        v.push(("AWS_SESSION_TOKEN", "tok"));
        let s = Settings::from_lookup("kfdo", lookup(&v)).unwrap();
        assert_eq!(s.endpoint, "http://127.0.0.1:8333");
        assert_eq!(s.addressing, Addressing::Path);
        assert_eq!(s.session_token.as_deref(), Some("tok"));
        v.push(("AWS_ENDPOINT_URL_S3", "https://s3.example.com"));
        let s = Settings::from_lookup("kfdo", lookup(&v)).unwrap();
        assert_eq!(s.endpoint, "https://s3.example.com");
    }

    #[test]
    fn missing_credentials_name_the_variables() {
        let e = Settings::from_lookup("kfdo", lookup(&[("AWS_ACCESS_KEY_ID", "id")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("s3://kfdo/") && e.contains("AWS_SECRET_ACCESS_KEY unset"),
            "{e}"
        );
        assert!(
            e.contains("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
            "{e}"
        );
        let e = Settings::from_lookup("kfdo", lookup(&[("AWS_ACCESS_KEY_ID", " ")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY unset"),
            "{e}"
        );
    }

    #[test]
    fn bad_endpoints_and_regions_are_named() {
        for (value, why) in [
            ("127.0.0.1:8333", "does not start with http:// or https://"),
            ("ftp://host", "does not start with http:// or https://"),
            ("http://", "not a URL"),
            ("http://h:1/?x=1", "query"),
        ] {
            let mut v = KEYS.to_vec();
            v.push(("AWS_ENDPOINT_URL", value));
            let e = Settings::from_lookup("kfdo", lookup(&v))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("AWS_ENDPOINT_URL is `{value}`")) && e.contains(why),
                "{e}"
            );
        }
        let mut v = KEYS.to_vec();
        v.push(("AWS_REGION", "us east"));
        let e = Settings::from_lookup("kfdo", lookup(&v))
            .unwrap_err()
            .to_string();
        assert!(e.contains("AWS_REGION `us east`"), "{e}");
    }

    #[test]
    fn debug_hides_the_secret() {
        let s = Settings::from_lookup("kfdo", lookup(&KEYS)).unwrap();
        assert!(!format!("{s:?}").contains("secret"));
    }
}
