//! The HTML report opens in headless Chromium (Debian's `chromium`) with no
//! console errors and no network, renders to a screenshot that is not blank,
//! and shows names with `<`, `&` and quotes as text, never as markup.
//!
//! The store is filled through the library with synthetic runs, so the test
//! needs no timing: only the rendering is under test here.

use std::path::Path;
use std::process::Command;

use kfdo_bench::counters::Counter;
use kfdo_bench::runner::{Arm, RunResult};
use kfdo_bench::store::Store;
use kfdo_heatmap::image;
use kfdo_heatmap::{self as heatmap, Grid, HotFunction, Point};

const EVIL_BASE: &str = r#"base <script>alert("x")</script> & 'q'"#;
const EVIL_NEW: &str = r#"new "O2" <b>bold</b> &amp; co"#;
const EVIL_BENCH: &str = r#"bench <img src=x onerror=alert(1)> & "quoted""#;
const EVIL_FN: &str = "std::vector<int>::push_back&<\"hot\">";

fn fill_store(db: &Path) {
    let s = Store::open(db).unwrap();
    let sess = s
        .begin_session(
            EVIL_BENCH,
            &kfdo_bench::env::capture("test"),
            &serde_json::json!({}),
        )
        .unwrap();
    let base = Arm {
        name: EVIL_BASE.into(),
        command: "./speedtest1 --size 5 <in >out && echo \"done\"".into(),
        flags: Some("-O0 -DNAME=\"<x>\"".into()),
        program: None,
    };
    let new = Arm {
        name: EVIL_NEW.into(),
        command: "./speedtest1-O2 --size 5".into(),
        flags: Some("-O2".into()),
        program: None,
    };
    let (ib, inew) = (
        s.variant(EVIL_BENCH, &base).unwrap(),
        s.variant(EVIL_BENCH, &new).unwrap(),
    );
    // Deterministic "timings": base around 0.200 s, new around 0.100 s.
    for i in 0..8 {
        let wob = ((i * 7919) % 13) as f64 / 13.0 - 0.5;
        for (id, t) in [(ib, 0.200 + 0.004 * wob), (inew, 0.100 + 0.002 * wob)] {
            let r = RunResult {
                metrics: Vec::new(),
                variant: 0,
                index: i,
                seq: i,
                wall_s: t,
                user_s: t * 0.98,
                sys_s: t * 0.01,
                started_unix: 0.0,
            };
            s.add_run(sess, id, &r).unwrap();
        }
    }
    for (id, ins, i1) in [
        (ib, 1_146_057_323.0, 300_780.0),
        (inew, 615_645_800.0, 184_182.0),
    ] {
        let c = |name: &str, value: f64| Counter::new(name, value, "cachegrind");
        s.add_counters(sess, id, &[c("instructions", ins), c("I1 misses", i1)])
            .unwrap();
    }
    s.add_counter_source(sess, "cachegrind", "simulated <caches> & branch predictor")
        .unwrap();
    s.set_notes(
        sess,
        &[kfdo_bench::Warning::Other {
            message: "a note with <tags> & \"quotes\"".to_string(),
        }],
    )
    .unwrap();
    s.finish_session(sess, "complete").unwrap();

    // A synthetic heat map: two hot bands.
    let mut pts = Vec::new();
    for t in 0..4000u64 {
        let addr = if t < 2500 {
            0x1200 + (t % 64)
        } else {
            0x3800 + (t % 32)
        };
        pts.push(Point {
            time_ns: t * 1000,
            addr,
        });
    }
    let g = Grid::build(&pts, 0x1000, 0x4000, 100, 120);
    let geo = heatmap::geometry(&g);
    let png = heatmap::render_png(&g, &geo).unwrap();
    let funcs = vec![HotFunction {
        name: EVIL_FN.into(),
        addr: 0x1200,
        size: 64,
        samples: 2500,
    }];
    let svg = heatmap::render_svg(&g, &geo, &png, "heat <map> & \"label\"", &funcs, 4000);
    let span = heatmap::hot_text_span(pts.iter().map(|p| (p.addr, 1)), 64, 0.9);
    s.add_heatmap(
        "heat <map> & \"label\"",
        "/tmp/prog<1>",
        &png,
        &svg,
        &serde_json::json!({"hot_text_bytes": span.bytes, "samples_in_text": 4000}),
    )
    .unwrap();
}

