//! Many objects brought to local files: the objects an s3:// URL names (one object, or
//! every object under a prefix whose key ends in a given suffix), downloaded a few at a
//! time, each tried again while its failure may pass and checked against the listing's
//! size. What a fleet merge needs of a store before it reads local files.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::client::{ObjectInfo, Store};
use crate::error::Error;
use crate::s3url::S3Url;

/// Downloads at once: enough to hide each request's latency, few enough not to crowd a
/// store or the machine's other work.
pub const PARALLEL: usize = 4;
/// Tries of one download whose failure may pass (unreachable, busy store).
const TRIES: u32 = 3;

/// One object to fetch: where it comes from and where its copy goes.
pub struct Fetch<'a> {
    pub store: &'a Store,
    pub object: ObjectInfo,
    pub dest: PathBuf,
}

/// The objects `url` names: the object itself when the URL names one, else every
/// object under it (as a folder: a key not ending in `/` gets one) whose key ends in
/// `suffix`, sorted by key. None is an error naming the URL.
pub fn objects(store: &Store, url: &S3Url, suffix: &str) -> Result<Vec<ObjectInfo>, Error> {
    let folder = url.key.is_empty() || url.key.ends_with('/');
    let prefix = if folder {
        url.key.clone()
    } else {
        if let Some(size) = store.head(&url.key)? {
            return Ok(vec![ObjectInfo {
                key: url.key.clone(),
                size,
            }]);
        }
        format!("{}/", url.key)
    };
    let mut found: Vec<ObjectInfo> = store
        .list(&prefix)?
        .into_iter()
        .filter(|o| o.key.ends_with(suffix))
        .collect();
    found.sort_by(|a, b| a.key.cmp(&b.key));
    if found.is_empty() {
        let under = url.with_key(&prefix);
        return Err(Error::Empty {
            url: url.to_string(),
            what: if folder {
                format!("no *{suffix} object under this prefix")
            } else {
                format!("no such object, and no *{suffix} object under {under}")
            },
            prefix: under.to_string(),
        });
    }
    Ok(found)
}

/// Every fetch done, [`PARALLEL`] at a time; `done` hears each object's size as it
/// arrives. The first failure (in the order given) stops the others from starting new
/// ones and is the error.
pub fn download_all(fetches: &[Fetch], done: &(dyn Fn(u64) + Sync)) -> Result<(), Error> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let errors: Mutex<Vec<(usize, Error)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..PARALLEL.min(fetches.len()) {
            s.spawn(|| {
                while !failed.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(f) = fetches.get(i) else { break };
                    match fetch(f) {
                        Ok(()) => done(f.object.size),
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            errors
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .push((i, e));
                        }
                    }
                }
            });
        }
    });
    let mut errors = errors.into_inner().unwrap_or_else(|p| p.into_inner());
    errors.sort_by_key(|(i, _)| *i);
    match errors.into_iter().next() {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// One object downloaded, tried again while its failure may pass, and its size checked
/// against the listing's.
fn fetch(f: &Fetch) -> Result<(), Error> {
    let url = f.store.url(&f.object.key).to_string();
    let mut tried = 1;
    loop {
        match f.store.get_to_file(&f.object.key, &f.dest) {
            Ok(()) => break,
            Err(e) if e.is_transient() && tried < TRIES => {
                std::thread::sleep(Duration::from_secs(u64::from(tried)));
                tried += 1;
            }
            Err(e) => return Err(e),
        }
    }
    let got = std::fs::metadata(&f.dest)
        .map_err(|e| Error::Local {
            path: f.dest.clone(),
            what: format!("the download of {url} vanished from its folder: {e}"),
        })?
        .len();
    if got != f.object.size {
        return Err(Error::Protocol {
            op: "GET",
            url,
            detail: format!(
                "{got} bytes downloaded, the listing said {}: it changed while it was read; \
                 try again once the uploads are done",
                f.object.size
            ),
        });
    }
    Ok(())
}
