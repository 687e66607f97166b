//! The verdict in a few lines: per benchmark, each variant's change against
//! the baseline with its interval and significance, the counters, and
//! AutoFDO's gain as a share of instrumented PGO's and against
//! llvm-profgen's profile, and what each Propeller or BOLT variant adds to the build
//! it optimizes.

use std::fmt::Write;
use std::path::Path;

use kfdo_bench::analysis::{self, BenchmarkAnalysis};
use kfdo_bench::report::{fmt_counter_cell, fmt_p, fmt_pct, fmt_time};
use kfdo_bench::stats;
use kfdo_bench::store::Store;
use serde::Serialize;

/// Gains (time saved, percent of the baseline's mean) per benchmark.
#[derive(Debug, Serialize)]
pub struct Gains {
    pub benchmark: String,
    pub variants: Vec<VariantGain>,
    /// autofdo's gain / ifdo's gain, when ifdo is significantly faster.
    pub autofdo_share_of_ifdo: Option<f64>,
    /// autofdo's gain minus autofdo-llvm-profgen's, in points.
    pub autofdo_minus_llvm_profgen: Option<f64>,
    /// Whether autofdo's and autofdo-llvm-profgen's times differ significantly (Welch's
    /// test and the interval of their ratio, as against the baseline).
    pub autofdo_vs_llvm_profgen_significant: Option<bool>,
    /// Each layout variant (Propeller, BOLT) judged, against the build it optimizes.
    pub layout_over_base: Vec<LayoutGain>,
}

/// What a layout variant adds to its base build: time saved against the base's mean.
#[derive(Debug, Serialize)]
pub struct LayoutGain {
    pub variant: String,
    pub base: String,
    /// Percent of the base's mean time (negative: slower than its base).
    pub gain_over_base_pct: f64,
}

#[derive(Debug, Serialize)]
pub struct VariantGain {
    pub name: String,
    pub mean_s: f64,
    pub gain_pct: Option<f64>,
    pub gain_lo_pct: Option<f64>,
    pub gain_hi_pct: Option<f64>,
    pub p: Option<f64>,
    pub significant: bool,
}

pub fn gains(b: &BenchmarkAnalysis) -> Gains {
    let variants: Vec<VariantGain> = b
        .variants
        .iter()
        .map(|v| {
            let c = v.vs_baseline.as_ref();
            VariantGain {
                name: v.name.clone(),
                mean_s: v.wall.as_ref().map(|w| w.mean).unwrap_or(f64::NAN),
                gain_pct: c.map(|c| (1.0 - c.ratio.estimate) * 100.0),
                // A higher ratio bound is a lower gain.
                gain_lo_pct: c.map(|c| (1.0 - c.ratio.hi) * 100.0),
                gain_hi_pct: c.map(|c| (1.0 - c.ratio.lo) * 100.0),
                p: c.and_then(|c| c.welch.map(|w| w.p)),
                significant: c.is_some_and(|c| c.significant),
            }
        })
        .collect();
    let mut g = Gains::new(b.name.clone(), variants);
    let wall = |n: &str| b.variants.iter().find(|v| v.name == n).map(|v| &v.wall_s);
    if let (Some(af), Some(lp)) = (wall("autofdo"), wall("autofdo-llvm-profgen")) {
        g.autofdo_vs_llvm_profgen_significant =
            stats::compare_pair(lp, af, stats::BOOTSTRAP_RESAMPLES).map(|c| c.significant);
    }
    g
}

