//! The client against a real S3 store (SeaweedFS, started here on free ports): every
//! operation round trips, a listing continues over pages, a missing object and wrong
//! credentials are error answers that name what is wrong, and a closed port or a silent
//! one is "unreachable". Without SeaweedFS these tests skip, saying why, except where
//! tests must run (`KFDO_REQUIRE_TOOLS=1`, CI), where they fail.

use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kfdo_objstore::{Error, ObjectInfo, S3Url, Settings, Store};
use kfdo_testkit::seaweedfs::SeaweedFs;

/// One store for the tests of this binary that run at the same time: the last one
/// done stops it (tests run one after another start their own).
fn shared() -> Option<Arc<SeaweedFs>> {
    static SHARED: Mutex<std::sync::Weak<SeaweedFs>> = Mutex::new(std::sync::Weak::new());
    let mut slot = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(s) = slot.upgrade() {
        return Some(s);
    }
    let s = Arc::new(SeaweedFs::start(&["kfdo"])?);
    *slot = Arc::downgrade(&s);
    Some(s)
}

fn settings(s: &SeaweedFs, bucket: &str) -> Settings {
    Settings::from_lookup(bucket, |k| s.var(k)).unwrap()
}

fn store(s: &SeaweedFs) -> Store {
    Store::new("kfdo", settings(s, "kfdo")).unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Bytes that differ from file to file and are not all alike.
fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn put_head_list_get_delete_round_trip() {
    let Some(s) = shared() else { return };
    let st = store(&s);
    let d = tempfile::tempdir().unwrap();
    let prefix = "round-trip/2026-11-29/";
    // Seven objects under the prefix, keys with a space, a plus and a non-ASCII letter
    // among them (the listing's URL encoding decoded), and one beside it.
    let names = [
        "h1.parquet",
        "h2.parquet",
        "h3.parquet",
        "sub/h4.parquet",
        "sub/h5 with space+plus.parquet",
        "sub/ü.parquet",
        "z.txt",
    ];
    let mut want = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let body = bytes(i as u64, 1000 + 37 * i);
        let f = write(d.path(), &format!("f{i}"), &body);
        let key = format!("{prefix}{n}");
        st.put_file(&key, &f).unwrap();
        want.push(ObjectInfo {
            key,
            size: body.len() as u64,
        });
    }
    st.put_bytes("round-trip/2026-11-29x/beside.parquet", b"beside")
        .unwrap();
    want.sort();

    for w in &want {
        assert_eq!(st.head(&w.key).unwrap(), Some(w.size), "{}", w.key);
    }
    assert_eq!(st.head(&format!("{prefix}none.parquet")).unwrap(), None);

    // Pages of 3 keys: the listing continues twice.
    let paged = st.clone().with_list_page(3).list(prefix).unwrap();
    assert_eq!(paged, want);
    assert_eq!(st.list(prefix).unwrap(), want);
    assert_eq!(st.clone().with_list_page(1).list(prefix).unwrap(), want);
    assert_eq!(st.list("round-trip/none/").unwrap(), []);

    // A larger object (many reads and writes of the copy loops) and every small one.
    let big = bytes(99, 3 << 20);
    let f = write(d.path(), "big", &big);
    st.put_file(&format!("{prefix}big.bin"), &f).unwrap();
    let got = d.path().join("got");
    std::fs::create_dir(&got).unwrap();
    st.get_to_file(&format!("{prefix}big.bin"), &got.join("big"))
        .unwrap();
    assert!(std::fs::read(got.join("big")).unwrap() == big);
    for (i, w) in want.iter().enumerate() {
        let dest = got.join(format!("{i}"));
        st.get_to_file(&w.key, &dest).unwrap();
        let n = names.iter().position(|n| w.key.ends_with(n)).unwrap();
        assert!(
            std::fs::read(&dest).unwrap() == bytes(n as u64, 1000 + 37 * n),
            "{}",
            w.key
        );
    }
    // Downloads leave no temporary file behind.
    let left: Vec<_> = std::fs::read_dir(&got)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    for w in &want {
        st.delete(&w.key).unwrap();
        assert_eq!(st.head(&w.key).unwrap(), None, "{}", w.key);
    }
    // Deleting what is not there is no error (S3 answers alike).
    st.delete(&want[0].key).unwrap();
    assert_eq!(
        st.list(prefix).unwrap(),
        [ObjectInfo {
            key: format!("{prefix}big.bin"),
            size: big.len() as u64
        }]
    );
}

#[test]
fn a_missing_object_is_a_404_naming_its_url() {
    let Some(s) = shared() else { return };
    let st = store(&s);
    let d = tempfile::tempdir().unwrap();
    let dest = d.path().join("x");
    let e = st.get_to_file("missing/x.parquet", &dest).unwrap_err();
    assert_eq!(e.status(), Some(404), "{e}");
    assert!(!e.is_unreachable() && !e.is_transient());
    let text = e.to_string();
    assert!(
        text.contains("GET s3://kfdo/missing/x.parquet") && text.contains("NoSuchKey"),
        "{text}"
    );
    assert!(!dest.exists());
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);

    // A bucket that does not exist: the code says so.
    let other = Store::new("no-such-bucket", settings(&s, "no-such-bucket")).unwrap();
    let e = other.list("").unwrap_err();
    match &e {
        Error::Status {
            status, code, url, ..
        } => {
            assert_eq!((*status, code.as_str()), (404, "NoSuchBucket"), "{e}");
            assert_eq!(url, "s3://no-such-bucket/");
        }
        _ => panic!("not a status error: {e}"),
    }
    assert!(e.to_string().contains("create the bucket"), "{e}");
}

