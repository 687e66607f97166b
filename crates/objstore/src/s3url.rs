//! [`S3Url`]: `s3://bucket/key` (or Hadoop's `s3a://`) parsed, joined and printed.

use crate::error::Error;

/// An object or a prefix in a bucket: `s3://bucket/some/prefix`. The key may be empty
/// (the whole bucket) or end in `/` (a folder-like prefix).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct S3Url {
    pub bucket: String,
    pub key: String,
}

/// The schemes taken as S3: `s3a://` is what Hadoop and Spark call the same store.
const SCHEMES: [&str; 2] = ["s3://", "s3a://"];

impl S3Url {
    /// Parses `s3://bucket/key` or `s3a://bucket/key`; the key may be empty.
    pub fn parse(s: &str) -> Result<S3Url, Error> {
        let bad = |why: &str| Error::BadUrl {
            text: s.to_string(),
            why: why.to_string(),
        };
        let rest = SCHEMES
            .iter()
            .find_map(|scheme| s.strip_prefix(scheme))
            .ok_or_else(|| bad("it does not start with s3:// or s3a://"))?;
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad("no bucket name"));
        }
        // Bucket names are DNS labels (AWS also allows dots); anything else, such as
        // `?` or a space, is a typo that would otherwise surface as a confusing
        // signature or host-name error.
        if let Some(c) = bucket
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
        {
            return Err(bad(&format!("the bucket name `{bucket}` holds `{c}`")));
        }
        if key.starts_with('/') {
            return Err(bad(
                "the key starts with `/` (two slashes after the bucket)",
            ));
        }
        Ok(S3Url {
            bucket: bucket.to_string(),
            key: key.to_string(),
        })
    }

    /// Whether `s` is meant as an S3 URL (it starts with `s3://` or `s3a://`), so that a
    /// command can tell it from a local path before parsing it.
    pub fn is_s3(s: &str) -> bool {
        SCHEMES.iter().any(|scheme| s.starts_with(scheme))
    }

    /// This key and `rel` joined by exactly one `/` (`a/` + `b/c` -> `a/b/c`); an empty
    /// key is the bucket's root.
    pub fn join(&self, rel: &str) -> S3Url {
        let rel = rel.trim_start_matches('/');
        let key = if self.key.is_empty() {
            rel.to_string()
        } else {
            format!("{}/{rel}", self.key.trim_end_matches('/'))
        };
        S3Url {
            bucket: self.bucket.clone(),
            key,
        }
    }

    /// The URL of another key in the same bucket.
    pub fn with_key(&self, key: &str) -> S3Url {
        S3Url {
            bucket: self.bucket.clone(),
            key: key.to_string(),
        }
    }
}

impl std::fmt::Display for S3Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.key)
    }
}

impl std::str::FromStr for S3Url {
    type Err = Error;

    fn from_str(s: &str) -> Result<S3Url, Error> {
        S3Url::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::S3Url;

    fn url(bucket: &str, key: &str) -> S3Url {
        S3Url {
            bucket: bucket.into(),
            key: key.into(),
        }
    }

    #[test]
    fn parses_bucket_and_key() {
        assert_eq!(
            S3Url::parse("s3://kfdo/fleet/h1.parquet").unwrap(),
            url("kfdo", "fleet/h1.parquet")
        );
        assert_eq!(
            S3Url::parse("s3a://kfdo/fleet/").unwrap(),
            url("kfdo", "fleet/")
        );
        assert_eq!(S3Url::parse("s3://kfdo").unwrap(), url("kfdo", ""));
        assert_eq!(S3Url::parse("s3://kfdo/").unwrap(), url("kfdo", ""));
        assert_eq!(
            S3Url::parse("s3://my.bucket-1/a").unwrap(),
            url("my.bucket-1", "a")
        );
    }

    #[test]
    fn bad_urls_name_the_text_and_the_form() {
        for (text, why) in [
            ("/local/path", "does not start with s3://"),
            ("http://kfdo/x", "does not start with s3://"),
            ("s3:///x", "no bucket name"),
            ("s3://", "no bucket name"),
            ("s3://bu cket/x", "holds ` `"),
            ("s3://kfdo?x=1/y", "holds `?`"),
            ("s3://kfdo//x", "starts with `/`"),
        ] {
            let e = S3Url::parse(text).unwrap_err().to_string();
            assert!(e.contains(&format!("`{text}`")), "{e}");
            assert!(e.contains(why), "{text}: {e}");
            assert!(e.contains("write s3://BUCKET/KEY"), "{e}");
        }
    }

    #[test]
    fn is_s3_looks_at_the_scheme_only() {
        assert!(S3Url::is_s3("s3://b/k"));
        assert!(S3Url::is_s3("s3a://b"));
        assert!(!S3Url::is_s3("S3://b"));
        assert!(!S3Url::is_s3("./s3://b"));
        assert!(!S3Url::is_s3("fleet/"));
    }

    #[test]
    fn join_puts_one_slash_between() {
        assert_eq!(url("b", "a/").join("b/c").key, "a/b/c");
        assert_eq!(url("b", "a").join("b").key, "a/b");
        assert_eq!(url("b", "a//").join("/b").key, "a/b");
        assert_eq!(url("b", "").join("b/c").key, "b/c");
        assert_eq!(url("b", "a/").join("").key, "a/");
    }

    #[test]
    fn displays_as_s3() {
        assert_eq!(
            S3Url::parse("s3a://kfdo/x/y").unwrap().to_string(),
            "s3://kfdo/x/y"
        );
        assert_eq!(url("kfdo", "").to_string(), "s3://kfdo/");
    }
}
