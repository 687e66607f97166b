//! BOLT's fdata text: one record per line,
//! `FROM_IS_SYM FROM_NAME FROM_OFF TO_IS_SYM TO_NAME TO_OFF MISPREDS COUNT`, offsets in
//! lower-case hex from the function's start; an address outside every function is
//! `0 [unknown] 0`. kfdo writes the records sorted, so that the file is the same run to
//! run (perf2bolt writes them in hash-table order; compare sorted).

use std::collections::BTreeMap;
use std::io::Write;

/// One end of a record.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// `None`: outside every function of the binary.
    pub function: Option<String>,
    pub offset: u64,
}

impl Location {
    pub fn unknown() -> Location {
        Location {
            function: None,
            offset: 0,
        }
    }

    pub fn at(function: &str, offset: u64) -> Location {
        Location {
            function: Some(function.to_string()),
            offset,
        }
    }

    fn write(&self, out: &mut dyn Write) -> std::io::Result<()> {
        match &self.function {
            Some(name) => write!(out, "1 {name} {:x}", self.offset),
            None => write!(out, "0 [unknown] {:x}", self.offset),
        }
    }
}

/// Counts of one (from, to) pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub mispreds: u64,
    pub count: u64,
}

/// The records of a profile, keyed by their two ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fdata {
    pub records: BTreeMap<(Location, Location), Counts>,
}

impl Fdata {
    pub fn add(&mut self, from: Location, to: Location, count: u64, mispreds: u64) {
        let c = self.records.entry((from, to)).or_default();
        c.count += count;
        c.mispreds += mispreds;
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The total of all records' counts.
    pub fn total(&self) -> u64 {
        self.records.values().map(|c| c.count).sum()
    }

    pub fn write(&self, out: &mut dyn Write) -> std::io::Result<()> {
        for ((from, to), c) in &self.records {
            from.write(out)?;
            out.write_all(b" ")?;
            to.write(out)?;
            writeln!(out, " {} {}", c.mispreds, c.count)?;
        }
        Ok(())
    }

    /// Reads fdata text (kfdo's or perf2bolt's branch records). Errors name the line.
    pub fn parse(text: &str) -> Result<Fdata, String> {
        let mut f = Fdata::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line == "boltedcollection" || line.starts_with("no_lbr") {
                continue;
            }
            let bad = |what: &str| format!("line {}: {what}: {line:?}", n + 1);
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() != 8 {
                return Err(bad("expected 8 fields (a branch record)"));
            }
            let loc = |is_sym: &str, name: &str, off: &str| -> Result<Location, String> {
                let offset = u64::from_str_radix(off, 16).map_err(|_| bad("bad hex offset"))?;
                match is_sym {
                    "1" => Ok(Location::at(name, offset)),
                    "0" => Ok(Location {
                        function: None,
                        offset,
                    }),
                    _ => Err(bad("the location kind must be 0 or 1")),
                }
            };
            let from = loc(fields[0], fields[1], fields[2])?;
            let to = loc(fields[3], fields[4], fields[5])?;
            let mispreds = fields[6].parse().map_err(|_| bad("bad mispredict count"))?;
            let count = fields[7].parse().map_err(|_| bad("bad count"))?;
            f.add(from, to, count, mispreds);
        }
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_reads_back() {
        let mut f = Fdata::default();
        f.add(
            Location::at("main", 0x54),
            Location::at("work/1", 0),
            6339,
            0,
        );
        f.add(Location::unknown(), Location::at("main", 0x87), 1, 0);
        f.add(Location::at("main", 0x54), Location::at("work/1", 0), 1, 1);
        let mut out = Vec::new();
        f.write(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "0 [unknown] 0 1 main 87 0 1\n1 main 54 1 work/1 0 1 6340\n"
        );
        assert_eq!(Fdata::parse(&text).unwrap(), f);
        assert!(Fdata::parse("1 main 5g 1 main 0 0 1")
            .unwrap_err()
            .contains("line 1"));
    }
}
