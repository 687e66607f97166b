//! The sample-profile model: the same shape as LLVM's `FunctionSamples`
//! (non context-sensitive, line-based AutoFDO profiles).
//!
//! A [`Profile`] maps each top-level (out-of-line) function to its
//! [`FunctionSamples`]: total samples, head samples (samples at entry, i.e.
//! the function's call count estimate), body counts keyed by
//! [`LineLocation`] (line offset from the function's start line plus DWARF
//! discriminator), call targets per location (indirect/direct calls that were
//! not inlined) and, per call site, the profiles of the functions inlined
//! there (recursively).
//!
//! Every count addition saturates at `u64::MAX` (LLVM does the same and
//! reports `counter_overflow`).
//!
//! Note on what the file formats carry: head samples of *inlinees* are not
//! stored by either LLVM format (text or extbinary); only top-level functions
//! have a head count on disk. Line offsets must fit in 16 bits (LLVM masks
//! them with `0xffff`, and its binary reader silently stops reading a function
//! at a larger one), so the writers reject larger offsets; build locations
//! with [`LineLocation::from_lines`] to get LLVM's masking.

use std::collections::BTreeMap;
use std::fmt;

/// Largest line offset LLVM accepts (`isOffsetLegal`: `(L & 0xffff) == L`).
pub const MAX_LINE_OFFSET: u32 = 0xffff;

/// A location inside a function: line offset from the function's first line
/// (`DW_AT_decl_line` of its subprogram) and the DWARF discriminator.
/// Orders by offset, then discriminator (as LLVM's `LineLocation`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct LineLocation {
    pub line_offset: u32,
    pub discriminator: u32,
}

impl LineLocation {
    pub const fn new(line_offset: u32, discriminator: u32) -> Self {
        LineLocation {
            line_offset,
            discriminator,
        }
    }

    /// The location of `line` in a function starting at `func_start_line`,
    /// computed as LLVM does (`(line - start) & 0xffff`, wrapping, so a line
    /// before the start line maps to a large offset just like in clang).
    pub const fn from_lines(line: u32, func_start_line: u32, discriminator: u32) -> Self {
        LineLocation {
            line_offset: line.wrapping_sub(func_start_line) & MAX_LINE_OFFSET,
            discriminator,
        }
    }
}

impl fmt::Display for LineLocation {
    /// `offset` or `offset.discriminator` (discriminator 0 is not printed).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.discriminator == 0 {
            write!(f, "{}", self.line_offset)
        } else {
            write!(f, "{}.{}", self.line_offset, self.discriminator)
        }
    }
}

/// Samples at one location: the count and the not-inlined call targets seen
/// there with their counts.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct SampleRecord {
    pub count: u64,
    pub call_targets: BTreeMap<String, u64>,
}

impl SampleRecord {
    /// Add to the count (saturating).
    pub fn add_count(&mut self, n: u64) {
        self.count = self.count.saturating_add(n);
    }

    /// Add to a call target's count (saturating), creating it.
    pub fn add_call_target(&mut self, callee: &str, n: u64) {
        match self.call_targets.get_mut(callee) {
            Some(c) => *c = c.saturating_add(n),
            None => {
                self.call_targets.insert(callee.to_owned(), n);
            }
        }
    }

    /// Call targets in the order LLVM writes them: count descending, then
    /// name ascending (byte order).
    pub fn sorted_call_targets(&self) -> Vec<(&str, u64)> {
        let mut v: Vec<(&str, u64)> = self
            .call_targets
            .iter()
            .map(|(k, &c)| (k.as_str(), c))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        v
    }

    /// Merge another record into this one (counts add, saturating).
    pub fn merge(&mut self, other: &SampleRecord) {
        self.add_count(other.count);
        for (name, &c) in &other.call_targets {
            self.add_call_target(name, c);
        }
    }
}

/// The profile of one function, top-level or inlined at a call site.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct FunctionSamples {
    pub name: String,
    pub total_samples: u64,
    pub head_samples: u64,
    pub body: BTreeMap<LineLocation, SampleRecord>,
    /// Inlinee profiles: call site -> callee name -> callee profile.
    pub callsites: BTreeMap<LineLocation, BTreeMap<String, FunctionSamples>>,
}

impl FunctionSamples {
    pub fn new(name: impl Into<String>) -> Self {
        FunctionSamples {
            name: name.into(),
            ..Default::default()
        }
    }

    pub fn add_total(&mut self, n: u64) {
        self.total_samples = self.total_samples.saturating_add(n);
    }

    pub fn add_head(&mut self, n: u64) {
        self.head_samples = self.head_samples.saturating_add(n);
    }

