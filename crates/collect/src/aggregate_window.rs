//! A window's recording turned into host files, one per binary with samples (the
//! existing raw schema: host, host class, window, recorder), each by the same
//! conversion as `kfdo profile --raw-out`.
//!
//! Which binaries: the recording's build-id table (perf lists every file with samples).
//! Copies of one binary (one build-id at several paths) are one binary: its file is
//! named by the build-id, and the samples of every copy are placed in it.
//! A binary is counted first (its samples in this window, a cheap pass over the mapping
//! records); only those with `--min-samples` or more are converted, since converting
//! decodes the binary's code. A binary whose file is gone or was replaced (its build-id
//! differs now), and the kernel without a vmlinux of its build-id, are reported and not
//! written: a file with counts placed on the wrong code would be worse than none.

use std::path::{Path, PathBuf};

use kfdo_aggregate::count::for_each_sample;
use kfdo_aggregate::target::{file_name, hex, TargetBinary};
use kfdo_convert::{write_raw_parquet, Input, ProfileRequest, RawOut};
use kfdo_record::hardware::Method;

use crate::config::CollectConfig;
use crate::error::CollectError;

/// The name perf gives the running kernel.
const KERNEL: &str = "[kernel.kallsyms]";

/// One binary's host file of the window, complete, in `work/`.
#[derive(Clone, Debug)]
pub struct WindowFile {
    pub path: PathBuf,
    pub build_id: String,
    pub binary: String,
    pub samples: u64,
    pub rows: usize,
}

/// A binary with samples that got no file, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    pub binary: String,
    pub build_id: String,
    pub samples: u64,
    pub why: Why,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Why {
    BelowMinSamples,
    NotAggregated(String),
}

#[derive(Debug, Default)]
pub struct Aggregated {
    pub files: Vec<WindowFile>,
    pub skipped: Vec<Skipped>,
    /// Every sample of the window, of every process.
    pub samples: u64,
}

pub fn aggregate(
    cfg: &CollectConfig,
    data: &Path,
    work: &Path,
) -> Result<Aggregated, CollectError> {
    let pd = kfdo_perf::PerfData::open(data).map_err(|e| {
        CollectError::Record(format!(
            "{}: cannot read the window's recording: {e}",
            data.display()
        ))
    })?;
    let mut out = Aggregated::default();
    for r in pd.records() {
        if let Ok(kfdo_perf::Record::Sample(_)) = r {
            out.samples += 1;
        }
    }
    let table: Vec<(String, String)> = pd
        .build_ids()
        .iter()
        .map(|e| (e.filename.clone(), e.build_id_hex()))
        .collect();
    drop(pd);
    for (binary, build_id) in by_build_id(cfg, &table) {
        let kernel = binary == KERNEL;
        let skip = |why: String, samples: u64| Skipped {
            binary: binary.clone(),
            build_id: build_id.clone(),
            samples,
            why: Why::NotAggregated(why),
        };
        if is_kernel_module(&binary) {
            out.skipped.push(skip(
                "a kernel module: kfdo collect writes the kernel's own file only".into(),
                0,
            ));
            continue;
        }
        let elf = if kernel {
            match find_vmlinux(cfg, &build_id) {
                Ok(p) => p,
                Err(why) => {
                    out.skipped.push(skip(why, 0));
                    continue;
                }
            }
        } else {
            PathBuf::from(&binary)
        };
        let size = std::fs::metadata(&elf).map(|m| m.len()).unwrap_or(0);
        if size > cfg.max_binary_bytes {
            out.skipped.push(skip(
                format!(
                    "{} is {} MiB, over --max-binary {} MiB (converting decodes its code whole, \
                     and the collector's memory follows the largest binary): raise --max-binary \
                     to profile it",
                    elf.display(),
                    size >> 20,
                    cfg.max_binary_bytes >> 20
                ),
                0,
            ));
            continue;
        }
        let bin = match kfdo_elf::Binary::open(&elf) {
            Ok(b) => b,
            Err(e) => {
                out.skipped
                    .push(skip(format!("cannot read it now: {e}"), 0));
                continue;
            }
        };
        let now = bin.build_id().map(hex).unwrap_or_default();
        if now != build_id {
            out.skipped.push(skip(
                format!(
                    "{} now has build-id {now}: it was replaced after the window, so its \
                     samples cannot be placed",
                    elf.display()
                ),
                0,
            ));
            continue;
        }
        let target = TargetBinary::new(&bin, None, kernel);
        let mut samples = 0u64;
        let counted = for_each_sample(data, &target, |s, view| {
            samples += u64::from(view.translate(s.ip).is_some());
        });
        if let Err(e) = counted {
            out.skipped
                .push(skip(format!("cannot place its samples: {e}"), 0));
            continue;
        }
        if samples < cfg.min_samples.max(1) {
            out.skipped.push(Skipped {
                binary: binary.clone(),
                build_id: build_id.clone(),
                samples,
                why: Why::BelowMinSamples,
            });
            continue;
        }
        let path = work.join(format!("{build_id}.parquet"));
        let mut req = ProfileRequest::new(&elf, vec![Input::PerfData(data.to_path_buf())], &path);
        req.kernel = kernel;
        req.ip_only = cfg.method == Method::Ip;
        let raw_out = RawOut {
            path: path.clone(),
            host: cfg.host.clone(),
            host_class: cfg.host_class.clone(),
        };
        match write_raw_parquet(&req, &raw_out, &mut |_| {}) {
            Ok(o) => out.files.push(WindowFile {
                path,
                build_id: build_id.clone(),
                binary: binary.clone(),
                samples: u64::try_from(o.samples).unwrap_or(0),
                rows: o.rows,
            }),
            Err(e) => out
                .skipped
                .push(skip(format!("cannot convert: {e}"), samples)),
        }
    }
    Ok(out)
}