impl Gains {
    /// The gains of a benchmark's variants, and the two comparisons derived from them. A
    /// share of PGO's gain exists only when both are gains and PGO's is significant.
    fn new(benchmark: String, variants: Vec<VariantGain>) -> Gains {
        let gain = |n: &str| {
            variants
                .iter()
                .find(|v| v.name == n)
                .and_then(|v| v.gain_pct.map(|g| (g, v.significant)))
        };
        let autofdo_share_of_ifdo = match (gain("autofdo"), gain("ifdo")) {
            (Some((a, _)), Some((i, true))) if i > 0.0 && a > 0.0 => Some(a / i),
            _ => None,
        };
        let autofdo_minus_llvm_profgen = match (gain("autofdo"), gain("autofdo-llvm-profgen")) {
            (Some((a, _)), Some((l, _))) => Some(a - l),
            _ => None,
        };
        let mean = |n: &str| variants.iter().find(|v| v.name == n).map(|v| v.mean_s);
        let layout_over_base = variants
            .iter()
            .filter_map(|v| {
                let variant = crate::vocabulary::Variant::ALL
                    .into_iter()
                    .find(|x| x.name() == v.name)?;
                let base = variant.base()?.name();
                let base_mean = mean(base).filter(|m| m.is_finite() && *m > 0.0)?;
                v.mean_s.is_finite().then(|| LayoutGain {
                    variant: v.name.clone(),
                    base: base.to_string(),
                    gain_over_base_pct: (1.0 - v.mean_s / base_mean) * 100.0,
                })
            })
            .collect();
        Gains {
            benchmark,
            variants,
            autofdo_share_of_ifdo,
            autofdo_minus_llvm_profgen,
            autofdo_vs_llvm_profgen_significant: None,
            layout_over_base,
        }
    }
}

/// How the page's changes read, said once at its top: every table and section under it
/// (the verdicts, the counters, the LLVM releases' comparison) signs a change this way.
pub const SIGNS: &str = "Every change on this page is against the baseline, in percent of \
     the baseline's value: − is less (a shorter time, fewer events), + is more; the verdicts \
     say faster or slower in words.";

/// The summary text (Markdown that reads well on a terminal) and the gains.
/// `emulated`: what the timed runs' seconds are when they are not this CPU's (a cross
/// build timed under QEMU), said under every table and in its time column.
/// `profiles_equal`: kfdo's AutoFDO profile equals llvm-profgen's, so autofdo and
/// autofdo-llvm-profgen are one build and their times are not weighed against each other.
pub fn summarize(
    store: &Path,
    recipe: &str,
    notes: &[String],
    emulated: Option<&str>,
    profiles_equal: bool,
) -> anyhow::Result<(String, Vec<Gains>)> {
    let contents = Store::open_existing(store)?.load()?;
    let a = analysis::analyze(&contents, stats::BOOTSTRAP_RESAMPLES);
    let mut s = String::new();
    let mut all = Vec::new();
    writeln!(s, "# kfdo optimize: {recipe}\n")?;
    writeln!(s, "{SIGNS}\n")?;
    for n in notes {
        writeln!(s, "- {n}")?;
    }
    if !notes.is_empty() {
        writeln!(s)?;
    }
    for b in &a.benchmarks {
        let g = gains(b);
        let runs = b
            .variants
            .iter()
            .filter_map(|v| v.wall.as_ref())
            .map(|w| w.n)
            .min();
        writeln!(
            s,
            "## {} ({} timed runs per variant, interleaved; baseline '{}')\n",
            b.name,
            runs.unwrap_or(0),
            b.baseline
        )?;
        if let Some(what) = emulated {
            writeln!(
                s,
                "Times are emulated time ({what}): they rank the variants under the \
                 emulator, not on the target's CPU; the counters below count the program's \
                 own instructions and branches.\n"
            )?;
        }
        let time = if emulated.is_some() {
            "mean emulated time"
        } else {
            "mean time"
        };
        writeln!(
            s,
            "| variant | {time} | time change [95 % CI] | p (Welch) | verdict |"
        )?;
        writeln!(s, "|---|---:|---:|---:|---|")?;
        for (v, va) in g.variants.iter().zip(&b.variants) {
            let (change, p, verdict) = match (v.gain_pct, va.vs_baseline.as_ref()) {
                (Some(gp), Some(c)) => (
                    format!(
                        "{} [{}, {}]",
                        fmt_pct(c.change_pct()),
                        fmt_pct((c.ratio.lo - 1.0) * 100.0),
                        fmt_pct((c.ratio.hi - 1.0) * 100.0)
                    ),
                    format!("{}{}", v.p.map(fmt_p).unwrap_or_else(|| "–".into()), c.mark),
                    if !c.significant {
                        "no significant difference".to_string()
                    } else if gp > 0.0 {
                        "faster".to_string()
                    } else {
                        "slower".to_string()
                    },
                ),
                _ => ("(baseline)".into(), String::new(), String::new()),
            };
            writeln!(
                s,
                "| {} | {} | {change} | {p} | {verdict} |",
                v.name,
                fmt_time(v.mean_s)
            )?;
        }
        if !b.counters.is_empty() {
            writeln!(s, "\nCounters ({}):\n", b.counter_sources.join(", "))?;
            write!(s, "| counter |")?;
            for v in &b.variants {
                write!(s, " {} |", v.name)?;
            }
            writeln!(s)?;
            write!(s, "|---|")?;
            for _ in &b.variants {
                write!(s, "---:|")?;
            }
            writeln!(s)?;
            for row in &b.counters {
                write!(s, "| {} |", row.name)?;
                let base = row.values.first().copied().flatten();
                for (i, val) in row.values.iter().enumerate() {
                    write!(s, " {} |", fmt_counter_cell(i, base, *val))?;
                }
                writeln!(s)?;
            }
        }
        writeln!(s)?;
        for line in verdict_lines(&g, profiles_equal) {
            writeln!(s, "- {line}")?;
        }
        writeln!(s)?;
        for w in &b.warnings {
            writeln!(s, "- warning: {w}")?;
        }
        all.push(g);
    }
    let points = kfdo_bench::counters_vs_time::program_points(recipe, &a);
    // A cross build's times are its emulator's: nothing to hold the counters against.
    if kfdo_bench::counters_vs_time::any_real_time(&points) {
        if !s.ends_with("\n\n") {
            writeln!(s)?;
        }
        writeln!(
            s,
            "## Counters against time\n\n{}",
            kfdo_bench::report::counters_vs_time::markdown(&points)
        )?;
    }
    Ok((s, all))
}