    /// Add `n` samples at `loc` (creating the body record).
    pub fn add_body(&mut self, loc: LineLocation, n: u64) {
        self.body.entry(loc).or_default().add_count(n);
    }

    pub fn body_count(&self, loc: LineLocation) -> Option<u64> {
        self.body.get(&loc).map(|r| r.count)
    }

    /// Add `n` calls to `callee` at `loc` (creating the body record with count
    /// 0 if needed, as LLVM's `addCalledTargetSamples` does).
    pub fn add_call_target(&mut self, loc: LineLocation, callee: &str, n: u64) {
        self.body.entry(loc).or_default().add_call_target(callee, n);
    }

    /// The profile of `callee` inlined at `loc`, created (with its name) if
    /// missing.
    pub fn inlinee_mut(&mut self, loc: LineLocation, callee: &str) -> &mut FunctionSamples {
        let m = self.callsites.entry(loc).or_default();
        if !m.contains_key(callee) {
            m.insert(callee.to_owned(), FunctionSamples::new(callee));
        }
        m.get_mut(callee).expect("just inserted")
    }

    pub fn inlinee(&self, loc: LineLocation, callee: &str) -> Option<&FunctionSamples> {
        self.callsites.get(&loc).and_then(|m| m.get(callee))
    }

    /// Merge `other` into this profile: totals, heads, body counts, call
    /// targets and inlinees add (as `FunctionSamples::merge` in LLVM).
    pub fn merge(&mut self, other: &FunctionSamples) {
        self.add_total(other.total_samples);
        self.add_head(other.head_samples);
        for (loc, rec) in &other.body {
            self.body.entry(*loc).or_default().merge(rec);
        }
        for (loc, callees) in &other.callsites {
            for (name, fs) in callees {
                self.inlinee_mut(*loc, name).merge(fs);
            }
        }
    }

    /// Largest body count in this function and its inlinees.
    pub fn max_count(&self) -> u64 {
        let own = self.body.values().map(|r| r.count).max().unwrap_or(0);
        self.callsites
            .values()
            .flat_map(|m| m.values())
            .map(|f| f.max_count())
            .fold(own, u64::max)
    }

    /// Number of inlinee profiles, recursively.
    pub fn num_inlinees(&self) -> usize {
        self.callsites
            .values()
            .flat_map(|m| m.values())
            .map(|f| 1 + f.num_inlinees())
            .sum()
    }

    /// Visit this function and every inlinee, depth first (callsites in
    /// location order, callees in name order), with the nesting depth
    /// (0 for `self`).
    pub fn visit<'a>(&'a self, f: &mut impl FnMut(&'a FunctionSamples, usize)) {
        fn go<'a>(
            fs: &'a FunctionSamples,
            d: usize,
            f: &mut impl FnMut(&'a FunctionSamples, usize),
        ) {
            f(fs, d);
            for m in fs.callsites.values() {
                for c in m.values() {
                    go(c, d + 1, f);
                }
            }
        }
        go(self, 0, f)
    }
}

/// A whole sample profile: top-level functions by name.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct Profile {
    pub functions: BTreeMap<String, FunctionSamples>,
    /// The discriminators are flow-sensitive (clang's `-enable-fs-discriminator`, as
    /// kbuild's CONFIG_AUTOFDO_CLANG builds): kept whole, not decoded into a base and a
    /// duplication factor. Extbinary records it in the summary section's flags (the text
    /// format cannot).
    pub fs_discriminators: bool,
}

impl Profile {
    pub fn new() -> Self {
        Self::default()
    }

    /// The top-level function `name`, created (with its name) if missing.
    pub fn function_mut(&mut self, name: &str) -> &mut FunctionSamples {
        if !self.functions.contains_key(name) {
            self.functions
                .insert(name.to_owned(), FunctionSamples::new(name));
        }
        self.functions.get_mut(name).expect("just inserted")
    }

    /// Body locations with a non-zero discriminator, inlinees included: none means the
    /// binary was built without discriminators (clang's -fdebug-info-for-profiling).
    pub fn locations_with_discriminators(&self) -> usize {
        let mut n = 0;
        for f in self.functions.values() {
            f.visit(&mut |fs, _| {
                n += fs.body.keys().filter(|l| l.discriminator != 0).count();
            });
        }
        n
    }

    /// Merge `other` into this profile (counts add, saturating), like
    /// `llvm-profdata merge --sample`.
    pub fn merge(&mut self, other: &Profile) {
        for (name, fs) in &other.functions {
            match self.functions.get_mut(name) {
                Some(existing) => existing.merge(fs),
                None => {
                    self.functions.insert(name.clone(), fs.clone());
                }
            }
        }
    }