#[test]
fn wrong_credentials_are_an_error_answer_naming_the_code() {
    let Some(s) = shared() else { return };
    let good = settings(&s, "kfdo");
    let secret = Settings {
        secret_access_key: "not-the-secret".into(),
        ..good.clone()
    };
    let key = Settings {
        access_key_id: "nobody".into(),
        ..good
    };
    for (settings, code) in [
        (secret, "SignatureDoesNotMatch"),
        (key, "InvalidAccessKeyId"),
    ] {
        let st = Store::new("kfdo", settings).unwrap();
        let e = st.put_bytes("creds/x", b"x").unwrap_err();
        match &e {
            Error::Status {
                status,
                code: c,
                op,
                url,
                ..
            } => {
                assert_eq!((*status, c.as_str(), *op), (403, code, "PUT"), "{e}");
                assert_eq!(url, "s3://kfdo/creds/x");
            }
            _ => panic!("not a status error: {e}"),
        }
        assert!(!e.is_unreachable());
        let text = e.to_string();
        assert!(
            text.contains(code)
                && text.contains("check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
            "{text}"
        );
        // A listing too; and a HEAD, whose answer has no body, is no "missing object".
        let e = st.list("creds/").unwrap_err();
        assert!(e.to_string().contains(code), "{e}");
        let e = st.head("creds/x").unwrap_err();
        assert_eq!(e.status(), Some(403), "{e}");
    }
}

/// What `put_file` counts on: a store refuses a body whose MD5 is not the
/// `Content-MD5` sent, instead of storing it.
#[test]
fn the_store_refuses_a_body_that_is_not_its_digest() {
    use base64::Engine as _;
    use rusty_s3::S3Action as _;
    let Some(s) = shared() else { return };
    let set = settings(&s, "kfdo");
    let bucket = rusty_s3::Bucket::new(
        s.endpoint().parse().unwrap(),
        rusty_s3::UrlStyle::Path,
        "kfdo",
        "us-east-1",
    )
    .unwrap();
    let creds = rusty_s3::Credentials::new(set.access_key_id, set.secret_access_key);
    let digest = base64::engine::general_purpose::STANDARD.encode(md5::compute(b"whole body").0);
    let mut put = bucket.put_object(Some(&creds), "digest/x");
    put.headers_mut().insert("content-md5", digest.clone());
    let url = put.sign(Duration::from_secs(600));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let resp = agent
        .put(url.as_str())
        .header("content-md5", &digest)
        .send(&b"whole b"[..])
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    assert_eq!(store(&s).head("digest/x").unwrap(), None);
}

#[test]
fn a_closed_port_is_unreachable() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let endpoint = format!("http://127.0.0.1:{port}");
    let settings = Settings::from_lookup("kfdo", |k| match k {
        "AWS_ENDPOINT_URL" => Some(endpoint.clone()),
        "AWS_ACCESS_KEY_ID" => Some("id".into()),
        "AWS_SECRET_ACCESS_KEY" => Some("secret".into()),
        _ => None,
    })
    .unwrap();
    let st = Store::new("kfdo", settings).unwrap();
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "f", b"x");
    let errors = [
        st.put_file("k", &f).unwrap_err(),
        st.head("k").unwrap_err(),
        st.list("").unwrap_err(),
        st.get_to_file("k", &d.path().join("g")).unwrap_err(),
        st.delete("k").unwrap_err(),
    ];
    for e in errors {
        assert!(e.is_unreachable() && e.is_transient(), "{e:?}");
        let text = e.to_string();
        assert!(
            text.contains(&format!("cannot reach the object store at {endpoint}"))
                && text.contains("s3://kfdo/")
                && text.contains("AWS_ENDPOINT_URL"),
            "{text}"
        );
    }
}

/// A store that accepts the connection and never answers: the request timeout ends
/// the call, as "unreachable".
#[test]
fn a_silent_store_times_out_as_unreachable() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let settings = Settings::from_lookup("kfdo", |k| match k {
        "AWS_ENDPOINT_URL" => Some(endpoint.clone()),
        "AWS_ACCESS_KEY_ID" => Some("id".into()),
        "AWS_SECRET_ACCESS_KEY" => Some("secret".into()),
        _ => None,
    })
    .unwrap();
    let st = Store::new("kfdo", settings)
        .unwrap()
        .with_timeout(Duration::from_secs(1), Duration::from_secs(1));
    let t = Instant::now();
    let e = st.head("k").unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    assert!(e.is_unreachable(), "{e:?}");
    assert!(e.to_string().contains("timeout"), "{e}");
    drop(listener);
}

#[test]
fn urls_parse_for_the_bucket_a_store_takes() {
    let u = S3Url::parse("s3a://kfdo/fleet/2026-11-29/").unwrap();
    assert_eq!(
        u.join("h1.parquet").to_string(),
        "s3://kfdo/fleet/2026-11-29/h1.parquet"
    );
    let e = Store::new(
        "kfdo",
        Settings {
            endpoint: "http://".into(),
            ..Settings::from_lookup("kfdo", |k| {
                (k.starts_with("AWS_ACCESS") || k.starts_with("AWS_SECRET")).then(|| "x".into())
            })
            .unwrap()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("cannot address s3://kfdo/"), "{e}");
}