/// The binaries to consider, one per build-id: the samples of every path with a build-id
/// are placed by that build-id, so copies of one binary at several paths (or a path
/// listed twice) make one file, named after the first path. Pseudo-files without code
/// to read (`[vdso]`) and, with `--program`, binaries of other names are left out.
fn by_build_id(cfg: &CollectConfig, table: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (binary, build_id) in table {
        if binary != KERNEL && binary.starts_with('[') {
            continue;
        }
        if !cfg.programs.is_empty()
            && !cfg
                .programs
                .iter()
                .any(|p| p == binary || p == file_name(binary))
        {
            continue;
        }
        if out.iter().any(|(_, id)| id == build_id) {
            continue;
        }
        out.push((binary.clone(), build_id.clone()));
    }
    out
}

fn is_kernel_module(path: &str) -> bool {
    [".ko", ".ko.xz", ".ko.zst", ".ko.gz"]
        .iter()
        .any(|s| path.ends_with(s))
}

/// The running kernel's ELF: `--vmlinux`, else where distributions install it (debug
/// packages, /boot, the build tree), whichever has the recorded build-id.
fn find_vmlinux(cfg: &CollectConfig, build_id: &str) -> Result<PathBuf, String> {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let candidates: Vec<PathBuf> = match &cfg.vmlinux {
        Some(p) => vec![p.clone()],
        None => [
            format!("/usr/lib/debug/boot/vmlinux-{release}"),
            format!("/usr/lib/debug/lib/modules/{release}/vmlinux"),
            format!("/boot/vmlinux-{release}"),
            format!("/lib/modules/{release}/build/vmlinux"),
        ]
        .into_iter()
        .map(PathBuf::from)
        .collect(),
    };
    let mut tried = Vec::new();
    for c in &candidates {
        match kfdo_elf::Binary::open(c) {
            Ok(b) if b.build_id().map(hex).as_deref() == Some(build_id) => return Ok(c.clone()),
            Ok(b) => tried.push(format!(
                "{} (build-id {})",
                c.display(),
                b.build_id().map(hex).unwrap_or_else(|| "none".into())
            )),
            Err(_) => tried.push(format!("{} (absent)", c.display())),
        }
    }
    Err(format!(
        "no vmlinux with the running kernel's build-id {build_id}: tried {}; give --vmlinux \
         (install the kernel's debug package)",
        tried.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(binary: &str, id: &str) -> (String, String) {
        (binary.to_string(), id.to_string())
    }

    #[test]
    fn copies_of_one_binary_make_one_entry_named_after_the_first_path() {
        let mut cfg = CollectConfig::new("/s", "h");
        cfg.programs = vec!["lz".into()];
        let table = [
            entry("/a/lz", "aa"),
            entry("[vdso]", "vv"),
            entry("/b/lz", "aa"),
            entry("/a/lz", "aa"),
            entry("/c/lz", "cc"),
            entry("/usr/bin/sh", "ss"),
        ];
        assert_eq!(
            by_build_id(&cfg, &table),
            vec![entry("/a/lz", "aa"), entry("/c/lz", "cc")]
        );
        cfg.programs.clear();
        let all = by_build_id(&cfg, &table);
        assert_eq!(all.len(), 3, "{all:?}");
    }

    #[test]
    fn modules_are_told_apart() {
        assert!(is_kernel_module("/lib/modules/6.1/kernel/fs/xfs/xfs.ko.xz"));
        assert!(!is_kernel_module("/usr/bin/kopia"));
    }

    #[test]
    fn a_missing_vmlinux_names_what_was_tried_and_the_fix() {
        let mut cfg = CollectConfig::new("/s", "h");
        cfg.vmlinux = Some(PathBuf::from("/nonexistent/vmlinux"));
        let e = find_vmlinux(&cfg, "abcd").unwrap_err();
        assert!(
            e.contains("/nonexistent/vmlinux (absent)") && e.contains("--vmlinux"),
            "{e}"
        );
    }
}