/// "saves 9.08 %" or "is 8.88 % slower": a gain in words, so a regression never reads as
/// a negative saving.
fn change_words(gain_pct: f64) -> String {
    if gain_pct >= 0.0 {
        format!("saves {gain_pct:.2} %")
    } else {
        format!("is {:.2} % slower", -gain_pct)
    }
}

/// The summary's two comparisons: autofdo's gain as a share of instrumented
/// PGO's, and against llvm-profgen's profile. A share is given only when both gains are
/// gains (and PGO's is significant): a share of a loss says nothing.
fn verdict_lines(g: &Gains, profiles_equal: bool) -> Vec<String> {
    let mut out = autofdo_lines(g);
    out.extend(against_llvm_profgen(g, profiles_equal));
    out.extend(layout_lines(g));
    out
}

/// What Propeller or BOLT adds on top of autofdo+thinlto (on top of the baseline, the
/// table's row says it already): the mean times' ratio, so the two layouts of the same
/// build compare directly.
fn layout_lines(g: &Gains) -> Vec<String> {
    g.layout_over_base
        .iter()
        .filter(|l| l.base != "baseline")
        .map(|l| {
            format!(
                "{} {} against {} alone (mean times).",
                l.variant,
                change_words(l.gain_over_base_pct),
                l.base
            )
        })
        .collect()
}

fn autofdo_lines(g: &Gains) -> Vec<String> {
    let find = |n: &str| g.variants.iter().find(|v| v.name == n);
    let mut out = Vec::new();
    let Some(af) = find("autofdo") else {
        return out;
    };
    let Some(af_gain) = af.gain_pct else {
        return out;
    };
    if let Some(ifdo) = find("ifdo") {
        let ifdo_gain = ifdo.gain_pct.unwrap_or(f64::NAN);
        match g.autofdo_share_of_ifdo {
            Some(share) => out.push(format!(
                "autofdo saves {af_gain:.2} % of the time: **{:.0} %** of instrumented PGO's {ifdo_gain:.2} % (target: at least 90 %).",
                share * 100.0
            )),
            _ if !ifdo.significant || ifdo_gain <= 0.0 => out.push(
                "ifdo is not significantly faster than the baseline, so no share of its gain is given."
                    .into(),
            ),
            _ => out.push(format!(
                "autofdo {}{} while instrumented PGO {}: no share of PGO's gain is given; the \
                 counters and heat maps show where the profile led the compiler astray.",
                change_words(af_gain),
                if af.significant { " (significant)" } else { " (not significant)" },
                change_words(ifdo_gain)
            )),
        }
    }
    out
}

