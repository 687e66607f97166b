//! The words for sample counts, the same in every command's summary: one recording
//! holds samples of every process, fewer of them are the binary's, fewer still fall
//! in its text.

/// `56,972`: the reports' grouping, so a count reads the same in both.
pub fn grouped(n: u64) -> String {
    kfdo_bench::report::fmt_count_int(n)
}

/// Every sample the recording holds.
pub fn recorded(n: u64) -> String {
    format!("{} samples recorded (all processes)", grouped(n))
}

/// The samples that are the binary's (a branch record from or to it, or its IP).
pub fn in_binary(n: u64, binary: &std::path::Path) -> String {
    format!("{} samples in {}", grouped(n), binary.display())
}

/// The binary's samples whose address falls in its executable sections.
pub fn in_text(n: u64, binary: &std::path::Path) -> String {
    format!("{} samples in {}'s text", grouped(n), binary.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(56972), "56,972");
        assert_eq!(grouped(1234567), "1,234,567");
    }
}