fn chromium() -> Command {
    let exe = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| Command::new(c).arg("--version").output().map(|o| o.status.success()).unwrap_or(false))
        .expect("headless Chromium is needed for this test: apt-get install chromium (scripts/install-deps.sh)");
    let mut c = Command::new(exe);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ]);
    c
}

#[test]
fn report_renders_in_headless_chromium_with_names_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    fill_store(&db);
    let rep = dir.path().join("report");
    let out = Command::new(env!("CARGO_BIN_EXE_kfdo"))
        .args(["report", "--store"])
        .arg(&db)
        .arg("-o")
        .arg(&rep)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let index = rep.join("index.html");
    let html = std::fs::read_to_string(&index).unwrap();

    // The source holds only escaped forms of the names.
    for raw in [
        "<script>",
        "<img src=x",
        "<b>bold</b>",
        "vector<int>",
        "<tags>",
    ] {
        assert!(!html.contains(raw), "unescaped {raw:?} in index.html");
    }
    assert!(
        html.contains("base &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;")
    );
    assert!(html.contains("&amp;amp; co"));
    // Nothing to fetch: every href/src is a data URI or a fragment (the SVG
    // namespace URI is a name, not a fetch).
    for attr in ["href=\"", "src=\"", "url("] {
        for (i, _) in html.match_indices(attr) {
            let v = &html[i + attr.len()..];
            assert!(
                v.starts_with("data:") || v.starts_with('#'),
                "external reference in the report: {}",
                &html[i..(i + 60).min(html.len())]
            );
        }
    }

    // The DOM as Chromium parsed it: the names are text, there is no script
    // or img element, and the verdict is there.
    let profile = dir.path().join("chromium-profile-dom");
    std::fs::create_dir(&profile).unwrap();
    let url = format!("file://{}", index.display());
    let dom = chromium()
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        dom.status.success(),
        "chromium --dump-dom failed: {}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom_text.contains("&lt;script&gt;alert"),
        "name not shown as text"
    );
    assert!(
        !dom_text.contains("<script"),
        "a <script> element was created"
    );
    // The only images are the report's own (heat maps as data URIs).
    for (i, _) in dom_text.match_indices("<img") {
        let tag = &dom_text[i..(i + 40).min(dom_text.len())];
        assert!(
            tag.starts_with("<img src=\"data:image/svg+xml;base64,"),
            "an <img> element was created from a name: {tag}"
        );
    }
    assert!(
        !dom_text.contains("<b>bold"),
        "a <b> element was created from a name"
    );
    assert!(
        dom_text.contains("2.00× faster"),
        "verdict missing from the rendered page"
    );

    // Screenshot, and the log of the same run: no console messages at all
    // (the page has no script; a blocked fetch would log a CSP violation).
    let profile = dir.path().join("chromium-profile-shot");
    std::fs::create_dir(&profile).unwrap();
    let shot = dir.path().join("shot.png");
    let run = chromium()
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--window-size=1280,2400")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "chromium --screenshot failed: {log}");
    let console: Vec<&str> = log
        .lines()
        .filter(|l| {
            l.contains("CONSOLE")
                || l.contains("Content Security Policy")
                || l.contains("Refused to")
        })
        .collect();
    assert!(console.is_empty(), "console messages: {console:#?}");

    let img = image::open(&shot).unwrap().to_rgb8();
    assert!(img.width() >= 1000 && img.height() >= 2000);
    // Not blank: the luminance varies, and there are both dark (text) pixels
    // and the green of the significant result.
    let n = (img.width() * img.height()) as f64;
    let lum: Vec<f64> = img
        .pixels()
        .map(|p| 0.299 * p[0] as f64 + 0.587 * p[1] as f64 + 0.114 * p[2] as f64)
        .collect();
    let mean = lum.iter().sum::<f64>() / n;
    let var = lum.iter().map(|l| (l - mean) * (l - mean)).sum::<f64>() / n;
    assert!(
        var > 100.0,
        "screenshot looks blank (luminance variance {var:.1})"
    );
    let dark = lum.iter().filter(|&&l| l < 80.0).count();
    assert!(
        dark > 2000,
        "too few dark pixels ({dark}): no text rendered?"
    );
    let green = img
        .pixels()
        .filter(|p| p[0] == 0xd4 && p[1] == 0xf5 && p[2] == 0xd4)
        .count();
    assert!(
        green > 500,
        "the green 'faster' cell is missing ({green} pixels)"
    );
    // Keep the screenshot for people to look at.
    let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report_chromium.png");
    let _ = std::fs::copy(&shot, keep);
}

