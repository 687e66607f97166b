//! What a heat map is drawn from: samples in time and address, and the
//! functions that label it.

/// One sample: when, and where in the binary (link-time virtual address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    pub time_ns: u64,
    pub addr: u64,
}

/// A function and its samples, for labels.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HotFunction {
    pub name: String,
    pub addr: u64,
    pub size: u64,
    pub samples: u64,
}