/// autofdo (kfdo's profile) against autofdo-llvm-profgen (llvm-profgen's): one build
/// when the profiles are equal, said so with no target (their times differ by noise
/// alone); else the target line only when the two times differ significantly, since a
/// gap within the noise neither meets nor misses it.
fn against_llvm_profgen(g: &Gains, profiles_equal: bool) -> Option<String> {
    let find = |n: &str| g.variants.iter().find(|v| v.name == n);
    let af = find("autofdo")?.gain_pct?;
    let lp = find("autofdo-llvm-profgen")?.gain_pct?;
    let d = g.autofdo_minus_llvm_profgen?;
    let both = format!(
        "autofdo (kfdo's profile) {}, autofdo-llvm-profgen {}",
        change_words(af),
        change_words(lp)
    );
    Some(if profiles_equal {
        "autofdo and autofdo-llvm-profgen are the same build (kfdo's profile equals \
         llvm-profgen's): their times differ by noise alone, so they are not weighed \
         against each other."
            .to_string()
    } else if g.autofdo_vs_llvm_profgen_significant == Some(true) {
        format!(
            "{both}: autofdo is {:.2} points of the baseline's time {} (significant; target: \
             at least the same gain).",
            d.abs(),
            if d < 0.0 { "slower" } else { "faster" }
        )
    } else {
        format!("{both}: no significant difference between the two builds.")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gains(list: &[(&str, f64, bool)]) -> Gains {
        let variants: Vec<VariantGain> = list
            .iter()
            .map(|&(name, g, significant)| VariantGain {
                name: name.into(),
                mean_s: 1.0,
                gain_pct: Some(g),
                gain_lo_pct: Some(g - 1.0),
                gain_hi_pct: Some(g + 1.0),
                p: Some(if significant { 0.001 } else { 0.5 }),
                significant,
            })
            .collect();
        Gains::new("b".into(), variants)
    }

    #[test]
    fn layout_variants_are_weighed_against_their_base() {
        let mut g = gains(&[
            ("baseline", 0.0, false),
            ("autofdo+thinlto", 10.0, true),
            ("propeller", 3.0, true),
            ("autofdo+thinlto+bolt", 12.0, true),
        ]);
        // Means: the baseline 1.0 s, autofdo+thinlto 0.8 s, +bolt 0.76 s.
        for (v, m) in g.variants.iter_mut().zip([1.0, 0.8, 0.97, 0.76]) {
            v.mean_s = m;
        }
        let g = Gains::new(g.benchmark, g.variants);
        let over: Vec<(&str, &str, String)> = g
            .layout_over_base
            .iter()
            .map(|l| {
                (
                    l.variant.as_str(),
                    l.base.as_str(),
                    format!("{:.2}", l.gain_over_base_pct),
                )
            })
            .collect();
        assert_eq!(
            over,
            [
                ("propeller", "baseline", "3.00".to_string()),
                (
                    "autofdo+thinlto+bolt",
                    "autofdo+thinlto",
                    "5.00".to_string()
                )
            ]
        );
        assert_eq!(
            verdict_lines(&g, false),
            ["autofdo+thinlto+bolt saves 5.00 % against autofdo+thinlto alone (mean times)."]
        );
        let json = serde_json::to_value(&g).unwrap();
        assert_eq!(json["layout_over_base"][1]["base"], "autofdo+thinlto");
    }

    #[test]
    fn a_gain_is_a_share_of_pgo_and_a_loss_is_called_a_loss() {
        let mut g = gains(&[
            ("autofdo", 9.08, true),
            ("autofdo-llvm-profgen", 9.65, true),
            ("ifdo", 10.84, true),
        ]);
        g.autofdo_vs_llvm_profgen_significant = Some(true);
        let win = verdict_lines(&g, false);
        assert_eq!(win.len(), 2, "{win:?}");
        assert!(
            win[0].contains("**84 %** of instrumented PGO's 10.84 %"),
            "{win:?}"
        );
        assert!(
            win[1].contains(
                "saves 9.08 %, autofdo-llvm-profgen saves 9.65 %: autofdo is 0.57 points of \
                 the baseline's time slower (significant; target: at least the same gain)"
            ),
            "{win:?}"
        );

        // lua5.4 as measured: autofdo slower, PGO barely faster. No "-723 %" share.
        let loss = verdict_lines(
            &gains(&[
                ("autofdo", -8.88, true),
                ("autofdo-llvm-profgen", -8.48, true),
                ("ifdo", 1.23, true),
            ]),
            false,
        );
        assert!(
            loss[0].starts_with(
                "autofdo is 8.88 % slower (significant) while instrumented PGO saves 1.23 %"
            ),
            "{loss:?}"
        );
        assert!(!loss.iter().any(|l| l.contains("saves -")), "{loss:?}");
        assert!(loss[1].contains("is 8.88 % slower, autofdo-llvm-profgen is 8.48 % slower"));

        let flat = verdict_lines(
            &gains(&[("autofdo", 2.0, true), ("ifdo", 0.5, false)]),
            false,
        );
        assert_eq!(
            flat,
            ["ifdo is not significantly faster than the baseline, so no share of its gain is given."]
        );
    }

    /// The two profiles byte-identical (as measured: autofdo 0.05 %, autofdo-llvm-profgen
    /// 2.87 %, one build timed twice): no target line, the summary says they are one build.
    #[test]
    fn equal_profiles_are_one_build_and_get_no_target_line() {
        let mut g = gains(&[
            ("autofdo", 0.05, false),
            ("autofdo-llvm-profgen", 2.87, true),
        ]);
        g.autofdo_vs_llvm_profgen_significant = Some(true);
        let same = verdict_lines(&g, true);
        assert_eq!(same.len(), 1, "{same:?}");
        assert!(same[0].starts_with("autofdo and autofdo-llvm-profgen are the same build"));
        assert!(!same.iter().any(|l| l.contains("target")), "{same:?}");
    }

    /// Different profiles whose builds' times do not differ significantly: both gains,
    /// and no target to meet or miss.
    #[test]
    fn a_target_line_needs_a_significant_difference() {
        let mut g = gains(&[
            ("autofdo", 0.05, false),
            ("autofdo-llvm-profgen", 2.87, true),
        ]);
        g.autofdo_vs_llvm_profgen_significant = Some(false);
        let lines = verdict_lines(&g, false);
        assert_eq!(
            lines,
            [
                "autofdo (kfdo's profile) saves 0.05 %, autofdo-llvm-profgen saves 2.87 %: no \
              significant difference between the two builds."
            ]
        );
        g.autofdo_vs_llvm_profgen_significant = None;
        assert!(!verdict_lines(&g, false)[0].contains("target"));
        g.autofdo_vs_llvm_profgen_significant = Some(true);
        let l = &verdict_lines(&g, false)[0];
        assert!(
            l.contains("autofdo is 2.82 points of the baseline's time slower (significant; target"),
            "{l}"
        );
    }

    /// A store of two variants, the second 10 % faster: the page's one convention.
    fn store_with_a_faster_variant(db: &Path) {
        use kfdo_bench::runner::{Arm, RunResult};
        let s = Store::open(db).unwrap();
        let sess = s
            .begin_session(
                "b",
                &kfdo_bench::env::capture("test"),
                &serde_json::json!({}),
            )
            .unwrap();
        let variant = |name: &str| Arm {
            name: name.into(),
            command: format!("./{name}"),
            flags: None,
            program: None,
        };
        let ids = [
            s.variant("b", &variant("baseline")).unwrap(),
            s.variant("b", &variant("autofdo")).unwrap(),
        ];
        for i in 0..8 {
            let wobble = (i % 3) as f64 * 0.001;
            for (id, t) in ids.iter().zip([0.200, 0.180]) {
                let r = RunResult {
                    metrics: Vec::new(),
                    variant: 0,
                    index: i,
                    seq: i,
                    wall_s: t + wobble,
                    user_s: t,
                    sys_s: 0.0,
                    started_unix: 0.0,
                };
                s.add_run(sess, *id, &r).unwrap();
            }
        }
        s.finish_session(sess, "complete").unwrap();
    }

    /// One sign convention on the page: a change (− is faster) said once at the top,
    /// and the verdict table's time column in it, never a "time saved".
    #[test]
    fn the_page_signs_every_change_one_way_and_says_so_once() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        store_with_a_faster_variant(&db);
        let (page, _) = summarize(&db, "r", &[], None, false).unwrap();
        assert_eq!(page.matches(SIGNS).count(), 1, "{page}");
        assert!(page.find(SIGNS) < page.find("## b"), "{page}");
        assert!(!page.contains("saved"), "{page}");
        assert!(page.contains("| time change [95 % CI] |"), "{page}");
        let row = page.lines().find(|l| l.starts_with("| autofdo |")).unwrap();
        assert!(row.contains("| \u{2212}10.0 % ["), "{row}");
        assert!(row.ends_with("| faster |"), "{row}");
    }
}
