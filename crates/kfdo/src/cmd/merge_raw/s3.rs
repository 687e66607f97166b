//! `s3://` inputs of `kfdo merge-raw`: each prefix listed, its `*.parquet` objects
//! downloaded (a few at a time) into a temporary folder, and handed to the merge as
//! files named by their s3:// URLs, so that no message or report shows a temporary path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use kfdo_objstore::{ObjectInfo, S3Url, Store};
use kfdo_rawfleet::RawInput;

use crate::output::Global;

/// Downloads at once: enough to hide each request's latency, few enough not to crowd a
/// store or the machine's other work.
const PARALLEL: usize = 4;
/// Tries of one download whose failure may pass (unreachable, busy store).
const TRIES: u32 = 3;

/// An input as given: a local path, or an s3:// URL.
pub enum Input {
    Local(PathBuf),
    S3(S3Url),
}

impl Input {
    /// An argument that starts with `s3://` or `s3a://` is a URL (a local folder of
    /// that name is reached as `./s3:/...`), anything else a path.
    pub fn parse(arg: &Path) -> Result<Input, kfdo_objstore::Error> {
        match arg.to_str().filter(|s| S3Url::is_s3(s)) {
            Some(s) => Ok(Input::S3(S3Url::parse(s)?)),
            None => Ok(Input::Local(arg.to_path_buf())),
        }
    }

    /// The path of a local input.
    pub fn local(&self) -> Option<&Path> {
        match self {
            Input::Local(p) => Some(p),
            Input::S3(_) => None,
        }
    }
}

/// One object to fetch: where it comes from and where its copy goes.
struct Fetch {
    bucket: String,
    object: ObjectInfo,
    dest: PathBuf,
}

/// The objects an s3:// input names: the object itself when the URL names one, else
/// every object under it (as a folder: a key not ending in `/` gets one) whose key ends
/// in `.parquet`, sorted by key. None is an error naming the URL.
fn objects(store: &Store, url: &S3Url) -> anyhow::Result<Vec<ObjectInfo>> {
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
    let found: Vec<ObjectInfo> = store
        .list(&prefix)?
        .into_iter()
        .filter(|o| o.key.ends_with(".parquet"))
        .collect();
    if found.is_empty() {
        let what = if folder {
            "no *.parquet object under this prefix".to_string()
        } else {
            format!(
                "no such object, and no *.parquet object under {}",
                url.with_key(&prefix)
            )
        };
        bail!(
            "{url}: {what}: point merge-raw at the prefix the hosts' files were uploaded to \
             (`aws s3 ls {}` lists what is there)",
            url.with_key(&prefix)
        );
    }
    Ok(found)
}

/// Local files and s3:// inputs (in the order given) as the merge's inputs: local
/// directories expanded as `merge-raw` always has, s3:// objects downloaded into `tmp`.
pub fn resolve(inputs: &[Input], tmp: &Path, g: &Global) -> anyhow::Result<Vec<RawInput>> {
    let mut stores: BTreeMap<String, Store> = BTreeMap::new();
    let mut files = Vec::new();
    let mut fetches = Vec::new();
    for input in inputs {
        match input {
            Input::Local(p) => {
                let found = kfdo_rawfleet::merge::expand_inputs(std::slice::from_ref(p))?;
                files.extend(found.into_iter().map(RawInput::local));
            }
            Input::S3(url) => {
                if !stores.contains_key(&url.bucket) {
                    stores.insert(url.bucket.clone(), Store::from_env(&url.bucket)?);
                }
                let store = &stores[&url.bucket];
                for object in objects(store, url)? {
                    let dest = tmp.join(format!("{:06}.parquet", fetches.len()));
                    let name = url.with_key(&object.key).to_string();
                    files.push(RawInput::named(&dest, name));
                    fetches.push(Fetch {
                        bucket: url.bucket.clone(),
                        object,
                        dest,
                    });
                }
            }
        }
    }
    download(&stores, &fetches, g)?;
    Ok(files)
}

/// Every fetch done, `PARALLEL` at a time; the first failure (in input order) stops
/// the others from starting new ones and is the error.
fn download(stores: &BTreeMap<String, Store>, fetches: &[Fetch], g: &Global) -> anyhow::Result<()> {
    if fetches.is_empty() {
        return Ok(());
    }
    let clock = Instant::now();
    let bytes: u64 = fetches.iter().map(|f| f.object.size).sum();
    let bar = g.progress(Some(bytes), "download");
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let errors: Mutex<Vec<(usize, anyhow::Error)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..PARALLEL.min(fetches.len()) {
            s.spawn(|| {
                while !failed.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(f) = fetches.get(i) else { break };
                    match fetch(&stores[&f.bucket], f) {
                        Ok(()) => bar.inc(f.object.size),
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
    bar.finish_and_clear();
    let mut errors = errors.into_inner().unwrap_or_else(|p| p.into_inner());
    errors.sort_by_key(|(i, _)| *i);
    if let Some((_, e)) = errors.into_iter().next() {
        return Err(e);
    }
    g.info(format!(
        "kfdo merge-raw: downloaded {} object(s), {} bytes, in {:.1}s",
        fetches.len(),
        bytes,
        clock.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// One object downloaded, tried again while its failure may pass, and its size checked
/// against the listing's.
fn fetch(store: &Store, f: &Fetch) -> anyhow::Result<()> {
    let url = store.url(&f.object.key);
    let mut tried = 1;
    loop {
        match store.get_to_file(&f.object.key, &f.dest) {
            Ok(()) => break,
            Err(e) if e.is_transient() && tried < TRIES => {
                std::thread::sleep(Duration::from_secs(u64::from(tried)));
                tried += 1;
            }
            // The store's errors name the URL already.
            Err(e) => return Err(e.into()),
        }
    }
    let got = std::fs::metadata(&f.dest)
        .with_context(|| format!("{url}: its download vanished from the temporary folder"))?
        .len();
    if got != f.object.size {
        bail!(
            "{url}: {got} bytes downloaded, the listing said {}: it changed while the merge \
             read it; run the merge again once the uploads are done",
            f.object.size
        );
    }
    Ok(())
}