/// The variants of a `kfdo optimize` run with the emulated counters: the counters table
/// fits a 1400-pixel window without scrolling sideways. Measured by Chromium on a copy of
/// the page with a script (the report itself allows none) that writes each counters
/// table's overflow into the DOM.
#[test]
fn counters_of_an_optimize_run_fit_a_1400_pixel_window() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let s = Store::open(&db).unwrap();
    let sess = s
        .begin_session(
            "sqlite3",
            &kfdo_bench::env::capture("test"),
            &serde_json::json!({}),
        )
        .unwrap();
    let names = [
        "baseline",
        "autofdo",
        "autofdo-llvm-profgen",
        "ifdo",
        "autofdo+thinlto",
        "propeller",
        "autofdo+thinlto+propeller",
        "autofdo+thinlto+bolt",
    ];
    for (k, name) in names.iter().enumerate() {
        let v = Arm {
            name: name.to_string(),
            command: format!("./{name}/sqlite3 speedtest.sql"),
            flags: None,
            program: None,
        };
        let id = s.variant("sqlite3", &v).unwrap();
        for i in 0..4 {
            let t = 1.0 - 0.01 * k as f64 + 0.001 * i as f64;
            let r = RunResult {
                metrics: Vec::new(),
                variant: 0,
                index: i,
                seq: i,
                wall_s: t,
                user_s: t,
                sys_s: 0.0,
                started_unix: 0.0,
            };
            s.add_run(sess, id, &r).unwrap();
        }
        let c = |n: &str, x: f64| Counter::new(n, x * (1.0 - 0.013 * k as f64), "emulated");
        s.add_counters(
            sess,
            id,
            &[
                c("instructions", 164_481_667_350.0),
                c("taken branches", 16_448_166_735.0),
                c("conditional branches", 20_123_456_789.0),
                c("L1i misses (32 KiB, 8-way)", 1_234_567_890.0),
                c("iTLB misses (64 entries)", 123_456_789.0),
            ],
        )
        .unwrap();
    }
    s.add_counter_source(sess, "emulated", "kfdo's QEMU plugin")
        .unwrap();
    s.finish_session(sess, "complete").unwrap();
    drop(s);

    let rep = dir.path().join("report");
    let out = Command::new(env!("CARGO_BIN_EXE_kfdo"))
        .args(["report", "--store"])
        .arg(&db)
        .arg("-o")
        .arg(&rep)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(rep.join("index.html")).unwrap();
    let csp_start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let csp_end = csp_start + html[csp_start..].find('>').unwrap() + 1;
    let probe = format!(
        "{}{}",
        &html[..csp_start],
        &html[csp_end..].replace(
            "</body>",
            "<script>document.body.setAttribute('data-overflow', \
             [...document.querySelectorAll('table.counters')].map(t => \
             t.parentElement.scrollWidth - t.parentElement.clientWidth).join(','));</script></body>"
        )
    );
    let page = rep.join("probe.html");
    std::fs::write(&page, probe).unwrap();
    let profile = dir.path().join("chromium-profile-width");
    std::fs::create_dir(&profile).unwrap();
    let dom = chromium()
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--window-size=1400,1000")
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&dom.stdout);
    let at = text.find("data-overflow=\"").unwrap_or_else(|| {
        panic!(
            "no measurement in the DOM: {}",
            String::from_utf8_lossy(&dom.stderr)
        )
    });
    let values = &text[at + 15..];
    let values = &values[..values.find('"').unwrap()];
    assert!(!values.is_empty(), "no counters table");
    for v in values.split(',') {
        let overflow: i64 = v.parse().unwrap();
        assert!(
            overflow <= 0,
            "the counters table scrolls by {overflow} px at 1400 px"
        );
    }
}
