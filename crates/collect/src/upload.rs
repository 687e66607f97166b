//! Uploading the spool: oldest file first, each checked before it goes (a file
//! unreadable in the spool is moved to `bad/`, never uploaded), written under its fixed
//! key (so a retry rewrites the same object), confirmed by the store (its size read
//! back), and only then removed from the spool. The first failure ends the pass: the
//! caller waits (backing off) and tries again, the file still in the spool.

use std::sync::atomic::{AtomicBool, Ordering};

use kfdo_objstore::{S3Url, Store};

use crate::naming::{object_key, parse_spool_name};
use crate::spool::{Spool, Waiting};

#[derive(Debug)]
pub struct Failed {
    pub url: String,
    pub what: String,
    /// The store could not be reached at all (as opposed to answering with an error).
    pub unreachable: bool,
}

#[derive(Debug, Default)]
pub struct Drained {
    /// `s3://` URL and bytes of each file uploaded.
    pub uploaded: Vec<(String, u64)>,
    /// Spool name and reason of each file found unreadable.
    pub quarantined: Vec<(String, String)>,
    /// Why the pass stopped early (the file stays in the spool).
    pub failed: Option<Failed>,
    /// A spool operation that failed (the spool itself is in trouble).
    pub spool_error: Option<String>,
}

pub fn drain(
    spool: &Spool,
    store: &Store,
    prefix: &S3Url,
    host: &str,
    stop: &AtomicBool,
) -> Drained {
    let mut d = Drained::default();
    let waiting = match spool.waiting() {
        Ok(w) => w,
        Err(e) => {
            d.spool_error = Some(e.to_string());
            return d;
        }
    };
    for w in waiting {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let Some((window, build_id)) = parse_spool_name(&w.name) else {
            continue;
        };
        if let Err(why) = check(&w, host, build_id) {
            match spool.quarantine(&w) {
                Ok(_) => d.quarantined.push((w.name.clone(), why)),
                Err(e) => {
                    d.spool_error = Some(e.to_string());
                    return d;
                }
            }
            continue;
        }
        let url = prefix.join(&object_key(host, window, build_id));
        if let Err(f) = upload_one(store, &url, &w) {
            d.failed = Some(f);
            return d;
        }
        if let Err(e) = spool.remove(&w) {
            d.spool_error = Some(e.to_string());
            return d;
        }
        d.uploaded.push((url.to_string(), w.bytes));
    }
    d
}

fn upload_one(store: &Store, url: &S3Url, w: &Waiting) -> Result<(), Failed> {
    let failed = |e: kfdo_objstore::Error| Failed {
        url: url.to_string(),
        unreachable: e.is_unreachable(),
        what: e.to_string(),
    };
    store.put_file(&url.key, &w.path).map_err(failed)?;
    match store.head(&url.key).map_err(failed)? {
        Some(n) if n == w.bytes => Ok(()),
        stored => Err(Failed {
            url: url.to_string(),
            unreachable: false,
            what: format!(
                "after the upload the store reports {} where the file has {} bytes",
                stored.map_or("no object".to_string(), |n| format!("{n} bytes")),
                w.bytes
            ),
        }),
    }
}

/// The whole file reads back as a host file of this host and build-id.
fn check(w: &Waiting, host: &str, build_id: &str) -> Result<(), String> {
    let summary = kfdo_rawfleet::read::scan(&w.path, |_, _| Ok(())).map_err(|e| e.to_string())?;
    let info = &summary.info;
    if info.host != host || info.build_id != build_id {
        return Err(format!(
            "{}: holds host {:?} and build-id {}, but its name and this collector say {host:?} and {build_id}",
            w.path.display(),
            info.host,
            info.build_id
        ));
    }
    Ok(())
}
