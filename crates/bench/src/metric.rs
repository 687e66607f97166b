//! Measurements a run reports besides its time: the operations per second a workload
//! prints, the counters of an emulated kernel during the measured window, ... Each run
//! can carry any number; the analysis summarizes each one per variant and compares it
//! with the baseline the way it compares times (bootstrap interval of the ratio,
//! Welch's test), so a verdict on "kernel L1i misses" has the same footing as one on
//! seconds.

use serde::{Deserialize, Serialize};

/// Which way is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Lower,
    Higher,
}

impl Better {
    pub fn name(self) -> &'static str {
        match self {
            Better::Lower => "lower",
            Better::Higher => "higher",
        }
    }

    pub fn parse(s: &str) -> Better {
        if s == "higher" {
            Better::Higher
        } else {
            Better::Lower
        }
    }
}

/// One measured value of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// As shown in tables, e.g. "ops/s (emulated time)", "kernel L1i misses".
    pub name: String,
    pub value: f64,
    /// Unit for display ("ops/s", "" for counts).
    pub unit: String,
    pub better: Better,
    /// Who measured it ("workload", "emulated", ...).
    pub source: String,
}

impl Metric {
    pub fn new(name: &str, value: f64, unit: &str, better: Better, source: &str) -> Metric {
        Metric {
            name: name.to_string(),
            value,
            unit: unit.to_string(),
            better,
            source: source.to_string(),
        }
    }
}