    /// Largest body count anywhere in the profile (inlinees included): the
    /// summary's "maximum block count".
    pub fn max_count(&self) -> u64 {
        self.functions
            .values()
            .map(|f| f.max_count())
            .max()
            .unwrap_or(0)
    }

    /// Sum of the top-level functions' total samples (saturating).
    pub fn total(&self) -> u64 {
        self.functions
            .values()
            .fold(0u64, |a, f| a.saturating_add(f.total_samples))
    }

    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }

    pub fn len(&self) -> usize {
        self.functions.len()
    }

    /// Top-level functions in the order LLVM writes them
    /// (`sortFuncProfiles`): total samples descending, then name ascending.
    pub fn sorted_functions(&self) -> Vec<&FunctionSamples> {
        let mut v: Vec<&FunctionSamples> = self.functions.values().collect();
        // The map iterates in name order, so a stable sort by count keeps
        // names ascending within equal totals.
        v.sort_by_key(|f| std::cmp::Reverse(f.total_samples));
        v
    }

    /// Check what the file formats cannot represent: line offsets above
    /// 0xffff, names that are empty or contain a NUL byte or a line break,
    /// and a top-level function whose map key differs from its name.
    pub fn validate(&self) -> Result<(), String> {
        fn check_name(n: &str, what: &str) -> Result<(), String> {
            if n.is_empty() {
                return Err(format!("empty {what} name"));
            }
            if n.bytes().any(|b| b == 0 || b == b'\n' || b == b'\r') {
                return Err(format!("{what} name {n:?} contains a NUL or line break"));
            }
            Ok(())
        }
        fn check_fs(fs: &FunctionSamples) -> Result<(), String> {
            check_name(&fs.name, "function")?;
            for (loc, rec) in &fs.body {
                if loc.line_offset > MAX_LINE_OFFSET {
                    return Err(format!(
                        "function {}: line offset {} exceeds 0xffff (LLVM masks offsets to 16 bits; use LineLocation::from_lines)",
                        fs.name, loc.line_offset
                    ));
                }
                for t in rec.call_targets.keys() {
                    check_name(t, "call target")?;
                }
            }
            for (loc, m) in &fs.callsites {
                if loc.line_offset > MAX_LINE_OFFSET {
                    return Err(format!(
                        "function {}: call site line offset {} exceeds 0xffff",
                        fs.name, loc.line_offset
                    ));
                }
                for (k, c) in m {
                    if *k != c.name {
                        return Err(format!(
                            "function {}: inlinee keyed {k:?} is named {:?}",
                            fs.name, c.name
                        ));
                    }
                    check_fs(c)?;
                }
            }
            Ok(())
        }
        for (k, fs) in &self.functions {
            if *k != fs.name {
                return Err(format!("function keyed {k:?} is named {:?}", fs.name));
            }
            check_fs(fs)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_saturate_and_create() {
        let mut p = Profile::new();
        let f = p.function_mut("main");
        f.add_total(u64::MAX);
        f.add_total(5);
        assert_eq!(f.total_samples, u64::MAX);
        f.add_body(LineLocation::new(1, 0), 3);
        f.add_call_target(LineLocation::new(2, 1), "callee", 7);
        assert_eq!(f.body_count(LineLocation::new(2, 1)), Some(0));
        let i = f.inlinee_mut(LineLocation::new(3, 0), "inl");
        assert_eq!(i.name, "inl");
        i.add_body(LineLocation::new(0, 0), 9);
        assert_eq!(p.max_count(), 9);
        let q = p.clone();
        p.merge(&q);
        let f = &p.functions["main"];
        assert_eq!(f.body_count(LineLocation::new(1, 0)), Some(6));
        assert_eq!(f.body[&LineLocation::new(2, 1)].call_targets["callee"], 14);
        assert_eq!(p.max_count(), 18);
    }

    #[test]
    fn from_lines_masks_like_llvm() {
        assert_eq!(LineLocation::from_lines(12, 10, 0).line_offset, 2);
        assert_eq!(LineLocation::from_lines(9, 10, 0).line_offset, 0xffff);
        assert_eq!(LineLocation::new(3, 2).to_string(), "3.2");
        assert_eq!(LineLocation::new(3, 0).to_string(), "3");
    }

    #[test]
    fn sort_order() {
        let mut p = Profile::new();
        p.function_mut("b").add_total(10);
        p.function_mut("a").add_total(10);
        p.function_mut("c").add_total(20);
        let names: Vec<_> = p
            .sorted_functions()
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(names, ["c", "a", "b"]);
        let mut r = SampleRecord::default();
        r.add_call_target("z", 5);
        r.add_call_target("a", 1);
        r.add_call_target("b", 5);
        assert_eq!(r.sorted_call_targets(), vec![("b", 5), ("z", 5), ("a", 1)]);
    }
}
