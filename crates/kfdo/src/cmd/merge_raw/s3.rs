//! `s3://` inputs of `kfdo merge-raw`: each one's `*.parquet` objects downloaded into a
//! temporary folder (kfdo-objstore's fetch) and handed to the merge as files named by
//! their s3:// URLs, so that no message or report shows a temporary path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use kfdo_objstore::{Fetch, S3Url, Store};
use kfdo_rawfleet::RawInput;

use crate::output::Global;

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

/// Local files and s3:// inputs (in the order given) as the merge's inputs: local
/// directories expanded as `merge-raw` always has, s3:// objects downloaded into `tmp`.
pub fn resolve(inputs: &[Input], tmp: &Path, g: &Global) -> anyhow::Result<Vec<RawInput>> {
    let mut stores: BTreeMap<String, Store> = BTreeMap::new();
    for input in inputs {
        if let Input::S3(url) = input {
            if !stores.contains_key(&url.bucket) {
                stores.insert(url.bucket.clone(), Store::from_env(&url.bucket)?);
            }
        }
    }
    let mut files = Vec::new();
    let mut fetches = Vec::new();
    for input in inputs {
        match input {
            Input::Local(p) => {
                let found = kfdo_rawfleet::merge::expand_inputs(std::slice::from_ref(p))?;
                files.extend(found.into_iter().map(RawInput::local));
            }
            Input::S3(url) => {
                let store = &stores[&url.bucket];
                for object in kfdo_objstore::objects(store, url, ".parquet")? {
                    let dest = tmp.join(format!("{:06}.parquet", fetches.len()));
                    files.push(RawInput::named(
                        &dest,
                        url.with_key(&object.key).to_string(),
                    ));
                    fetches.push(Fetch {
                        store,
                        object,
                        dest,
                    });
                }
            }
        }
    }
    download(&fetches, g)?;
    Ok(files)
}

/// Every fetch done, with a progress bar of bytes and a line saying what came.
fn download(fetches: &[Fetch], g: &Global) -> anyhow::Result<()> {
    if fetches.is_empty() {
        return Ok(());
    }
    let clock = Instant::now();
    let bytes: u64 = fetches.iter().map(|f| f.object.size).sum();
    let bar = g.progress(Some(bytes), "download");
    let done = kfdo_objstore::download_all(fetches, &|size| bar.inc(size));
    bar.finish_and_clear();
    done?;
    g.info(format!(
        "kfdo merge-raw: downloaded {} object(s), {} bytes, in {:.1}s",
        fetches.len(),
        bytes,
        clock.elapsed().as_secs_f64()
    ));
    Ok(())
}
