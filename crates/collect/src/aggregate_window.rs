//! A window's recording turned into host files, one per binary with samples (the
//! existing raw schema: host, host class, window, recorder), each by the same
//! conversion as `kfdo profile --raw-out`.
//!
//! Which binaries: the recording's build-id table (perf lists every file with samples).
//! A binary is counted first (its samples in this window, a cheap pass over the mapping
//! records); only those with `--min-samples` or more are converted, since converting
//! decodes the binary's code. A binary whose file is gone or was replaced (its build-id
//! differs now), and the kernel without a vmlinux of its build-id, are reported and not
//! written: a file with counts placed on the wrong code would be worse than none.

use std::path::{Path, PathBuf};

use kfdo_aggregate::collect::for_each_sample;
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
    let mut seen: Vec<(String, String)> = Vec::new();
    let entries: Vec<(String, String)> = pd
        .build_ids()
        .iter()
        .map(|e| (e.filename.clone(), e.build_id_hex()))
        .collect();
    drop(pd);
    for (binary, build_id) in entries {
        if seen.iter().any(|(b, i)| *b == binary && *i == build_id) {
            continue;
        }
        seen.push((binary.clone(), build_id.clone()));
        let kernel = binary == KERNEL;
        if !kernel && binary.starts_with('[') {
            continue; // [vdso], [vsyscall]: no file to read
        }
        if !cfg.programs.is_empty()
            && !cfg
                .programs
                .iter()
                .any(|p| *p == binary || p == file_name(&binary))
        {
            continue;
        }
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
