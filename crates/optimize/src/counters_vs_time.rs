//! The points of `kfdo counters-vs-time`: from `kfdo optimize` output directories (a
//! program's `OUT/bench/results.db`, wall time against its counter rows; a kernel's
//! emulated counters against its User-Mode Linux twins' and KVM boots' time) or from a
//! results store of `kfdo compare`.

use std::path::Path;

use anyhow::{bail, Context};
use kfdo_bench::counters_vs_time::{program_points, Point};
use kfdo_bench::report::write::load_and_analyze;

/// What an input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Input {
    /// A results store (`.db`), or a program's `kfdo optimize` output.
    Program,
    /// A kernel's `kfdo optimize` output: its time is the twins' and KVM's.
    Kernel,
}

/// The name a point's group gets: the output directory's, or the store's file stem.
fn group_name(path: &Path) -> String {
    let name = |p: &Path| p.file_name().map(|s| s.to_string_lossy().into_owned());
    let named = if path.is_file() && path.file_name().is_some_and(|n| n == "results.db") {
        // OUT/bench/results.db: the output directory names it.
        path.parent().and_then(Path::parent).and_then(name)
    } else if path.is_file() {
        path.file_stem().map(|s| s.to_string_lossy().into_owned())
    } else {
        name(path)
    };
    named.unwrap_or_else(|| path.display().to_string())
}

/// Which kind of input `path` is, and its store of counters.
fn classify(path: &Path) -> anyhow::Result<(Input, std::path::PathBuf)> {
    if path.is_file() {
        return Ok((Input::Program, path.to_path_buf()));
    }
    if !path.is_dir() {
        bail!(
            "{}: no such file or directory (give a `kfdo optimize` output directory or a \
             results store)",
            path.display()
        );
    }
    let store = path.join("bench/results.db");
    if !store.is_file() {
        bail!(
            "{}: not a `kfdo optimize` output directory: {} is missing (run `kfdo optimize` \
             with -o {} first, or give a results store)",
            path.display(),
            store.display(),
            path.display()
        );
    }
    let kernel = crate::kernel::counters_vs_time::judged_path(path).is_file()
        || ["bench-uml", "bench-kvm"]
            .iter()
            .any(|d| path.join(d).join("results.db").is_file());
    Ok((
        if kernel {
            Input::Kernel
        } else {
            Input::Program
        },
        store,
    ))
}

/// The points of one input, refused when it gives none (with what it lacks).
pub fn points_of(path: &Path) -> anyhow::Result<Vec<Point>> {
    let (input, store) = classify(path)?;
    let group = group_name(path);
    let points = match input {
        Input::Program => {
            let (_, a) =
                load_and_analyze(&store).with_context(|| format!("reading {}", store.display()))?;
            program_points(&group, &a)
        }
        Input::Kernel => {
            let judged = crate::kernel::counters_vs_time::Judged::of_output(path)?;
            crate::kernel::counters_vs_time::points(&group, path, judged)?
        }
    };
    if points.is_empty() {
        bail!(
            "{}: no variant has both counters and a time change against its baseline ({})",
            path.display(),
            match input {
                Input::Program =>
                    "were its benchmarks run with `--counters none`, or with the baseline alone?",
                Input::Kernel =>
                    "its User-Mode Linux twins and KVM boots gave no variant beside the baseline",
            }
        );
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_named_by_the_output_directory() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("lua5.4");
        std::fs::create_dir_all(out.join("bench")).unwrap();
        std::fs::write(out.join("bench/results.db"), b"").unwrap();
        assert_eq!(group_name(&out), "lua5.4");
        assert_eq!(group_name(&out.join("bench/results.db")), "lua5.4");
        let other = dir.path().join("ab.db");
        std::fs::write(&other, b"").unwrap();
        assert_eq!(group_name(&other), "ab");
    }

    #[test]
    fn a_directory_without_a_store_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let e = points_of(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("not a `kfdo optimize` output directory") && e.contains("bench/results.db"),
            "{e}"
        );
        let e = points_of(&dir.path().join("gone")).unwrap_err().to_string();
        assert!(e.contains("no such file or directory"), "{e}");
    }
}
