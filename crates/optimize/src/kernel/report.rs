//! The kernel report: the benchmark's results with the kernel heat maps of the
//! evaluation workload's recordings.

use std::path::{Path, PathBuf};

use super::build::BuiltKernel;
use super::ctx::KernelCtx;
use super::summary::Span;
use super::train::KernelRecording;
use crate::steps::cache::Key;

impl KernelCtx {
    /// The report: the results with kernel heat maps; returns it and the hot-text spans.
    pub(crate) fn kernel_report(
        &self,
        db: &Path,
        heat: &[(BuiltKernel, KernelRecording)],
    ) -> anyhow::Result<(PathBuf, Vec<Span>)> {
        let r = &self.recipe;
        let dir = self.dir("report");
        let index = dir.join("index.html");
        let mut key = Key::new("kernel report")
            .add("results", crate::steps::cache::content_hash(db)?)
            .add("kfdo", &self.kfdo_hash);
        for (k, rec) in heat {
            key = key
                .add("heat", &k.variant)
                .add("kernel", &k.hash)
                .add("perf.data", &rec.hash);
        }
        let done = self.step(
            "report",
            key.finish(),
            std::slice::from_ref(&index),
            |log| {
                crate::steps::fresh_dir(&dir)?;
                let store = dir.join("kfdo.db");
                std::fs::copy(db, &store)?;
                let mut spans = Vec::new();
                for (k, rec) in heat {
                    let png = dir.join(format!(
                        "heat-{}.png",
                        crate::steps::cache::file_name(&k.variant)
                    ));
                    let req = kfdo_heatmap::HeatmapRequest {
                        store: Some(store.clone()),
                        label: Some(format!(
                            "{}: {} kernel ({}, evaluation workload)",
                            r.name, k.variant, r.benches[0].run
                        )),
                        ..kfdo_heatmap::HeatmapRequest::new(&k.vmlinux, &rec.perf_data, &png)
                    };
                    let map = kfdo_heatmap::make(&req).map_err(|e| log.failed(e))?;
                    log.say(&format!(
                        "{}: hot text span {} bytes ({} samples in vmlinux's text)",
                        k.variant,
                        kfdo_bench::report::fmt_count_int(map.span.bytes),
                        kfdo_bench::report::fmt_count_int(map.samples_in_text)
                    ));
                    spans.push(serde_json::json!({
                        "variant": k.variant, "bytes": map.span.bytes,
                        "lines": map.span.lines, "samples": map.samples_in_text,
                    }));
                }
                let done = kfdo_bench::report::write::write_report(
                    &kfdo_bench::report::write::ReportRequest {
                        store,
                        output: dir.clone(),
                        title: format!("kfdo optimize: {} kernel", r.name),
                        json: None,
                    },
                )
                .map_err(|e| log.failed(e))?;
                log.say(&format!("wrote {}", done.index.display()));
                Ok(serde_json::json!({ "spans": spans }))
            },
        )?;
        let spans = done
            .facts
            .get("spans")
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .map(|s| Span {
                        variant: s["variant"].as_str().unwrap_or("").to_string(),
                        bytes: s["bytes"].as_u64().unwrap_or(0),
                        lines: s["lines"].as_u64().unwrap_or(0) as usize,
                        samples: s["samples"].as_u64().unwrap_or(0),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok((dir, spans))
    }
}
