//! The hot text span: how many bytes of text hold a fraction of the samples.

/// The bytes of text that hold `fraction` of the samples.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HotSpan {
    pub fraction: f64,
    /// Granule: samples are counted per aligned block of this many bytes
    /// (64: an x86 cache line).
    pub line_size: u64,
    /// Number of hottest blocks needed to reach `fraction` of the samples.
    pub lines: usize,
    /// `lines * line_size`: the hot text span.
    pub bytes: u64,
    /// Lowest and one-past-highest address of those blocks: how far apart
    /// the hot code is spread.
    pub extent_lo: u64,
    pub extent_hi: u64,
    pub total_samples: u64,
}

/// The hot text span of weighted addresses: count samples per aligned
/// `line_size` block, take blocks from the hottest down (ties: lower address
/// first) until they hold at least `fraction` of all samples.
pub fn hot_text_span(
    addrs: impl IntoIterator<Item = (u64, u64)>,
    line_size: u64,
    fraction: f64,
) -> HotSpan {
    let line_size = line_size.max(1);
    let mut per_line: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    let mut total = 0u64;
    for (a, w) in addrs {
        *per_line.entry(a / line_size).or_insert(0) += w;
        total += w;
    }
    let mut lines: Vec<(u64, u64)> = per_line.into_iter().collect();
    lines.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let need = (fraction.clamp(0.0, 1.0) * total as f64).ceil() as u64;
    let mut acc = 0u64;
    let mut taken = 0usize;
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for &(line, c) in &lines {
        if acc >= need {
            break;
        }
        acc += c;
        taken += 1;
        lo = lo.min(line * line_size);
        hi = hi.max((line + 1) * line_size);
    }
    if taken == 0 {
        lo = 0;
    }
    HotSpan {
        fraction,
        line_size,
        lines: taken,
        bytes: taken as u64 * line_size,
        extent_lo: lo,
        extent_hi: hi,
        total_samples: total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_span_synthetic() {
        // 900 samples in one 64-byte line, 50 + 50 spread over two far lines:
        // 90 % is reached by the hot line alone.
        let mut v = [(0x1000u64, 900u64), (0x8000, 50), (0x9000, 50)];
        let s = hot_text_span(v.iter().copied(), 64, 0.9);
        assert_eq!((s.lines, s.bytes, s.total_samples), (1, 64, 1000));
        assert_eq!((s.extent_lo, s.extent_hi), (0x1000, 0x1040));
        // 89.9 % in the hot line: one more line is needed, the lower one on a tie.
        v[0].1 = 899;
        let s = hot_text_span(v.iter().copied(), 64, 0.9);
        assert_eq!((s.lines, s.bytes), (2, 128));
        assert_eq!((s.extent_lo, s.extent_hi), (0x1000, 0x8040));
        // Uniform over 100 lines: 90 lines.
        let u: Vec<(u64, u64)> = (0..100u64).map(|i| (0x4000 + i * 64 + 3, 10)).collect();
        let s = hot_text_span(u.iter().copied(), 64, 0.9);
        assert_eq!((s.lines, s.bytes), (90, 5760));
        // Two addresses in one line count together.
        let s = hot_text_span([(0x40, 5), (0x7f, 5), (0x80, 1)], 64, 0.9);
        assert_eq!((s.lines, s.bytes), (1, 64));
        // A tighter layout of the same samples has a smaller span.
        let tight: Vec<(u64, u64)> = (0..100u64).map(|i| (0x4000 + i * 16, 10)).collect();
        assert!(hot_text_span(tight.iter().copied(), 64, 0.9).bytes < 5760);
        // Empty input.
        let s = hot_text_span(std::iter::empty(), 64, 0.9);
        assert_eq!((s.lines, s.bytes, s.total_samples), (0, 0, 0));
    }
}
