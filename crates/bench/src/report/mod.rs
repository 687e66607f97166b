//! Reports of a results store: static HTML (no network, no script; plots
//! as inline SVG, heat maps as data URIs) and Markdown for mailing lists and
//! pull requests. One file per format, as hyperfine's `export/`.
//!
//! Every string that comes from a command line, a binary or a profile goes
//! through [`escape_html`] (or [`escape_markdown`]) on its way out.

pub mod counters_vs_time;
mod determinism;
mod escape;
mod figures;
pub mod html;
pub mod markdown;
pub mod metrics;
pub mod plot;
pub mod profiles;
pub mod scatter;
pub mod text;
pub mod write;

pub use escape::{base64, escape_html, escape_markdown};
pub use figures::{
    fmt_count, fmt_count_int, fmt_counter_cell, fmt_p, fmt_pct, fmt_speed, fmt_time, fmt_utc,
    geomean_ratio, geomean_verdict,
};
